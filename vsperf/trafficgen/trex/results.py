"""A trial's TRex counters as vsperf's TrialResult: frames, achieved rate, latency.

Frames are TRex's per-stream counters (flow statistics): what each stream sent, and what its
receiving port counted of that stream until the residual wait ended. Frames that are not the
test's (a neighbour's ARP, IPv6) never count.

The achieved rate: TRex does not drop a frame it cannot send in time, it sends it late and the
burst takes longer. While the ports send, the worker samples their transmit counters (every
20 ms, each dated to ~1 ms); the rate fitted to those samples is what a port reached while it
sent. The time it took says what the samples may miss (a stall before the first sample): the
last sample that saw a port still sending is a lower bound of its transmit time (less
START_SLACK_S for the start request), and its frames over that time bound the rate from above.
The lower of the two is the achieved rate, which `TrialResult.measured` compares with the
requested one: 0.5 % short is under-delivery.

Latency: TRex's latency streams timestamp their frames; the result carries the smallest and
largest latency TRex measured, and the average and percentiles (p50, p90, p99, p99.9) from
TRex's histogram: buckets 10 us wide below 100 us, 100 us below 1 ms, and so on (a bucket
counts as its middle, kept within the measured minimum and maximum). The latency frames are a
sample of the trial's frames: the result is flagged `latency_sampled`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import replace

from vsperf.search.measurer import LatencyStats, TrialResult
from vsperf.traffic import Traffic
from vsperf.trafficgen.base import limits_notes
from vsperf.trafficgen.trex.protocol import LatencyCounts, TrialCounts
from vsperf.trafficgen.trex.streams import TrialPlan

FLAG_LATENCY_SAMPLED = "latency_sampled"  # the same flag as pktgen's latency probes
START_SLACK_S = 0.02  # from the start request to the first frame (~1 ms request here, and TRex's tick)
PERCENTILES = (50.0, 90.0, 99.0, 99.9)
_US_NS = 1000.0


def bucket_width_us(start_us: int) -> int:
    """Width of TRex's histogram bucket starting at `start_us` (0: the bucket below 10 us)."""
    if start_us <= 0:
        return 10
    return int(10 ** math.floor(math.log10(start_us)))


def _middle(start_us: int, min_us: float, max_us: float) -> float:
    return min(max_us, max(min_us, start_us + bucket_width_us(start_us) / 2.0))


def merged_histogram(latencies: Iterable[LatencyCounts]) -> dict[int, int]:
    """Sum of the streams' histograms, bucket start (us) -> frames."""
    total: dict[int, int] = {}
    for lat in latencies:
        for key, count in lat.histogram.items():
            total[int(key)] = total.get(int(key), 0) + int(count)
    return total


def latency_stats(latencies: Sequence[LatencyCounts]) -> LatencyStats | None:
    """The latency of every latency stream together (None when no stream received a frame)."""
    hist = merged_histogram(latencies)
    samples = sum(hist.values())
    measured = [lat for lat in latencies if lat.max_us > 0 or lat.histogram]
    if samples <= 0 or not measured:
        return None
    min_us = min(lat.min_us for lat in measured)
    max_us = max(lat.max_us for lat in measured)
    ordered = sorted(hist.items())
    average_us = sum(_middle(k, min_us, max_us) * c for k, c in ordered) / samples
    percentiles: dict[str, float] = {}
    for percent in PERCENTILES:
        rank, seen = max(1, math.ceil(percent / 100.0 * samples)), 0
        for key, count in ordered:
            seen += count
            if seen >= rank:
                percentiles[f"p{percent:g}"] = _middle(key, min_us, max_us) * _US_NS
                break
    return LatencyStats(min_ns=min_us * _US_NS, avg_ns=average_us * _US_NS, max_ns=max_us * _US_NS,
                        percentiles_ns=percentiles, samples=samples)


def achieved_rate_fps(plan: TrialPlan, counts: TrialCounts, tx_frames: int) -> float:
    """The rate the ports reached (see the module doc); the planned rate, or less, when too few
    samples fell inside the transmission (a short trial or burst)."""
    fits = {f.port: f for f in counts.fits}
    sending_s = max((fits[p].sending_s for p in plan.tx_ports if p in fits), default=0.0)
    timed_rate = tx_frames / max(plan.planned_s, sending_s - START_SLACK_S, 1e-9)
    if all(p in fits and fits[p].rate_fps > 0 for p in plan.tx_ports):
        return min(sum(fits[p].rate_fps for p in plan.tx_ports), timed_rate)
    return timed_rate


def rx_by_size(traffic: Traffic, plan: TrialPlan, counts: TrialCounts) -> tuple[tuple[int, int], ...]:
    """A mix's frames received per size: the receive counters of each size's streams (() for one size)."""
    if traffic.mix is None:
        return ()
    size_of = {s.pg_id: s.frame_size_bytes for s in plan.streams}
    by_size = dict.fromkeys(traffic.mix.sizes_bytes, 0)
    for stream in counts.streams:
        if stream.pg_id in size_of:
            by_size[size_of[stream.pg_id]] += stream.rx_frames
    return tuple(sorted(by_size.items()))


def trial_result(kind: str, traffic: Traffic, plan: TrialPlan, counts: TrialCounts, requested_fps: float,
                 duration_s: float) -> TrialResult:
    """The TrialResult of a rate trial (`kind` "rate") or a burst, from the worker's counters."""
    ours = {s.pg_id for s in plan.streams}
    tx = sum(s.tx_frames for s in counts.streams if s.pg_id in ours)
    rx = sum(s.rx_frames for s in counts.streams if s.pg_id in ours)
    actual = achieved_rate_fps(plan, counts, tx)
    latency_ids = set(plan.latency_pg_ids)
    latency = latency_stats([lat for lat in counts.latency if lat.pg_id in latency_ids]) if latency_ids else None
    measured_s = tx / actual if actual > 0 else 0.0
    result = TrialResult.measured(
        kind, traffic, requested_fps, duration_s if kind == "rate" else measured_s, tx, rx, actual,
        latency=latency, flags=(FLAG_LATENCY_SAMPLED,) if latency is not None else (),
        sent_short=tx < plan.frames, rx_frames_by_size=rx_by_size(traffic, plan, counts),
    )
    return replace(result, notes=limits_notes(
        traffic, latency="TRex's latency streams give minimum, average and maximum: no latency distribution",
        sizes="trex sends each size of the mix as a stream of its own at its share of the rate: the sizes "
              "interleave as TRex schedules the streams, not in the mix's repeating pattern",
        warm="trex sends no warm start: every frame of the trial is counted"))
