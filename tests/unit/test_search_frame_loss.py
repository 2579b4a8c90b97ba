"""RFC 2544 frame loss rate: the curve from 100 % down."""

from __future__ import annotations

import pytest
from dutsim import SimDut
from search_shipped import shipped
from settings_util import make_settings

from vsperf.errors import ConfigError
from vsperf.search.frame_loss import FrameLossConfig, frame_loss_config_from_settings, rfc2544_frame_loss
from vsperf.traffic import Traffic

T64 = Traffic(traffic_type="rfc2544_frame_loss", frame_size_bytes=64)
LINE = T64.line_rate_fps


def test_steps_down_until_two_lossless_trials() -> None:
    out = rfc2544_frame_loss(SimDut(0.55 * LINE), T64, shipped(FrameLossConfig, duration_s=10))
    curve = out.details["curve"]
    assert [round(p["requested_percent"]) for p in curve] == [100, 90, 80, 70, 60, 50, 40]
    assert [round(p["frame_loss_percent"], 2) for p in curve][:2] == [45.0, round(100 * (1 - 0.55 / 0.9), 2)]
    m = out.metrics
    assert m["frame_loss_percent"] == pytest.approx(45.0)
    assert m["frame_loss_percent_at_90_percent"] == pytest.approx(100 * (1 - 0.55 / 0.9))
    assert m["frame_loss_percent_at_50_percent"] == 0.0 and m["frame_loss_percent_at_40_percent"] == 0.0
    assert m["max_zero_loss_rate_percent"] == pytest.approx(50.0)
    assert m["frame_loss_points"] == 7 and out.anomalies == ()


def test_finer_steps_and_a_line_rate_dut() -> None:
    out = rfc2544_frame_loss(SimDut(2 * LINE), T64, shipped(FrameLossConfig, duration_s=1, step_percent=5))
    assert [p["requested_percent"] for p in out.details["curve"]] == [100, 95]


def test_curve_that_never_gets_two_lossless_trials_says_so() -> None:
    out = rfc2544_frame_loss(SimDut(0.15 * LINE), T64, shipped(FrameLossConfig, duration_s=1))
    assert out.details["curve"][-1]["requested_percent"] == pytest.approx(10.0)
    assert any("without two successive trials" in a for a in out.anomalies)


def test_generator_short_of_line_rate_continues_below_what_it_sent() -> None:
    dut = SimDut(0.4 * LINE, generator_max_fps=0.73 * LINE)
    out = rfc2544_frame_loss(dut, T64, shipped(FrameLossConfig, duration_s=1))
    curve = out.details["curve"]
    assert curve[0]["offered_percent"] == pytest.approx(73.0)
    assert [round(p["requested_percent"]) for p in curve[1:3]] == [70, 60]
    assert "frame_loss_percent_at_73_percent" in out.metrics
    assert any("under-delivered" in a for a in out.anomalies)


def test_rfc2544_step_limit() -> None:
    assert frame_loss_config_from_settings(make_settings({})).step_percent == 10.0
    with pytest.raises(ConfigError, match="at most 10"):
        shipped(FrameLossConfig, step_percent=20)
