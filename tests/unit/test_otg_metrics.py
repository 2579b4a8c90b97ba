"""From OTG flow metrics to a TrialResult (vsperf.trafficgen.otg.metrics)."""

from __future__ import annotations

import json

import pytest

from vsperf.search.measurer import FLAG_RX_EXCEEDS_TX, FLAG_UNDER_DELIVERY
from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort
from vsperf.traffic.streams import directions
from vsperf.trafficgen.otg.client import new_api
from vsperf.trafficgen.otg.flows import burst_plans, rate_plans
from vsperf.trafficgen.otg.metrics import FlowCounts, flow_counts, trial_result

PORTS = (GenPort("n0", "g0", "02:00:00:00:00:01", "198.18.0.1"), GenPort("n1", "g1", "02:00:00:00:00:02", "198.18.1.1"))
TRAFFIC = Traffic()
PLANS = rate_plans(directions(TRAFFIC, PORTS), 2000.0, 1.0)  # 1000 pps, 1000 frames per flow


def counts(name: str, tx: int, rx: int, rate: float, lat: tuple[float, float, float] | None = (1e3, 2e3, 4e3)
           ) -> FlowCounts:
    low, avg, high = lat if lat else (None, None, None)
    return FlowCounts(name, "stopped", tx, rx, rate, low, avg, high)


def test_counters_loss_and_frame_weighted_latency() -> None:
    result = trial_result("rate", TRAFFIC, PLANS, [counts("p0>p1", 1000, 900, 1000.0, (1e3, 2e3, 4e3)),
                                                   counts("p1>p0", 1000, 300, 1000.0, (5e2, 6e3, 9e3))],
                          2000.0, 1.0)
    assert (result.tx_frames, result.rx_frames, result.loss_frames) == (2000, 1200, 800)
    assert result.actual_tx_rate_fps == 2000.0 and result.flags == ()
    assert result.latency is not None
    assert (result.latency.min_ns, result.latency.max_ns) == (5e2, 9e3)
    assert result.latency.avg_ns == pytest.approx((900 * 2e3 + 300 * 6e3) / 1200)
    assert result.latency.samples == 1200


def test_a_slow_generator_is_flagged_not_counted_as_loss() -> None:
    slow = trial_result("rate", TRAFFIC, PLANS, [counts("p0>p1", 1000, 1000, 900.0),
                                                 counts("p1>p0", 1000, 1000, 1000.0)], 2000.0, 1.0)
    assert FLAG_UNDER_DELIVERY in slow.flags and slow.loss_frames == 0
    short = trial_result("rate", TRAFFIC, PLANS, [counts("p0>p1", 999, 999, 1000.0),
                                                  counts("p1>p0", 1000, 1000, 1000.0)], 2000.0, 1.0)
    assert FLAG_UNDER_DELIVERY in short.flags


def test_rounding_to_whole_pps_is_not_under_delivery() -> None:
    plans = rate_plans(directions(TRAFFIC, PORTS), 2001.0, 1.0)  # 1000.5 -> 1000 pps per flow
    result = trial_result("rate", TRAFFIC, plans, [counts(p.name, p.frames, p.frames, 1000.0) for p in plans],
                          2001.0, 1.0)
    assert result.flags == () and result.requested_rate_fps == 2001.0


def test_a_controller_reporting_no_rate_after_stop_is_taken_at_its_schedule() -> None:
    result = trial_result("rate", TRAFFIC, PLANS, [counts(p.name, p.frames, p.frames, 0.0) for p in PLANS],
                          2000.0, 1.0)
    assert result.actual_tx_rate_fps == 2000.0 and result.flags == ()


def test_burst_duration_is_measured_and_rx_beyond_tx_is_flagged() -> None:
    plans = burst_plans(directions(TRAFFIC, PORTS), 1000)
    result = trial_result("burst", TRAFFIC, plans, [counts("p0>p1", 500, 501, 1e6, None),
                                                    counts("p1>p0", 500, 500, 1e6, None)],
                          TRAFFIC.line_rate_fps, 0.0)
    assert result.duration_s == pytest.approx(1000 / 2e6)
    assert FLAG_RX_EXCEEDS_TX in result.flags and result.latency is None


def test_missing_flow_metrics_are_an_error() -> None:
    with pytest.raises(ValueError, match="no metrics for flow"):
        trial_result("rate", TRAFFIC, PLANS, [counts("p0>p1", 1, 1, 1.0)], 2000.0, 1.0)


def test_snappi_flow_metric_is_read() -> None:
    pytest.importorskip("snappi", reason="pip install 'vsperf[otg]'")
    reply = new_api().metrics_response()
    reply.deserialize(json.dumps({"choice": "flow_metrics", "flow_metrics": [
        {"name": "f", "transmit": "stopped", "frames_tx": "10", "frames_rx": "9", "frames_tx_rate": 5.0,
         "latency": {"minimum_ns": 1.0, "average_ns": 2.0, "maximum_ns": 3.0}},
        {"name": "g", "transmit": "started"}]}))
    first, second = (flow_counts(m) for m in reply.flow_metrics)
    assert first == FlowCounts("f", "stopped", 10, 9, 5.0, 1.0, 2.0, 3.0)
    assert second == FlowCounts("g", "started", 0, 0, 0.0)
