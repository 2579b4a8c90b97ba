"""RFC 2544 system recovery: overload, drop, date the last lost frame."""

from __future__ import annotations

import pytest
from dutsim import SimDut
from dutsim_events import EventDut
from search_shipped import shipped
from settings_util import make_settings

from vsperf.errors import ConfigError, TrafficGenError
from vsperf.search.recovery import RecoveryConfig, recovery_config_from_settings, rfc2544_recovery
from vsperf.search.select import KnownThroughput
from vsperf.traffic import Traffic

T64 = Traffic(traffic_type="rfc2544_recovery", frame_size_bytes=64)
LINE = T64.line_rate_fps
CFG = shipped(RecoveryConfig, overload_percent=110.0, overload_s=60, drop_percent=50.0, after_s=30, repetitions=2)


def at(rate: float) -> KnownThroughput:
    return KnownThroughput(rate, "given")


def test_recovery_time_of_a_dut_that_stalls_after_overload() -> None:
    dut = EventDut(0.4 * LINE, recovery_s=0.75)
    out = rfc2544_recovery(dut, T64, CFG, lambda: at(0.4 * LINE))
    m = out.metrics
    assert (m["recovery_time_s"], m["recovery_time_s_min"], m["recovery_time_s_max"]) == (0.75, 0.75, 0.75)
    assert m["overload_rate_fps"] == pytest.approx(0.44 * LINE)  # 110 % of throughput
    assert m["recovery_rate_fps"] == pytest.approx(0.22 * LINE)  # 50 % of the overload
    assert m["recovery_lost_frames"] == pytest.approx(int(0.75 * 0.22 * LINE), abs=1)
    assert [t.purpose for t in out.trials] == [
        "recovery 1/2: overload", "recovery 1/2: after the drop", "recovery 2/2: overload",
        "recovery 2/2: after the drop"]
    assert [t.duration_s for t in out.trials] == [60, 30, 60, 30]
    assert out.anomalies == ()


def test_defaults_are_rfc2544s() -> None:
    cfg = recovery_config_from_settings(make_settings({}))
    assert (cfg.overload_percent, cfg.overload_s, cfg.drop_percent) == (110.0, 60.0, 50.0)
    with pytest.raises(ConfigError, match="TRAFFICGEN_RECOVERY_OVERLOAD_PERCENT"):
        shipped(RecoveryConfig, overload_percent=100)


def test_tail_drop_dut_recovers_at_once() -> None:
    out = rfc2544_recovery(EventDut(0.4 * LINE), T64, CFG, lambda: at(0.4 * LINE))
    assert out.metrics["recovery_time_s"] == 0.0 and out.metrics["recovery_frame_loss_percent"] == 0.0


def test_recovery_longer_than_the_trial_is_a_lower_bound() -> None:
    out = rfc2544_recovery(EventDut(0.4 * LINE, recovery_s=100), T64, CFG, lambda: at(0.4 * LINE))
    assert out.metrics["recovery_time_s"] == 30.0
    assert any("lower bound" in a for a in out.anomalies)


def test_overload_that_did_not_overload_is_an_anomaly() -> None:
    out = rfc2544_recovery(EventDut(0.5 * LINE), T64, CFG, lambda: at(0.4 * LINE))  # 44 % < capacity
    assert any("was not overloaded" in a for a in out.anomalies)


def test_generator_short_of_the_overload_is_an_anomaly() -> None:
    dut = EventDut(0.4 * LINE, generator_max_fps=0.41 * LINE)
    out = rfc2544_recovery(dut, T64, CFG, lambda: at(0.4 * LINE))
    assert any("may not have been overloaded" in a for a in out.anomalies)


def test_throughput_at_line_rate_cannot_be_overloaded() -> None:
    dut = EventDut(2 * LINE)
    out = rfc2544_recovery(dut, T64, CFG, lambda: at(LINE))
    assert out.metrics["recovery_time_s"] is None and dut.calls == []
    assert "cannot be overloaded" in out.anomalies[-1]


def test_generator_without_the_capability_fails_before_any_trial() -> None:
    dut = SimDut(0.4 * LINE)
    asked: list[bool] = []
    with pytest.raises(TrafficGenError, match="generator SimDut cannot run rfc2544_recovery trials"):
        rfc2544_recovery(dut, T64, CFG, lambda: asked.append(True) or at(0.4 * LINE))  # type: ignore[func-returns-value]
    assert dut.calls == [] and asked == []  # not even the throughput search ran
