"""From an OTG controller's flow metrics to vsperf's TrialResult.

Counters are read once every flow reports `transmit: stopped` and the residual wait has
passed. The achieved transmit rate is the flow's `frames_tx_rate` as the controller reports it
for the stopped flow (vsgen's OTG server: the mean rate of the whole transmission). A
controller that reports 0 there (hardware ports report the current rate, 0 once stopped) is
taken to have kept its schedule: rate x frames sent / frames asked; a hardware generator falls
short only by sending fewer frames, which is flagged as under-delivery too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from vsperf.search.measurer import LatencyStats, TrialResult
from vsperf.traffic import Traffic
from vsperf.trafficgen.otg.flows import FlowPlan


@dataclass(frozen=True)
class FlowCounts:
    """One flow's final metrics, as the controller reported them."""

    name: str
    transmit: str  # "started", "stopped" or "paused"
    frames_tx: int
    frames_rx: int
    frames_tx_rate_fps: float  # 0.0 when the controller did not report one
    latency_min_ns: float | None = None
    latency_avg_ns: float | None = None
    latency_max_ns: float | None = None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float | str) and value != "" else None


def flow_counts(metric: Any) -> FlowCounts:
    """A snappi FlowMetric as FlowCounts (absent counters are 0, absent latency None)."""
    latency = metric.latency if metric._properties.get("latency") is not None else None
    return FlowCounts(
        name=str(metric.name),
        transmit=str(metric.transmit or ""),
        frames_tx=int(metric.frames_tx or 0),
        frames_rx=int(metric.frames_rx or 0),
        frames_tx_rate_fps=float(metric.frames_tx_rate or 0.0),
        latency_min_ns=_number(latency.minimum_ns) if latency is not None else None,
        latency_avg_ns=_number(latency.average_ns) if latency is not None else None,
        latency_max_ns=_number(latency.maximum_ns) if latency is not None else None,
    )


def latency_of(flows: Sequence[FlowCounts]) -> LatencyStats | None:
    """Latency over every flow that received frames and reported it (average weighted by frames)."""
    known = [f for f in flows if f.frames_rx > 0 and None not in (f.latency_min_ns, f.latency_avg_ns,
                                                                  f.latency_max_ns)]
    if not known:
        return None
    samples = sum(f.frames_rx for f in known)
    return LatencyStats(
        min_ns=min(float(f.latency_min_ns or 0.0) for f in known),
        avg_ns=sum(float(f.latency_avg_ns or 0.0) * f.frames_rx for f in known) / samples,
        max_ns=max(float(f.latency_max_ns or 0.0) for f in known),
        samples=samples,
    )


def achieved_fps(plan: FlowPlan, counts: FlowCounts, line_rate_fps: float) -> float:
    """The rate a flow was sent at (see the module docstring)."""
    if counts.frames_tx_rate_fps > 0:
        return counts.frames_tx_rate_fps
    scheduled = float(plan.rate_pps) if plan.rate_pps else line_rate_fps
    return scheduled * min(counts.frames_tx, plan.frames) / plan.frames


def trial_result(
    kind: Literal["rate", "burst"],
    traffic: Traffic,
    plans: Sequence[FlowPlan],
    flows: Sequence[FlowCounts],
    requested_rate_fps: float,
    duration_s: float,
) -> TrialResult:
    """The TrialResult of one trial: `flows` are the final metrics of `plans`' flows.

    `requested_rate_fps` is what the search asked for; under-delivery is judged against what was
    asked of the controller (whole pps per flow), so rounding is never taken for a shortfall."""
    by_name = {f.name: f for f in flows}
    missing = [p.name for p in plans if p.name not in by_name]
    if missing:
        raise ValueError(f"the controller reported no metrics for flow(s) {', '.join(missing)}")
    counts = [by_name[p.name] for p in plans]
    per_port_line = traffic.line_rate_fps / traffic.tx_ports
    tx = sum(c.frames_tx for c in counts)
    rx = sum(c.frames_rx for c in counts)
    actual = sum(achieved_fps(p, c, per_port_line) for p, c in zip(plans, counts, strict=True))
    asked = sum(float(p.rate_pps) if p.rate_pps else per_port_line for p in plans)
    if kind == "burst":
        duration_s = tx / actual if actual > 0 else 0.0
    return TrialResult.measured(  # a burst: asked = line rate, as vsgen
        kind, traffic, requested_rate_fps, duration_s, tx, rx, actual, latency=latency_of(counts),
        asked_rate_fps=asked, sent_short=tx < sum(p.frames for p in plans),
    )
