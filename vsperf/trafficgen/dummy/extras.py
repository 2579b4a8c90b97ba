"""What the simulated DUT adds to a trial beyond its steady state: a frame mix's sizes, the whole
latency distribution (TRAFFIC latency_histogram), and a cold start that a warm start avoids.

* Latency distribution: a queue that behaves like M/M/1 waits an exponentially distributed time,
  so the histogram holds the model's base latency plus an exponential wait of the model's mean,
  at 1000 evenly spaced quantiles (each standing for its share of the frames received), clamped
  to the model's maximum. It is SIMULATED, like every dummy latency.
* Cold start (`cold_start_s`, 0: none): for its first cold_start_s seconds of traffic the DUT
  forwards at half its capacity (caches filling, flows being set up); what its queue cannot hold
  then is lost. A warm start sends its frames during that time: only what is left of the cold
  start after it hits the counted frames.
* A frame mix: the model's capacity at the mix's mean size; frames received per size in the
  mix's proportions.
"""

from __future__ import annotations

import math

from vsperf.search import hdr
from vsperf.search.measurer import LatencyStats
from vsperf.traffic import Traffic

QUANTILES = 1000


def with_distribution(latency: LatencyStats, frames: int) -> LatencyStats:
    """`latency` with the simulated distribution of `frames` frames (module docstring)."""
    if frames <= 0:
        return latency
    wait = max(0.0, latency.avg_ns - latency.min_ns)
    share, extra = divmod(frames, QUANTILES)
    counts: list[tuple[float, int]] = []
    for i in range(QUANTILES):
        value = latency.min_ns + wait * -math.log(1.0 - (i + 0.5) / QUANTILES)
        counts.append((min(latency.max_ns, value), share + (1 if i < extra else 0)))
    text = hdr.encode_counts(counts)
    return LatencyStats(min_ns=latency.min_ns, avg_ns=latency.avg_ns, max_ns=latency.max_ns,
                        percentiles_ns=hdr.percentiles(text), samples=frames, hdrh=text)


def cold_start_lost(cold_start_s: float, warm_s: float, offered_fps: float, capacity_fps: float,
                    buffer_frames: int, frames: int) -> int:
    """Counted frames a cold start loses (module docstring)."""
    cold = max(0.0, cold_start_s - warm_s)
    if cold <= 0:
        return 0
    excess = (offered_fps - capacity_fps / 2.0) * cold - buffer_frames
    return min(frames, math.ceil(excess)) if excess > 0 else 0


def warm_seconds(traffic: Traffic) -> float:
    """How long the traffic's warm start sends before the counted frames (0: none)."""
    return traffic.warm_start.duration_s if traffic.warm_start is not None else 0.0


def sizes_received(traffic: Traffic, rx_frames: int) -> tuple[tuple[int, int], ...]:
    """Frames received per size of a mix (in its proportions); () for one size."""
    if traffic.mix is None:
        return ()
    return tuple(sorted(traffic.mix.frames_of_size(rx_frames).items()))
