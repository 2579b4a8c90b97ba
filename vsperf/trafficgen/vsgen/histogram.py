"""The engine's latency histogram: bucket geometry and percentiles.

The buckets mirror `vsg_bucket` in csrc/vsgen_shared.h: four linear tiers, finer than
1 us for every latency below 134 ms (16 ns below 65.5 us, 64 ns below 1.05 ms, 512 ns below
134 ms, 65.5 us up to 4.29 s, where the 32-bit transmit timestamp wraps). The engine reports
the non-empty buckets of each receiving port; percentiles are computed here, over the merged
histograms of every port, by nearest rank, each as the middle of its bucket clamped to the
exact minimum and maximum the engine measured.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

# (first ns, end ns, log2 of the bucket width) per tier, and each tier's first bucket.
TIERS: tuple[tuple[int, int, int], ...] = (
    (0, 1 << 16, 4),
    (1 << 16, 1 << 20, 6),
    (1 << 20, 1 << 27, 9),
    (1 << 27, 1 << 32, 16),
)
_FIRST_BUCKET: tuple[int, ...] = (0, 4096, 19456, 279552)
BUCKETS = 343040
DEFAULT_PERCENTILES: tuple[float, ...] = (50.0, 90.0, 99.0, 99.9)


def bucket_of(latency_ns: int) -> int:
    """The bucket counting a latency of `latency_ns` (0 <= latency_ns < 2**32)."""
    if not 0 <= latency_ns < 1 << 32:
        raise ValueError(f"latency {latency_ns} ns outside the histogram (0 .. 2**32 ns)")
    for (start, end, shift), first in zip(TIERS, _FIRST_BUCKET, strict=True):
        if latency_ns < end:
            return first + ((latency_ns - start) >> shift)
    raise AssertionError("unreachable: the last tier ends at 2**32")


def bucket_range(bucket: int) -> tuple[int, int]:
    """(lowest latency, width) of `bucket`, in ns."""
    if not 0 <= bucket < BUCKETS:
        raise ValueError(f"bucket {bucket} outside 0..{BUCKETS - 1}")
    for index in range(len(TIERS) - 1, -1, -1):
        first = _FIRST_BUCKET[index]
        if bucket >= first:
            start, _end, shift = TIERS[index]
            return start + ((bucket - first) << shift), 1 << shift
    raise AssertionError("unreachable: bucket 0 is in the first tier")


def percentile_key(percent: float) -> str:
    """"p50", "p99.9", ...: the key of a percentile in LatencyStats.percentiles_ns."""
    return f"p{percent:g}"


def nearest_rank(percent: float, total: int) -> int:
    """The rank (1-based) of the `percent` percentile among `total` values: ceil(percent % of
    total), in exact decimal arithmetic (99.9 / 100 * 50000 is 49950.00000000001 in floats)."""
    return max(1, math.ceil(Fraction(str(percent)) * total / 100))


def merge(histograms: Iterable[Iterable[Sequence[int]]]) -> dict[int, int]:
    """Sum of sparse histograms given as [bucket, count] pairs."""
    total: dict[int, int] = {}
    for hist in histograms:
        for bucket, count in hist:
            total[int(bucket)] = total.get(int(bucket), 0) + int(count)
    return total


def percentiles(
    hist: Mapping[int, int],
    min_ns: float,
    max_ns: float,
    wanted: Sequence[float] = DEFAULT_PERCENTILES,
) -> dict[str, float]:
    """Latency percentiles (nearest rank) of `hist`; empty when it counts nothing."""
    total = sum(hist.values())
    if total <= 0:
        return {}
    ordered = sorted((b, c) for b, c in hist.items() if c > 0)
    result: dict[str, float] = {}
    for percent in wanted:
        if not 0 < percent <= 100:
            raise ValueError(f"percentile {percent} outside (0, 100]")
        rank = nearest_rank(percent, total)
        seen = 0
        for bucket, count in ordered:
            seen += count
            if seen >= rank:
                low, width = bucket_range(bucket)
                result[percentile_key(percent)] = min(max_ns, max(min_ns, low + width / 2.0))
                break
    return result


@dataclass(frozen=True)
class PortLatency:
    """Latency counters of one receiving port, as the engine reports them."""

    samples: int
    sum_ns: int
    min_ns: int
    max_ns: int
    hist: tuple[tuple[int, int], ...]  # non-empty buckets: (bucket, count)
