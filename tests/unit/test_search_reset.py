"""RFC 2544 reset with RFC 6201's timestamp and frame-loss methods."""

from __future__ import annotations

import pytest
from dutsim import SimDut
from dutsim_events import EventDut, FakeDutControl
from search_shipped import shipped
from settings_util import make_settings

from vsperf.errors import ConfigError, TrafficGenError
from vsperf.search.reset import ResetConfig, reset_config_from_settings, rfc2544_reset
from vsperf.search.select import KnownThroughput
from vsperf.traffic import Traffic

T64 = Traffic(traffic_type="rfc2544_reset", frame_size_bytes=64)
LINE = T64.line_rate_fps
CFG = shipped(ResetConfig, duration_s=20, reset_at_s=5, repetitions=2)


def at(rate: float) -> KnownThroughput:
    return KnownThroughput(rate, "given")


def test_reset_time_by_both_methods_and_the_dut_restarted() -> None:
    dut, control = EventDut(0.4 * LINE, reset_s=1.5, needs_reset_action=True), FakeDutControl()
    out = rfc2544_reset(dut, T64, CFG, lambda: at(0.3 * LINE), dut=control)
    m = out.metrics
    assert (m["reset_time_s"], m["reset_time_s_min"], m["reset_time_s_max"]) == (1.5, 1.5, 1.5)
    assert m["reset_time_frame_loss_s"] == pytest.approx(1.5, abs=1e-6)
    assert m["tx_rate_percent"] == pytest.approx(30.0)
    assert control.restarts == 2 and dut.resets == 2
    assert [t.purpose for t in out.trials] == ["reset 1/2", "reset 2/2"]
    assert out.details["parameters"]["reset_action"] == "given" and out.anomalies == ()


def test_a_real_generator_needs_a_way_to_reset_the_dut() -> None:
    with pytest.raises(TrafficGenError, match="no way to reset"):
        rfc2544_reset(EventDut(LINE, needs_reset_action=True), T64, CFG, lambda: at(0.3 * LINE))


def test_dut_that_does_not_come_back_gives_a_lower_bound() -> None:
    out = rfc2544_reset(EventDut(LINE, reset_s=100), T64, CFG, lambda: at(0.3 * LINE))
    assert out.metrics["reset_time_s"] == 15.0
    assert any("lower bound" in a for a in out.anomalies)


def test_capability_checked_first_and_settings() -> None:
    dut = SimDut(LINE)
    with pytest.raises(TrafficGenError, match="cannot run rfc2544_reset trials"):
        rfc2544_reset(dut, T64, CFG, lambda: at(0.3 * LINE))
    assert dut.calls == []
    rfc2544 = shipped(ResetConfig, duration_s=60.0, reset_at_s=10.0, repetitions=3)
    assert reset_config_from_settings(make_settings({})) == rfc2544
    with pytest.raises(ConfigError, match="TRAFFICGEN_RESET_AT_S"):
        shipped(ResetConfig, duration_s=10, reset_at_s=10)
    none = rfc2544_reset(EventDut(LINE), T64, CFG, lambda: at(0.0))
    assert none.metrics["reset_time_s"] is None
