"""Parameters of the searches, validated once, built from VSPERF's setting names.

Each config is a frozen dataclass that checks itself in `__post_init__` and names the setting
it came from in its error message. `*_from_settings` read complete settings (what
`vsperf.config.load_settings` returns: conf/*.yaml gives every setting its default, so nothing
here repeats a default); a missing setting is a ConfigError naming it. `number`, `integer`,
`flag`, `optional_number` and `check` are the readers every search config uses. A config whose
fields each come from one setting declares it once, in the field's metadata (`from_setting`): `config_from_settings`
builds it and `check_field` names that setting in its errors.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

from vsperf.errors import ConfigError
from vsperf.traffic import Traffic


def setting(settings: Mapping[str, Any], name: str) -> Any:
    """The value of `name`; a ConfigError naming it when the settings lack it (a run's settings
    are complete: conf/*.yaml gives every setting its default, and nothing here repeats one)."""
    try:
        return settings[name]
    except KeyError:
        raise ConfigError(
            f"{name} is not set: build settings with vsperf.config.load_settings (conf/*.yaml sets every default)"
        ) from None


def number(settings: Mapping[str, Any], name: str) -> float:
    """A numeric setting."""
    value = setting(settings, name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{name} must be a number, got {value!r}")
    return float(value)


def optional_number(settings: Mapping[str, Any], name: str) -> float | None:
    """A numeric setting that may be null."""
    return None if setting(settings, name) is None else number(settings, name)


def integer(settings: Mapping[str, Any], name: str) -> int:
    """An integer setting."""
    value = setting(settings, name)
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    return int(value)


def flag(settings: Mapping[str, Any], name: str) -> bool:
    """A true/false setting."""
    value = setting(settings, name)
    if not isinstance(value, bool):
        raise ConfigError(f"{name} must be true or false, got {value!r}")
    return value


def check(ok: bool, name: str, value: object, rule: str) -> None:
    """Raise a ConfigError naming the setting `name` unless `ok`."""
    if not ok:
        raise ConfigError(f"{name} must be {rule}, got {value!r}")


_SETTING = "vsperf_setting"  # field metadata key: the setting a config field is read from
_READERS: dict[str, Callable[[Mapping[str, Any], str], Any]] = {
    "float": number,
    "int": integer,
    "bool": flag,
    "float | None": optional_number,
}
C = TypeVar("C", bound="DataclassInstance")


def from_setting(name: str) -> dict[str, str]:
    """The metadata of a config field read from the setting `name`: `field(metadata=from_setting(name))`
    (see `config_from_settings`)."""
    return {_SETTING: name}


def config_from_settings(cls: type[C], settings: Mapping[str, Any], **given: Any) -> C:
    """`cls` with every field but those `given` read from its `from_setting` setting, by the
    reader of its type."""
    read = {f.name: _reader(f.type)(settings, f.metadata[_SETTING]) for f in fields(cls) if f.name not in given}
    return cls(**read, **given)


def _reader(annotation: object) -> Callable[[Mapping[str, Any], str], Any]:
    """The reader of a field's type (a string under `from __future__ import annotations`)."""
    name = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    return _READERS[name]


def check_field(config: DataclassInstance, field_name: str, ok: bool, rule: str) -> None:
    """`check` for the field `field_name` of `config`, naming the setting it is read from."""
    name = next(f.metadata[_SETTING] for f in fields(config) if f.name == field_name)
    check(ok, name, getattr(config, field_name), rule)


_FIELD_SETTING = {
    "duration_s": "TRAFFICGEN_DURATION",
    "loss_rate_percent": "TRAFFICGEN_LOSSRATE",
    "repetitions": "TRAFFICGEN_RFC2544_TESTS",
    "min_rate_percent": "TRAFFICGEN_RFC2544_MIN_RATE_PERCENT",
    "max_rate_percent": "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT",
    "resolution_percent": "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT",
    "learning_duration_s": "TRAFFICGEN_LEARNING_DURATION_S",
    "verify_duration_s": "TRAFFICGEN_RFC2544_VERIFY_DURATION_S",
    "granularity_frames": "TRAFFICGEN_B2B_GRANULARITY_FRAMES",
    "rate_percent": "TRAFFIC frame_rate",
    "frames": "TRAFFIC burst_size",
}


def _check(ok: bool, field_name: str, value: object, rule: str) -> None:
    if not ok:
        name = _FIELD_SETTING.get(field_name, field_name)
        raise ConfigError(f"{name} ({field_name}) must be {rule}, got {value!r}")


@dataclass(frozen=True)
class ThroughputSearchConfig:
    """RFC 2544 throughput: binary search of the highest rate losing at most `loss_rate_percent`."""

    duration_s: float  # length of one search trial
    loss_rate_percent: float  # a trial passes when its loss is <= this
    min_rate_percent: float  # lower bound of the search, % of line rate
    max_rate_percent: float  # upper bound and first trial, % of line rate
    resolution_percent: float  # stop when the bounds are this close, % of line rate
    repetitions: int  # whole searches run; the answer is their average
    learning_duration_s: float  # learning trial before the search (0: none)
    verify: bool  # confirm the answer with one trial of verify_duration_s
    verify_duration_s: float  # length of the verification trial

    def __post_init__(self) -> None:
        _check(self.duration_s > 0, "duration_s", self.duration_s, "> 0")
        _check(0 <= self.loss_rate_percent < 100, "loss_rate_percent", self.loss_rate_percent, "in [0, 100)")
        _check(0 < self.max_rate_percent <= 100, "max_rate_percent", self.max_rate_percent, "in (0, 100]")
        _check(
            0 <= self.min_rate_percent <= self.max_rate_percent,
            "min_rate_percent",
            self.min_rate_percent,
            f"in [0, max_rate_percent={self.max_rate_percent}]",
        )
        _check(
            0 < self.resolution_percent <= 100, "resolution_percent", self.resolution_percent, "in (0, 100]"
        )
        _check(self.repetitions >= 1, "repetitions", self.repetitions, ">= 1")
        _check(self.learning_duration_s >= 0, "learning_duration_s", self.learning_duration_s, ">= 0")
        _check(self.verify_duration_s > 0, "verify_duration_s", self.verify_duration_s, "> 0")


@dataclass(frozen=True)
class Back2BackConfig:
    """RFC 2544 / RFC 9004 back-to-back: longest lossless burst at line rate."""

    duration_s: float  # the longest burst tried is line rate * duration_s frames
    granularity_frames: int  # stop when the bounds are this close, frames
    repetitions: int  # whole searches run; the answer is their average

    def __post_init__(self) -> None:
        _check(self.duration_s > 0, "duration_s", self.duration_s, "> 0")
        _check(self.granularity_frames >= 1, "granularity_frames", self.granularity_frames, ">= 1")
        _check(self.repetitions >= 1, "repetitions", self.repetitions, ">= 1")


@dataclass(frozen=True)
class ContinuousConfig:
    """Continuous traffic: one trial at a fixed rate."""

    duration_s: float  # length of the trial
    rate_percent: float  # offered load, % of line rate

    def __post_init__(self) -> None:
        _check(self.duration_s > 0, "duration_s", self.duration_s, "> 0")
        _check(0 < self.rate_percent <= 100, "rate_percent", self.rate_percent, "in (0, 100]")


@dataclass(frozen=True)
class BurstConfig:
    """Burst traffic: one burst of a fixed number of frames at line rate."""

    frames: int  # aggregate frames in the burst

    def __post_init__(self) -> None:
        _check(self.frames >= 1, "frames", self.frames, ">= 1")


def throughput_config_from_settings(settings: Mapping[str, Any]) -> ThroughputSearchConfig:
    """The throughput search as the settings ask for it."""
    return ThroughputSearchConfig(
        duration_s=number(settings, "TRAFFICGEN_DURATION"),
        loss_rate_percent=number(settings, "TRAFFICGEN_LOSSRATE"),
        min_rate_percent=number(settings, "TRAFFICGEN_RFC2544_MIN_RATE_PERCENT"),
        max_rate_percent=number(settings, "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT"),
        resolution_percent=number(settings, "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT"),
        repetitions=integer(settings, "TRAFFICGEN_RFC2544_TESTS"),
        learning_duration_s=number(settings, "TRAFFICGEN_LEARNING_DURATION_S"),
        verify=flag(settings, "TRAFFICGEN_RFC2544_VERIFY"),
        verify_duration_s=number(settings, "TRAFFICGEN_RFC2544_VERIFY_DURATION_S"),
    )


def back2back_config_from_settings(settings: Mapping[str, Any]) -> Back2BackConfig:
    """The back-to-back search as the settings ask for it."""
    return Back2BackConfig(
        duration_s=number(settings, "TRAFFICGEN_DURATION"),
        granularity_frames=integer(settings, "TRAFFICGEN_B2B_GRANULARITY_FRAMES"),
        repetitions=integer(settings, "TRAFFICGEN_RFC2544_TESTS"),
    )


def continuous_config_from_settings(settings: Mapping[str, Any], traffic: Traffic) -> ContinuousConfig:
    """Continuous traffic: TRAFFICGEN_DURATION at the traffic's frame_rate (from TRAFFIC)."""
    return ContinuousConfig(duration_s=number(settings, "TRAFFICGEN_DURATION"), rate_percent=traffic.frame_rate_percent)


def burst_config_from_settings(traffic: Traffic) -> BurstConfig:
    """Burst traffic: the traffic's burst_size frames (from TRAFFIC)."""
    return BurstConfig(frames=traffic.burst_frames)
