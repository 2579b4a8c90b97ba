"""Search configuration: validation and VSPERF's setting names."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from search_shipped import shipped
from settings_util import make_settings

from vsperf.errors import ConfigError
from vsperf.search.config import (
    Back2BackConfig,
    BurstConfig,
    ContinuousConfig,
    ThroughputSearchConfig,
    back2back_config_from_settings,
    burst_config_from_settings,
    check_field,
    config_from_settings,
    continuous_config_from_settings,
    from_setting,
    setting,
    throughput_config_from_settings,
)
from vsperf.traffic import Traffic


def raw(**values: object) -> dict[str, object]:
    """The shipped settings with `values` on top, unchecked (to reach the search config's own checks)."""
    return {**make_settings(), **values}


def test_defaults_come_from_the_shipped_conf() -> None:
    shipped = make_settings()
    cfg = throughput_config_from_settings(shipped)
    assert cfg.duration_s == shipped["TRAFFICGEN_DURATION"]
    assert cfg.resolution_percent == shipped["TRAFFICGEN_RFC2544_RESOLUTION_PERCENT"]
    assert back2back_config_from_settings(shipped).granularity_frames == 100  # conf's value, not a second default


def test_a_missing_setting_is_named() -> None:
    assert setting(make_settings(), "TRAFFICGEN_LOSSRATE") == 0.0  # conf's default
    with pytest.raises(ConfigError, match="TRAFFICGEN_LOSSRATE is not set"):
        throughput_config_from_settings({"TRAFFICGEN_DURATION": 30.0})  # no fallback defaults


def test_throughput_settings_are_read_by_vsperf_names() -> None:
    cfg = throughput_config_from_settings(make_settings(
        {
            "TRAFFICGEN_DURATION": 60,
            "TRAFFICGEN_LOSSRATE": 0.5,
            "TRAFFICGEN_RFC2544_TESTS": 3,
            "TRAFFICGEN_RFC2544_MIN_RATE_PERCENT": 5,
            "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT": 95.5,
            "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT": 0.5,
            "TRAFFICGEN_LEARNING_DURATION_S": 5,
            "TRAFFICGEN_RFC2544_VERIFY": True,
            "TRAFFICGEN_RFC2544_VERIFY_DURATION_S": 120,
        }
    ))
    assert cfg == ThroughputSearchConfig(60.0, 0.5, 5.0, 95.5, 0.5, 3, 5.0, True, 120.0)


def test_back2back_settings() -> None:
    cfg = back2back_config_from_settings(make_settings(
        {"TRAFFICGEN_DURATION": 2, "TRAFFICGEN_B2B_GRANULARITY_FRAMES": 100, "TRAFFICGEN_RFC2544_TESTS": 50}
    ))
    assert cfg == shipped(Back2BackConfig, duration_s=2.0, granularity_frames=100, repetitions=50)


def test_continuous_and_burst_from_traffic() -> None:
    traffic = Traffic(frame_rate_percent=25.0, burst_frames=777)
    assert continuous_config_from_settings(make_settings(TRAFFICGEN_DURATION=7), traffic) == ContinuousConfig(
        7.0, 25.0)
    assert burst_config_from_settings(traffic) == BurstConfig(777)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"TRAFFICGEN_DURATION": 0}, "TRAFFICGEN_DURATION"),
        ({"TRAFFICGEN_DURATION": "30"}, "TRAFFICGEN_DURATION must be a number"),
        ({"TRAFFICGEN_LOSSRATE": -1}, "TRAFFICGEN_LOSSRATE"),
        ({"TRAFFICGEN_LOSSRATE": True}, "TRAFFICGEN_LOSSRATE must be a number"),
        ({"TRAFFICGEN_RFC2544_TESTS": 0}, "TRAFFICGEN_RFC2544_TESTS"),
        ({"TRAFFICGEN_RFC2544_TESTS": 1.5}, "TRAFFICGEN_RFC2544_TESTS must be an integer"),
        ({"TRAFFICGEN_RFC2544_MAX_RATE_PERCENT": 101}, "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT"),
        (
            {"TRAFFICGEN_RFC2544_MIN_RATE_PERCENT": 60, "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT": 50},
            "TRAFFICGEN_RFC2544_MIN_RATE_PERCENT",
        ),
        ({"TRAFFICGEN_RFC2544_RESOLUTION_PERCENT": 0}, "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT"),
        ({"TRAFFICGEN_LEARNING_DURATION_S": -2}, "TRAFFICGEN_LEARNING_DURATION_S"),
        ({"TRAFFICGEN_RFC2544_VERIFY": "True"}, "TRAFFICGEN_RFC2544_VERIFY must be true or false"),
        ({"TRAFFICGEN_RFC2544_VERIFY_DURATION_S": 0}, "TRAFFICGEN_RFC2544_VERIFY_DURATION_S"),
    ],
)
def test_throughput_errors_name_the_setting(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        throughput_config_from_settings(raw(**settings))


def test_other_errors_name_the_setting() -> None:
    with pytest.raises(ConfigError, match="TRAFFICGEN_B2B_GRANULARITY_FRAMES"):
        back2back_config_from_settings(raw(TRAFFICGEN_B2B_GRANULARITY_FRAMES=0))
    with pytest.raises(ConfigError, match="frame_rate"):
        ContinuousConfig(duration_s=1.0, rate_percent=150.0)
    with pytest.raises(ConfigError, match="burst_size"):
        BurstConfig(frames=0)


def test_configs_are_frozen() -> None:
    cfg = throughput_config_from_settings(make_settings())
    with pytest.raises(AttributeError):
        cfg.duration_s = 1.0  # type: ignore[misc]


@dataclass(frozen=True)
class _Declared:
    duration_s: float = field(metadata=from_setting("TRAFFICGEN_DURATION"))
    repetitions: int = field(metadata=from_setting("TRAFFICGEN_RFC2544_TESTS"))
    verify: bool = field(metadata=from_setting("TRAFFICGEN_RFC2544_VERIFY"))
    given: str

    def __post_init__(self) -> None:
        check_field(self, "duration_s", self.duration_s > 0, "> 0")


def test_config_from_settings_reads_each_field_from_its_setting_by_its_type() -> None:
    settings = make_settings({"TRAFFICGEN_DURATION": 7, "TRAFFICGEN_RFC2544_TESTS": 2})
    cfg = config_from_settings(_Declared, settings, given="x")
    assert cfg == _Declared(7.0, 2, settings["TRAFFICGEN_RFC2544_VERIFY"], "x")
    assert isinstance(cfg.duration_s, float)
    with pytest.raises(ConfigError, match="TRAFFICGEN_RFC2544_TESTS must be an integer"):
        config_from_settings(_Declared, {**settings, "TRAFFICGEN_RFC2544_TESTS": 1.5}, given="x")
    with pytest.raises(ConfigError, match=r"^TRAFFICGEN_DURATION must be > 0, got 0.0$"):
        config_from_settings(_Declared, {**settings, "TRAFFICGEN_DURATION": 0}, given="x")
