"""Continuous and burst traffic: one trial each, reported with VSPERF's keys."""

from __future__ import annotations

import pytest
from dutsim import SimDut

from vsperf.search.config import ContinuousConfig
from vsperf.search.continuous import burst, rfc2544_continuous
from vsperf.search.measurer import TrialResult
from vsperf.traffic import Traffic
from vsperf.units import l2_mbps

TRAFFIC = Traffic(traffic_type="rfc2544_continuous", frame_size_bytes=512, bidir=False)
LINE = TRAFFIC.line_rate_fps  # one 10 GbE port at 512 B: 2,349,624 fps


def test_continuous_at_rate_below_capacity() -> None:
    seen: list[TrialResult] = []
    dut = SimDut(LINE)
    out = rfc2544_continuous(dut, TRAFFIC, ContinuousConfig(duration_s=20.0, rate_percent=50.0), seen.append)
    [(kind, rate_fps, duration_s)] = dut.calls
    assert (kind, duration_s) == ("rate", 20.0)
    assert rate_fps == pytest.approx(LINE / 2)
    assert out.trials == tuple(seen)
    assert out.trials[0].purpose == "continuous"
    m = out.metrics
    assert m["tx_rate_percent"] == pytest.approx(50.0)
    assert m["throughput_rx_fps"] == pytest.approx(LINE / 2)
    assert m["throughput_rx_mbps"] == pytest.approx(l2_mbps(LINE / 2, 512))
    assert m["frame_loss_percent"] == 0.0
    assert m["avg_latency_ns"] == 2000.0
    assert m["type"] == "rfc2544_continuous"
    assert m["packet_size"] == 512
    assert out.details["trial_time_s"] == 20.0
    assert out.anomalies == ()


def test_continuous_above_capacity_reports_loss() -> None:
    out = rfc2544_continuous(
        SimDut(LINE * 0.6), TRAFFIC, ContinuousConfig(duration_s=10.0, rate_percent=100.0)
    )
    assert out.metrics["throughput_rx_percent"] == pytest.approx(60.0, abs=1e-3)
    assert out.metrics["frame_loss_percent"] == pytest.approx(40.0, abs=1e-3)


def test_continuous_under_delivery_is_flagged() -> None:
    dut = SimDut(LINE, generator_max_fps=LINE * 0.3)
    out = rfc2544_continuous(dut, TRAFFIC, ContinuousConfig(duration_s=10.0, rate_percent=80.0))
    assert out.metrics["tx_rate_percent"] == pytest.approx(30.0)
    assert out.metrics["frame_loss_percent"] == 0.0
    assert len(out.anomalies) == 1 and "under-delivered" in out.anomalies[0]


def test_burst_counts_and_keys() -> None:
    dut = SimDut(LINE * 0.5, buffer_frames=100)
    out = burst(dut, TRAFFIC, 1000)
    m = out.metrics
    # 1000 frames at line rate into a DUT at half of it: 500 queue up, 100 fit, 400 are lost.
    assert m["tx_frames"] == 1000
    assert m["rx_frames"] == 600
    assert m["tx_bytes"] == 512_000
    assert m["rx_bytes"] == 600 * 512
    assert m["frame_loss_percent"] == pytest.approx(40.0)
    assert m["payload_err"] is None and m["seq_err"] is None
    assert m["type"] == "burst"
    assert out.trials[0].purpose == "burst"


def test_burst_needs_a_frame() -> None:
    with pytest.raises(Exception, match="burst_size"):
        burst(SimDut(LINE), TRAFFIC, 0)
