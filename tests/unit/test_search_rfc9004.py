"""RFC 9004 back-to-back: only below line rate, with the corrected buffer time."""

from __future__ import annotations

import pytest
from dutsim import SimDut, lossless_burst
from search_shipped import shipped
from settings_util import make_settings

from vsperf.search.config import Back2BackConfig
from vsperf.search.rfc9004 import rfc9004_back2back, rfc9004_config_from_settings
from vsperf.search.select import KnownThroughput
from vsperf.traffic import Traffic

T64 = Traffic(traffic_type="rfc9004_back2back", frame_size_bytes=64)
LINE = T64.line_rate_fps


def test_n_searches_and_corrected_buffer_time() -> None:
    cfg = shipped(Back2BackConfig, duration_s=1, granularity_frames=1, repetitions=3)
    out = rfc9004_back2back(SimDut(0.5 * LINE, buffer_frames=1000), T64, cfg,
                            lambda: KnownThroughput(0.5 * LINE, "given"))
    truth = lossless_burst(0.5 * LINE, LINE, 1000)
    m = out.metrics
    assert truth - 1 <= m["b2b_frames"] <= truth  # type: ignore[operator]
    assert len(out.details["repetitions"]) == 3
    assert m["b2b_corrected_buffer_time_s"] == pytest.approx(m["b2b_buffer_time_s"] * 0.5)  # type: ignore[operator]
    assert m["throughput_fps"] == 0.5 * LINE and m["type"] == "rfc9004_back2back"
    assert out.details["throughput"]["source"] == "given"


def test_frame_size_at_line_rate_is_reported_not_measured() -> None:
    dut = SimDut(2 * LINE)
    out = rfc9004_back2back(dut, T64, shipped(Back2BackConfig), lambda: KnownThroughput(LINE, "given"))
    assert dut.calls == [] and out.metrics["b2b_frames"] is None
    assert "buffers nothing" in out.anomalies[-1]


def test_rfc2544_asks_for_50_searches() -> None:
    assert rfc9004_config_from_settings(make_settings({})).repetitions == 50
