"""The measurer interface between the searches and the traffic generators.

A generator backend runs single trials; it never owns a search. Rates are aggregate frames/s
over every transmitting port (see `vsperf.traffic.Traffic`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from vsperf.traffic import Traffic

# An achieved transmit rate this far below the requested one means the generator, not the
# device under test, was the bottleneck: the trial is flagged, never counted as DUT loss.
UNDER_DELIVERY_TOLERANCE = 0.005

FLAG_UNDER_DELIVERY = "generator_under_delivery"
FLAG_RX_EXCEEDS_TX = "rx_exceeds_tx"


@dataclass(frozen=True)
class LatencyStats:
    """One-way latency over the frames that carried a timestamp, in nanoseconds."""

    min_ns: float
    avg_ns: float
    max_ns: float
    percentiles_ns: dict[str, float] = field(default_factory=dict)  # e.g. {"p50": ..., "p99": ...}
    samples: int = 0


@dataclass(frozen=True)
class TrialResult:
    """What one trial (a rate for a duration, or a burst of N frames) measured."""

    kind: Literal["rate", "burst"]
    frame_size_bytes: int
    requested_rate_fps: float  # aggregate requested rate (a burst: the line rate)
    duration_s: float  # requested duration of a rate trial; measured duration of a burst
    tx_frames: int  # frames actually sent, all ports
    rx_frames: int  # frames received that belong to this test, all ports
    actual_tx_rate_fps: float  # tx_frames / actual transmit time
    line_rate_fps: float  # aggregate line rate at this frame size
    latency: LatencyStats | None = None
    flags: tuple[str, ...] = ()
    per_second: tuple[dict[str, float], ...] = ()  # optional live statistics, one row per second
    purpose: str = ""  # why the search ran it: "search", "learning", "verification", ...

    def __post_init__(self) -> None:
        if self.tx_frames < 0 or self.rx_frames < 0:
            raise ValueError("frame counters cannot be negative")
        if self.frame_size_bytes <= 0:
            raise ValueError("frame size must be positive")

    @property
    def loss_frames(self) -> int:
        """Frames sent but not received (never negative; see FLAG_RX_EXCEEDS_TX)."""
        return max(0, self.tx_frames - self.rx_frames)

    @property
    def loss_ratio(self) -> float:
        """Lost / sent; 1.0 when nothing was sent at all."""
        if self.tx_frames == 0:
            return 1.0
        return self.loss_frames / self.tx_frames

    @property
    def loss_percent(self) -> float:
        return 100.0 * self.loss_ratio

    @property
    def rx_rate_fps(self) -> float:
        """Received frames per second over the transmit time."""
        if self.actual_tx_rate_fps <= 0 or self.tx_frames == 0:
            return 0.0
        return self.rx_frames * self.actual_tx_rate_fps / self.tx_frames

    @property
    def under_delivered(self) -> bool:
        return FLAG_UNDER_DELIVERY in self.flags

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready record, with the derived values added."""
        data = asdict(self)
        data["flags"] = list(self.flags)
        data["per_second"] = [dict(row) for row in self.per_second]
        data["loss_frames"] = self.loss_frames
        data["loss_percent"] = self.loss_percent
        data["rx_rate_fps"] = self.rx_rate_fps
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrialResult:
        latency = data.get("latency")
        return cls(
            kind=data["kind"],
            frame_size_bytes=int(data["frame_size_bytes"]),
            requested_rate_fps=float(data["requested_rate_fps"]),
            duration_s=float(data["duration_s"]),
            tx_frames=int(data["tx_frames"]),
            rx_frames=int(data["rx_frames"]),
            actual_tx_rate_fps=float(data["actual_tx_rate_fps"]),
            line_rate_fps=float(data["line_rate_fps"]),
            latency=LatencyStats(**latency) if latency else None,
            flags=tuple(data.get("flags", ())),
            per_second=tuple(data.get("per_second", ())),
            purpose=data.get("purpose", ""),
        )


def delivery_flags(requested_rate_fps: float, actual_tx_rate_fps: float, tx: int, rx: int) -> tuple[str, ...]:
    """Flags every generator attaches to a trial from its own counters."""
    flags: list[str] = []
    if requested_rate_fps > 0 and actual_tx_rate_fps < requested_rate_fps * (1 - UNDER_DELIVERY_TOLERANCE):
        flags.append(FLAG_UNDER_DELIVERY)
    if rx > tx:
        flags.append(FLAG_RX_EXCEEDS_TX)
    return tuple(flags)


@runtime_checkable
class Measurer(Protocol):
    """Runs trials. Implemented by every traffic generator backend."""

    def trial(self, traffic: Traffic, rate_fps: float, duration_s: float) -> TrialResult:
        """Send `traffic` at the aggregate `rate_fps` for `duration_s`; counters read after the
        residual wait, when every in-flight frame has arrived."""
        ...

    def burst(self, traffic: Traffic, frames: int) -> TrialResult:
        """Send exactly `frames` frames (aggregate) back to back at line rate."""
        ...
