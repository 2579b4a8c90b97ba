"""The shared trial log and metric helpers."""

from __future__ import annotations

import pytest
from dutsim import SimDut

from vsperf.search.measurer import LatencyStats, TrialResult
from vsperf.search.trials import Anomalies, TrialLog, merge_latency, percent_of, rate_metrics
from vsperf.traffic import Traffic

TRAFFIC = Traffic(frame_size_bytes=1518)
LINE = TRAFFIC.line_rate_fps  # 2 x 812,743.8 fps


def test_trial_log_tags_keeps_and_reports() -> None:
    seen: list[TrialResult] = []
    log = TrialLog(SimDut(LINE), seen.append)
    a = log.rate(TRAFFIC, LINE / 2, 3.0, "learning")
    b = log.burst(TRAFFIC, 1000, "search")
    assert (a.purpose, b.purpose) == ("learning", "search")
    assert log.trials == seen == [a, b]
    assert log.trial_time_s == pytest.approx(3.0 + 1000 / LINE)
    assert log.summary() == {"trial_count": 2, "trial_time_s": log.trial_time_s}


def test_rate_metrics_units() -> None:
    m = rate_metrics(LINE / 2, LINE / 4, 50.0, None, TRAFFIC)
    assert m["tx_rate_percent"] == pytest.approx(50.0)
    assert m["throughput_rx_percent"] == pytest.approx(25.0)
    # L2 megabits: 1518 B * 8 bits per frame.
    assert m["tx_rate_mbps"] == pytest.approx(LINE / 2 * 1518 * 8 / 1e6)
    assert m["min_latency_ns"] is None


def test_merge_latency_and_percent() -> None:
    merged = merge_latency(
        [LatencyStats(1.0, 5.0, 9.0, samples=2), None, LatencyStats(2.0, 7.0, 20.0, samples=3)]
    )
    assert merged == LatencyStats(1.0, 6.0, 20.0, samples=5)
    assert merge_latency([None]) is None
    assert percent_of(5.0, 0.0) == 0.0


def test_anomalies_keep_order_once() -> None:
    found = Anomalies()
    for msg in ("b", "a", "b"):
        found.add(msg)
    assert found.as_tuple() == ("b", "a")


def test_latency_percentiles_become_metrics_and_merge_by_mean() -> None:
    from vsperf.search.measurer import LatencyStats
    from vsperf.search.trials import latency_metrics, merge_latency

    a = LatencyStats(1000.0, 2000.0, 9000.0, {"p50": 1800.0, "p99": 8000.0}, samples=10)
    b = LatencyStats(1500.0, 3000.0, 7000.0, {"p50": 2200.0, "p99": 6000.0, "p99.9": 6900.0}, samples=30)
    metrics = latency_metrics(a)
    assert metrics["p50_latency_ns"] == 1800.0 and metrics["p99_latency_ns"] == 8000.0
    merged = merge_latency([a, None, b])
    assert merged is not None
    assert (merged.min_ns, merged.avg_ns, merged.max_ns, merged.samples) == (1000.0, 2500.0, 9000.0, 40)
    assert merged.percentiles_ns == {"p50": 2000.0, "p99": 7000.0}  # p99.9: not every answer has it
    assert "p50_latency_ns" not in latency_metrics(None)
