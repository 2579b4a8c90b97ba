"""The latency histogram: the same buckets as the engine, 1 us resolution, percentiles."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vsperf.trafficgen.vsgen.histogram import (
    BUCKETS,
    TIERS,
    bucket_of,
    bucket_range,
    merge,
    nearest_rank,
    percentile_key,
    percentiles,
)

SHARED_H = Path(__file__).resolve().parents[2] / "vsperf" / "trafficgen" / "vsgen" / "csrc" / "vsgen_shared.h"


def _c_constants() -> dict[str, int]:
    text = SHARED_H.read_text()
    return {name: int(value) for name, value in re.findall(r"#define (VSG_HIST_\w+) (\d+)u", text)}


def test_the_engine_uses_the_same_bucket_layout() -> None:
    c = _c_constants()
    assert c["VSG_HIST_T1"] == bucket_of(1 << 16)
    assert c["VSG_HIST_T2"] == bucket_of(1 << 20)
    assert c["VSG_HIST_T3"] == bucket_of(1 << 27)
    assert c["VSG_HIST_BUCKETS"] == BUCKETS == bucket_of((1 << 32) - 1) + 1
    body = SHARED_H.read_text().split("vsg_bucket(__u32 ns)")[1].split("}")[0]
    shifts = [int(s) for s in re.findall(r">> (\d+)\)?;", body)]
    assert shifts == [shift for _start, _end, shift in TIERS]


@pytest.mark.parametrize("ns", [0, 1, 15, 16, 65535, 65536, 1_000_000, 1 << 20, 134_000_000, (1 << 27) + 5,
                                4_000_000_000, (1 << 32) - 1])
def test_every_latency_falls_inside_its_bucket(ns: int) -> None:
    low, width = bucket_range(bucket_of(ns))
    assert low <= ns < low + width


def test_resolution_is_1_us_or_better_below_134_ms() -> None:
    for ns in (10, 70_000, 1_500_000, 100_000_000, (1 << 27) - 1):
        assert bucket_range(bucket_of(ns))[1] <= 1000


def test_buckets_tile_the_range_without_gaps() -> None:
    end = 0
    for bucket in (0, 1, 4095, 4096, 19455, 19456, 279551, 279552, BUCKETS - 1):
        low, width = bucket_range(bucket)
        assert bucket_of(low) == bucket and bucket_of(low + width - 1) == bucket
        end = max(end, low + width)
    assert end == 1 << 32


def test_out_of_range_inputs_are_refused() -> None:
    with pytest.raises(ValueError):
        bucket_of(-1)
    with pytest.raises(ValueError):
        bucket_of(1 << 32)
    with pytest.raises(ValueError):
        bucket_range(BUCKETS)


def test_percentiles_by_nearest_rank_at_bucket_middles() -> None:
    # 1000 samples: 900 at ~5 us, 90 at ~50 us, 10 at ~2 ms.
    hist = {bucket_of(5000): 900, bucket_of(50_000): 90, bucket_of(2_000_000): 10}
    p = percentiles(hist, 4990.0, 2_000_100.0)
    assert p["p50"] == pytest.approx(5000, abs=8)
    assert p["p90"] == pytest.approx(5000, abs=8)
    assert p["p99"] == pytest.approx(50_000, abs=8)
    assert p["p99.9"] == pytest.approx(2_000_000, abs=256)


def test_the_nearest_rank_is_exact_where_floats_are_not() -> None:
    # 99.9 / 100 * 50000 is 49950.00000000001 in floats: its ceiling would be one frame too far
    assert nearest_rank(99.9, 50_000) == 49_950
    assert nearest_rank(99.999, 50_000) == 50_000 and nearest_rank(50.0, 3) == 2 and nearest_rank(1.0, 1) == 1
    # 49950 frames at ~12 us and 50 at ~2 ms: p99.9 is the last of the first group
    hist = {bucket_of(12_000): 49_950, bucket_of(2_000_000): 50}
    assert percentiles(hist, 12_000.0, 2_000_000.0)["p99.9"] == pytest.approx(12_000, abs=8)


def test_percentiles_stay_within_the_measured_min_and_max() -> None:
    hist = {bucket_of(100): 1}
    assert percentiles(hist, 100.0, 100.0) == {"p50": 100.0, "p90": 100.0, "p99": 100.0, "p99.9": 100.0}
    assert percentiles({}, 0.0, 0.0) == {}
    with pytest.raises(ValueError):
        percentiles(hist, 0.0, 1.0, (0.0,))


def test_merge_sums_sparse_histograms() -> None:
    assert merge([[[1, 2], [5, 1]], [[5, 3]], []]) == {1: 2, 5: 4}


def test_percentile_keys() -> None:
    assert [percentile_key(p) for p in (50.0, 99.0, 99.9)] == ["p50", "p99", "p99.9"]
