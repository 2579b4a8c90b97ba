"""Latency distributions as HDR histograms (the `hdrhistogram` package), kept in results as text.

With TRAFFIC latency_histogram on, a trial's latency keeps its whole distribution: an HDR
histogram of every latency the generator measured (1 ns .. 2^32 ns, 3 significant digits),
stored encoded (base64 of the compressed HdrHistogram V2 form, the strings CSIT stores and every
HdrHistogram library reads) in `LatencyStats.hdrh`. Percentiles up to 99.999 and the maximum come
from it; several trials' histograms add up (`merge`); the report draws its percentile
distribution (latency against 1 / (1 - percentile), as HdrHistogram's plots do).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from hdrh.histogram import HdrHistogram

LOWEST_NS = 1
HIGHEST_NS = 1 << 32  # vsgen's transmit timestamps wrap there (4.29 s)
SIGNIFICANT_DIGITS = 3
# The percentiles a histogram gives results, CSVs and the report (the maximum is max_latency_ns).
HISTOGRAM_PERCENTILES: tuple[float, ...] = (50.0, 90.0, 99.0, 99.9, 99.99, 99.999)


def new_histogram() -> Any:
    """An empty histogram with vsperf's range and precision."""
    return HdrHistogram(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)


def _clamped(value_ns: float) -> int:
    return min(HIGHEST_NS, max(LOWEST_NS, round(value_ns)))


def encode_counts(counts: Iterable[tuple[float, int]]) -> str:
    """The encoded histogram of (latency ns, how many frames) pairs ("" when it counts nothing)."""
    histogram = new_histogram()
    for value, count in counts:
        if count > 0:
            histogram.record_value(_clamped(value), int(count))
    if histogram.get_total_count() == 0:
        return ""
    return str(histogram.encode().decode("ascii"))


def encode_values(values: Iterable[float]) -> str:
    """The encoded histogram of single latencies, ns."""
    return encode_counts((v, 1) for v in values)


def decode(text: str) -> Any:
    """The histogram `text` encodes; ValueError when it is not one."""
    try:
        histogram = HdrHistogram.decode(text.encode("ascii"))
    except Exception as exc:  # the package raises zlib, base64 and its own errors alike
        raise ValueError(f"not an encoded HDR histogram: {exc}") from None
    if histogram is None:
        raise ValueError("not an encoded HDR histogram")
    return histogram


def merge(texts: Iterable[str]) -> str:
    """The sum of encoded histograms (empty ones skipped); "" when none counts anything."""
    total = new_histogram()
    for text in texts:
        if text:
            total.add(decode(text))
    return str(total.encode().decode("ascii")) if total.get_total_count() else ""


def total_count(text: str) -> int:
    """How many latencies `text` holds."""
    return int(decode(text).get_total_count()) if text else 0


def percentile_key(percent: float) -> str:
    """"p50", "p99.999": the key of a percentile in LatencyStats.percentiles_ns."""
    return f"p{percent:g}"


def percentiles(text: str, wanted: Sequence[float] = HISTOGRAM_PERCENTILES) -> dict[str, float]:
    """The latency at each percentile of `wanted`, ns ({} for an empty histogram)."""
    if not text:
        return {}
    histogram = decode(text)
    if not histogram.get_total_count():
        return {}
    return {percentile_key(p): float(histogram.get_value_at_percentile(p)) for p in wanted}


def summary(text: str) -> tuple[float, float, float, int]:
    """(minimum, mean, maximum, count) of `text`, ns."""
    histogram = decode(text)
    return (float(histogram.get_min_value()), float(histogram.get_mean_value()), float(histogram.get_max_value()),
            int(histogram.get_total_count()))


def distribution(text: str, points_per_decade: int = 10) -> list[tuple[float, float]]:
    """(percentile, latency ns) from 0 up to the last frame: the points of a percentile-distribution
    plot, evenly spaced in log(1 / (1 - percentile)) (HdrHistogram's tick spacing), the maximum last."""
    if not text:
        return []
    histogram = decode(text)
    count = int(histogram.get_total_count())
    if not count:
        return []
    points: list[tuple[float, float]] = []
    # Up to the percentile of the last frame but one: 1 - 1/count; past it only the maximum is left.
    decades = math.log10(max(count, 2))
    steps = max(1, math.ceil(decades * points_per_decade))
    for k in range(steps + 1):
        percent = 100.0 * (1.0 - 10 ** (-k / points_per_decade))
        if percent >= 100.0 * (1.0 - 1.0 / count):
            break
        points.append((percent, float(histogram.get_value_at_percentile(percent))))
    points.append((100.0 * (1.0 - 1.0 / count) if count > 1 else 0.0, float(histogram.get_max_value())))
    return points
