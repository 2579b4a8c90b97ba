"""Reset and recovery answers from the engine's per-frame evidence (RFC 2544 26.5 and 26.6).

The engine numbers frames: in each direction, frame k (from 0) carries stream k % streams and
sequence number k // streams, and is due at a known time of the pacing schedule (frame k of a
rate at k / rate after the first; after a rate change, frame k at t_drop + (k - tx1) / rate2).
The receive program dates every test frame it gets with the same clock (CLOCK_MONOTONIC).

* Reset (RFC 6201 timestamp method): the receiver keeps the longest interval between two
  consecutive test frames and when it ended. That interval is Timestamp B - Timestamp A (last
  frame before the reset to the first after it) when it straddles the reset. If no frame came
  after the reset, the silence runs from the last frame received to the end of the stream (a
  lower bound, `recovered` False). Exact to the receive clock; it cannot see a break shorter
  than the interval between frames (the resolution, 1 / rate per direction).
* Recovery: the last lost frame is the highest frame index skipped by a later frame of its
  stream, or not followed by any (frames lost at the end). Its scheduled send time minus the
  rate change is the recovery time; it is exact in frames (the index), and in time to the
  schedule: the engine sends each frame within one pacing chunk (about 100 us) of it. A frame
  that arrives after a later one (reordering) would count as lost; the trial's reorder count
  says when that happened.
"""

from __future__ import annotations

from dataclasses import dataclass

from vsperf.search.measurer import TrialResult
from vsperf.traffic import Traffic
from vsperf.trafficgen.vsgen.protocol import DirResult, PortResult, RunResult

_NS = 1e9


@dataclass(frozen=True)
class ResetGap:
    """What the receivers saw around one reset."""

    gap_s: float  # longest silence at any receiving port
    recovered: bool  # every receiving port got frames after the reset, before the stream ended
    reset_at_s: float  # when the reset started, seconds after the first frame was due


def _port(result: RunResult, index: int) -> PortResult:
    for port in result.ports:
        if port.port == index:
            return port
    raise ValueError(f"the engine's result has no port {index}")


def reset_gap(result: RunResult, reset_start_ns: int) -> ResetGap:
    """The reset gap of a run during which the DUT was reset from `reset_start_ns` (CLOCK_MONOTONIC)."""
    if not result.dirs:
        raise ValueError("a run without directions has no reset gap")
    gaps: list[float] = []
    recovered = True
    first_due_ns = min(d.t_start_ns for d in result.dirs)
    for d in result.dirs:
        port = _port(result, d.rx_port)
        tx_end_ns = d.t_start_ns + round(d.tx_time_s * _NS)
        if port.last_rx_ns == 0:  # nothing at all arrived: silent from the first frame
            gaps.append(d.tx_time_s)
            recovered = False
            continue
        tail_ns = max(0, tx_end_ns - port.last_rx_ns)
        came_back = port.last_rx_ns > reset_start_ns and tail_ns < port.gap_max_ns
        if not came_back:
            recovered = False
            gaps.append(max(port.gap_max_ns, tail_ns) / _NS)
        else:
            gaps.append(port.gap_max_ns / _NS)
    return ResetGap(gap_s=max(gaps), recovered=recovered, reset_at_s=max(0.0, (reset_start_ns - first_due_ns) / _NS))


@dataclass(frozen=True)
class PhaseCounts:
    """One phase (before or after the rate change) of one direction."""

    tx_frames: int
    rx_frames: int  # each frame once (duplicates of the whole run are taken from the first phase)
    duration_s: float  # the phase's transmit time


def phases(d: DirResult) -> tuple[PhaseCounts, PhaseCounts]:
    """Counters of direction `d` before and after its rate change."""
    tx2 = d.tx_frames - d.tx1_frames
    rx2 = min(d.rx2_frames, tx2)
    rx1 = max(0, d.unique_rx_frames - rx2)
    t_drop = d.t_drop_s if d.t_drop_s > 0 else d.tx_time_s
    return (PhaseCounts(d.tx1_frames, min(rx1, d.tx1_frames), t_drop),
            PhaseCounts(tx2, rx2, max(0.0, d.tx_time_s - t_drop)))


def last_loss_after_drop_s(d: DirResult) -> float:
    """Scheduled send time of the last frame lost after the rate change, from the change (0: none)."""
    if d.last_lost_index < d.tx1_frames or d.rate2_fps <= 0:
        return 0.0
    return (d.last_lost_index - d.tx1_frames) / d.rate2_fps


def phase_trial(traffic: Traffic, rate_fps: float, duration_s: float, counts: list[PhaseCounts]) -> TrialResult:
    """One phase of every direction as a TrialResult (requested rate and duration aggregate)."""
    tx = sum(c.tx_frames for c in counts)
    rx = sum(c.rx_frames for c in counts)
    actual = sum(c.tx_frames / c.duration_s for c in counts if c.duration_s > 0)
    return TrialResult.measured("rate", traffic, rate_fps, duration_s, tx, rx, actual)
