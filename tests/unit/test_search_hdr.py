"""HDR histograms of latencies: encoded as text, added up, percentiles, the distribution's points."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from vsperf.search import hdr


def test_percentiles_match_a_sort_of_the_values() -> None:
    rng = random.Random(7)
    values = [rng.expovariate(1 / 20_000) + 5_000 for _ in range(100_000)]
    text = hdr.encode_values(values)
    assert hdr.total_count(text) == len(values)
    ordered = sorted(values)
    for key, value in hdr.percentiles(text).items():
        exact = ordered[max(1, math.ceil(float(key[1:]) / 100 * len(ordered))) - 1]
        assert value == pytest.approx(exact, rel=2e-3, abs=2)
    _low, _mean, high, count = hdr.summary(text)
    assert count == len(values) and high == pytest.approx(ordered[-1], rel=1e-3)
    assert set(hdr.percentiles(text)) == {"p50", "p90", "p99", "p99.9", "p99.99", "p99.999"}


def test_histograms_add_up() -> None:
    a, b = hdr.encode_counts([(1000, 5)]), hdr.encode_counts([(3000, 5), (2000, 0)])
    merged = hdr.merge([a, "", b])
    assert hdr.total_count(merged) == 10 and hdr.percentiles(merged, (50.0,))["p50"] == pytest.approx(1000, rel=1e-3)
    assert hdr.merge([]) == "" and hdr.encode_counts([]) == "" and hdr.percentiles("") == {}


def test_the_distribution_runs_to_the_last_frame() -> None:
    text = hdr.encode_values(range(1, 10_001))
    points = hdr.distribution(text)
    assert points[0][0] == 0.0 and points[-1] == (pytest.approx(99.99), pytest.approx(10_000, rel=1e-3))
    assert all(b[0] > a[0] and b[1] >= a[1] for a, b in itertools.pairwise(points))


def test_text_that_is_not_a_histogram() -> None:
    with pytest.raises(ValueError, match="not an encoded HDR histogram"):
        hdr.decode("HISTFAAAnonsense")
