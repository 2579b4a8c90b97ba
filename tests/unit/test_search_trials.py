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
