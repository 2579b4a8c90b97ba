"""Parameters of the searches, validated once, built from VSPERF's setting names.

Each config is a frozen dataclass that checks itself in `__post_init__` and names the setting
it came from in its error message. `*_from_settings` read a plain mapping of settings (the
run's typed configuration, or a dict in tests); a missing setting takes the default in
`SEARCH_SETTING_DEFAULTS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from vsperf.errors import ConfigError
from vsperf.traffic import Traffic

# Setting name -> default. The configuration schema declares the same names and defaults.
SEARCH_SETTING_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {
        "TRAFFICGEN_DURATION": 30.0,  # s, one search trial (and the longest back-to-back burst)
        "TRAFFICGEN_LOSSRATE": 0.0,  # %, loss a throughput trial may have and still pass
        "TRAFFICGEN_RFC2544_TESTS": 1,  # repetitions of a whole search
        "TRAFFICGEN_RFC2544_MIN_RATE_PERCENT": 0.0,  # % of line rate, lower bound of the search
        "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT": 100.0,  # % of line rate, first trial
        "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT": 0.1,  # % of line rate, search stops at this width
        "TRAFFICGEN_LEARNING_DURATION_S": 0.0,  # s of learning traffic before the search; 0: none
        "TRAFFICGEN_RFC2544_VERIFY": False,  # confirm the answer with one long trial
        "TRAFFICGEN_RFC2544_VERIFY_DURATION_S": 60.0,  # s, the verification trial (RFC 2544: >= 60)
        "TRAFFICGEN_B2B_GRANULARITY_FRAMES": 1,  # frames, back-to-back search stops at this width
    }
)

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
        setting = _FIELD_SETTING.get(field_name, field_name)
        raise ConfigError(f"{setting} ({field_name}) must be {rule}, got {value!r}")


@dataclass(frozen=True)
class ThroughputSearchConfig:
    """RFC 2544 throughput: binary search of the highest rate losing at most `loss_rate_percent`."""

    duration_s: float = 30.0  # length of one search trial
    loss_rate_percent: float = 0.0  # a trial passes when its loss is <= this
    min_rate_percent: float = 0.0  # lower bound of the search, % of line rate
    max_rate_percent: float = 100.0  # upper bound and first trial, % of line rate
    resolution_percent: float = 0.1  # stop when the bounds are this close, % of line rate
    repetitions: int = 1  # whole searches run; the answer is their average
    learning_duration_s: float = 0.0  # learning trial before the search (0: none)
    verify: bool = False  # confirm the answer with one trial of verify_duration_s
    verify_duration_s: float = 60.0  # length of the verification trial

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

    duration_s: float = 30.0  # the longest burst tried is line rate * duration_s frames
    granularity_frames: int = 1  # stop when the bounds are this close, frames
    repetitions: int = 1  # whole searches run; the answer is their average

    def __post_init__(self) -> None:
        _check(self.duration_s > 0, "duration_s", self.duration_s, "> 0")
        _check(self.granularity_frames >= 1, "granularity_frames", self.granularity_frames, ">= 1")
        _check(self.repetitions >= 1, "repetitions", self.repetitions, ">= 1")


@dataclass(frozen=True)
class ContinuousConfig:
    """Continuous traffic: one trial at a fixed rate."""

    duration_s: float = 30.0  # length of the trial
    rate_percent: float = 100.0  # offered load, % of line rate

    def __post_init__(self) -> None:
        _check(self.duration_s > 0, "duration_s", self.duration_s, "> 0")
        _check(0 < self.rate_percent <= 100, "rate_percent", self.rate_percent, "in (0, 100]")


@dataclass(frozen=True)
class BurstConfig:
    """Burst traffic: one burst of a fixed number of frames at line rate."""

    frames: int = 100  # aggregate frames in the burst

    def __post_init__(self) -> None:
        _check(self.frames >= 1, "frames", self.frames, ">= 1")


def _number(settings: Mapping[str, Any], name: str) -> float:
    value = settings.get(name, SEARCH_SETTING_DEFAULTS[name])
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{name} must be a number, got {value!r}")
    return float(value)


def _integer(settings: Mapping[str, Any], name: str) -> int:
    value = settings.get(name, SEARCH_SETTING_DEFAULTS[name])
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    return int(value)


def _flag(settings: Mapping[str, Any], name: str) -> bool:
    value = settings.get(name, SEARCH_SETTING_DEFAULTS[name])
    if not isinstance(value, bool):
        raise ConfigError(f"{name} must be true or false, got {value!r}")
    return value


def throughput_config_from_settings(settings: Mapping[str, Any]) -> ThroughputSearchConfig:
    """The throughput search as the settings ask for it."""
    return ThroughputSearchConfig(
        duration_s=_number(settings, "TRAFFICGEN_DURATION"),
        loss_rate_percent=_number(settings, "TRAFFICGEN_LOSSRATE"),
        min_rate_percent=_number(settings, "TRAFFICGEN_RFC2544_MIN_RATE_PERCENT"),
        max_rate_percent=_number(settings, "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT"),
        resolution_percent=_number(settings, "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT"),
        repetitions=_integer(settings, "TRAFFICGEN_RFC2544_TESTS"),
        learning_duration_s=_number(settings, "TRAFFICGEN_LEARNING_DURATION_S"),
        verify=_flag(settings, "TRAFFICGEN_RFC2544_VERIFY"),
        verify_duration_s=_number(settings, "TRAFFICGEN_RFC2544_VERIFY_DURATION_S"),
    )


def back2back_config_from_settings(settings: Mapping[str, Any]) -> Back2BackConfig:
    """The back-to-back search as the settings ask for it."""
    return Back2BackConfig(
        duration_s=_number(settings, "TRAFFICGEN_DURATION"),
        granularity_frames=_integer(settings, "TRAFFICGEN_B2B_GRANULARITY_FRAMES"),
        repetitions=_integer(settings, "TRAFFICGEN_RFC2544_TESTS"),
    )


def _traffic_setting(settings: Mapping[str, Any], key: str, field_name: str, default: Any) -> Any:
    """A value of the TRAFFIC setting, whether it is still a mapping or already a `Traffic`."""
    traffic = settings.get("TRAFFIC")
    if isinstance(traffic, Traffic):
        return getattr(traffic, field_name)
    if isinstance(traffic, Mapping):
        return traffic.get(key, traffic.get(field_name, default))
    return default


def continuous_config_from_settings(
    settings: Mapping[str, Any], traffic: Traffic | None = None
) -> ContinuousConfig:
    """Continuous traffic: TRAFFICGEN_DURATION at TRAFFIC's frame_rate (`traffic` wins if given)."""
    if traffic is not None:
        rate: Any = traffic.frame_rate_percent
    else:
        rate = _traffic_setting(settings, "frame_rate", "frame_rate_percent", 100.0)
    if isinstance(rate, bool) or not isinstance(rate, int | float):
        raise ConfigError(f"TRAFFIC frame_rate must be a number, got {rate!r}")
    return ContinuousConfig(duration_s=_number(settings, "TRAFFICGEN_DURATION"), rate_percent=float(rate))


def burst_config_from_settings(settings: Mapping[str, Any], traffic: Traffic | None = None) -> BurstConfig:
    """Burst traffic: TRAFFIC's burst_size frames (`traffic` wins if given)."""
    if traffic is not None:
        frames: Any = traffic.burst_frames
    else:
        frames = _traffic_setting(settings, "burst_size", "burst_frames", 100)
    if isinstance(frames, bool) or not isinstance(frames, int):
        raise ConfigError(f"TRAFFIC burst_size must be an integer, got {frames!r}")
    return BurstConfig(frames=frames)
