"""Small deterministic measurers with known answers, for testing the searches.

They are written independently of `vsperf.trafficgen.dummy.model` (simpler formulas) so that the engine is
not only checked against the model that the dummy generator uses.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from vsperf.search.measurer import LatencyStats, Measurer, TrialResult, delivery_flags
from vsperf.traffic import Traffic


@dataclass
class SimDut:
    """A DUT forwarding `capacity_fps` (aggregate), with a queue of `buffer_frames`.

    loss "cliff": forwards min(offered, capacity). loss "ramp": above capacity the loss ratio is
    `ramp` * (offered - capacity) / capacity, capped at 1 (so the highest rate losing at most a
    ratio p is capacity * (1 + p / ramp)). `capacities` (optional) gives the capacity of each
    successive trial, cycling, for noisy DUTs. `generator_max_fps` caps what the generator sends.
    """

    capacity_fps: float
    loss: str = "cliff"
    ramp: float = 1.0
    buffer_frames: int = 0
    capacities: Sequence[float] = ()
    generator_max_fps: float | None = None
    with_latency: bool = True
    capacity_for_duration: Callable[[float, float], float] | None = None  # (capacity, duration) -> capacity
    calls: list[tuple[str, float, float]] = field(default_factory=list)

    def _capacity(self) -> float:
        if self.capacities:
            return self.capacities[(len(self.calls) - 1) % len(self.capacities)]
        return self.capacity_fps

    def _latency(self) -> LatencyStats | None:
        return (
            LatencyStats(min_ns=1000.0, avg_ns=2000.0, max_ns=5000.0, samples=10)
            if self.with_latency
            else None
        )

    def trial(self, traffic: Traffic, rate_fps: float, duration_s: float) -> TrialResult:
        self.calls.append(("rate", rate_fps, duration_s))
        capacity = self._capacity()
        if self.capacity_for_duration is not None:
            capacity = self.capacity_for_duration(capacity, duration_s)
        line = traffic.line_rate_fps
        offered = min(rate_fps, line)
        if self.generator_max_fps is not None:
            offered = min(offered, self.generator_max_fps)
        tx = int(offered * duration_s)
        if offered <= capacity:
            ratio = 0.0
        elif self.loss == "cliff":
            ratio = 1.0 - capacity / offered
        else:
            ratio = min(1.0, self.ramp * (offered - capacity) / capacity)
        lost = min(tx, math.ceil(tx * ratio)) if ratio > 0 else 0
        return TrialResult(
            kind="rate",
            frame_size_bytes=traffic.frame_size_bytes,
            requested_rate_fps=rate_fps,
            duration_s=duration_s,
            tx_frames=tx,
            rx_frames=tx - lost,
            actual_tx_rate_fps=offered,
            line_rate_fps=line,
            latency=self._latency(),
            flags=delivery_flags(rate_fps, offered, tx, tx - lost),
        )

    def burst(self, traffic: Traffic, frames: int) -> TrialResult:
        self.calls.append(("burst", float(frames), 0.0))
        capacity = self._capacity()
        line = traffic.line_rate_fps
        sent_rate = line if self.generator_max_fps is None else min(line, self.generator_max_fps)
        growth = max(0.0, 1.0 - capacity / sent_rate)
        lost = max(0, math.ceil(frames * growth - self.buffer_frames - 1e-9))
        return TrialResult(
            kind="burst",
            frame_size_bytes=traffic.frame_size_bytes,
            requested_rate_fps=line,
            duration_s=frames / sent_rate,
            tx_frames=frames,
            rx_frames=frames - min(frames, lost),
            actual_tx_rate_fps=sent_rate,
            line_rate_fps=line,
            latency=self._latency(),
            flags=delivery_flags(line, sent_rate, frames, frames - min(frames, lost)),
        )


def lossless_burst(capacity_fps: float, line_fps: float, buffer_frames: int) -> float:
    """Longest lossless burst of `SimDut` at line rate (the known answer of back-to-back)."""
    return buffer_frames / (1.0 - capacity_fps / line_fps)


@dataclass
class LossyGenerator:
    """Wraps a measurer; when asked for more than `max_fps` it sends only `max_fps` AND its own
    queue drops `own_loss_ratio` of the frames (a generator counting frames it never put on the
    wire): the loss is the generator's, not the DUT's."""

    inner: Measurer
    max_fps: float
    own_loss_ratio: float = 0.1

    def trial(self, traffic: Traffic, rate_fps: float, duration_s: float) -> TrialResult:
        if rate_fps <= self.max_fps:
            return self.inner.trial(traffic, rate_fps, duration_s)
        result = self.inner.trial(traffic, self.max_fps, duration_s)
        rx = int(result.rx_frames * (1 - self.own_loss_ratio))
        return replace(
            result,
            requested_rate_fps=rate_fps,
            rx_frames=rx,
            flags=delivery_flags(rate_fps, result.actual_tx_rate_fps, result.tx_frames, rx),
        )

    def burst(self, traffic: Traffic, frames: int) -> TrialResult:
        return self.inner.burst(traffic, frames)
