"""vsperf.history.trend: jumpavg's groups and their classification in the metric's sense."""

from __future__ import annotations

import random

import pytest

from vsperf.history.trend import NORMAL, PROGRESSION, REGRESSION, TrendLine, better_direction, classify, is_gate_failure


def _noisy(level: float, count: int, rng: random.Random, noise: float = 0.01) -> list[float]:
    return [level * (1 + rng.gauss(0, noise)) for _ in range(count)]


def test_a_ten_percent_drop_in_throughput_is_a_regression_from_its_first_run() -> None:
    rng = random.Random(1)
    values = _noisy(1e6, 40, rng) + _noisy(0.9e6, 5, rng)
    result = classify(values, "higher")
    assert result.classification == REGRESSION
    assert [(g.start, g.end) for g in result.groups] == [(0, 40), (40, 45)]
    assert result.groups[0].classification == NORMAL
    assert result.change_percent == pytest.approx(-10, abs=1.5)


def test_the_same_drop_in_latency_is_a_progression() -> None:
    rng = random.Random(2)
    result = classify(_noisy(20_000, 30, rng) + _noisy(18_000, 6, rng), better_direction("avg_latency_ns"))
    assert result.better == "lower" and result.classification == PROGRESSION


def test_noise_alone_is_one_normal_group() -> None:
    result = classify(_noisy(1e6, 50, random.Random(3)), "higher")
    assert len(result.groups) == 1 and result.classification == NORMAL and result.change_percent is None


def test_zeros_and_an_empty_series_do_not_break_it() -> None:
    assert classify([0.0] * 10, "lower").classification == NORMAL
    assert classify([], "higher").groups == ()
    assert classify([0.0] * 10 + [5.0] * 5, "lower").classification == REGRESSION  # loss appeared


@pytest.mark.parametrize("metric, better", [
    ("throughput_rx_fps", "higher"), ("b2b_frames", "higher"), ("frame_loss_percent", "lower"),
    ("max_latency_ns", "lower"), ("recovery_time_s", "lower"), ("max_forwarding_rate_fps", "higher"),
])
def test_better_direction(metric: str, better: str) -> None:
    assert better_direction(metric) == better


def test_the_gate_fails_only_on_a_regression() -> None:
    line = TrendLine("t", "s", 10, 1.0, "r", 1.0, -10.0, REGRESSION)
    assert is_gate_failure(line)
    assert not is_gate_failure(TrendLine("t", "s", 10, 1.0, "r", 1.0, 10.0, PROGRESSION))
