"""The measurer interface between the searches and the traffic generators.

A generator backend runs single trials; it never owns a search. Rates are aggregate frames/s
over every transmitting port (see `vsperf.traffic.Traffic`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from vsperf.errors import TrafficGenError
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
    # The whole distribution, an encoded HDR histogram (vsperf.search.hdr), with TRAFFIC
    # latency_histogram on and a generator that has one; "" otherwise.
    hdrh: str = ""


# The numeric fields of a TrialResult, by type (a result file may hold 64.0 for a count).
_COUNT_FIELDS = ("frame_size_bytes", "tx_frames", "rx_frames")
_REAL_FIELDS = ("requested_rate_fps", "duration_s", "actual_tx_rate_fps", "line_rate_fps")


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
    warm_frames: int = 0  # frames of the warm start sent before the counted ones (never counted)
    # Frames received per frame size (a frame mix), as the receiving side counted them; () when
    # the generator does not count them.
    rx_frames_by_size: tuple[tuple[int, int], ...] = ()
    notes: tuple[str, ...] = ()  # what the generator could not do as asked in this trial, in words

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
        data["rx_frames_by_size"] = [list(pair) for pair in self.rx_frames_by_size]
        data["notes"] = list(self.notes)
        data["per_second"] = [dict(row) for row in self.per_second]
        data["loss_frames"] = self.loss_frames
        data["loss_percent"] = self.loss_percent
        data["rx_rate_fps"] = self.rx_rate_fps
        return data

    @classmethod
    def measured(
        cls,
        kind: str,
        traffic: Traffic,
        requested_rate_fps: float,
        duration_s: float,
        tx_frames: int,
        rx_frames: int,
        actual_tx_rate_fps: float,
        *,
        latency: LatencyStats | None = None,
        flags: tuple[str, ...] = (),
        per_second: tuple[dict[str, float], ...] = (),
        line_rate_fps: float | None = None,
        asked_rate_fps: float | None = None,
        sent_short: bool = False,
        warm_frames: int = 0,
        rx_frames_by_size: tuple[tuple[int, int], ...] = (),
        notes: tuple[str, ...] = (),
    ) -> TrialResult:
        """The result of a trial a generator ran, from its own counters: the one place that fills
        in the frame size and line rate of `traffic` and the `delivery_flags`.

        `kind` is "rate" or anything else for a burst. `flags` are the generator's own flags,
        added after the delivery flags. `line_rate_fps` overrides the traffic's line rate (a
        simulated port). Under-delivery is judged against `asked_rate_fps` where the generator was
        asked for another rate than the search requested (whole frames/s per flow), and is
        flagged whatever the rate when the generator sent fewer frames than planned (`sent_short`).
        """
        asked = requested_rate_fps if asked_rate_fps is None else asked_rate_fps
        derived = delivery_flags(asked, actual_tx_rate_fps, tx_frames, rx_frames)
        if sent_short and FLAG_UNDER_DELIVERY not in derived:
            derived = (FLAG_UNDER_DELIVERY, *derived)
        return cls(
            kind="rate" if kind == "rate" else "burst",
            frame_size_bytes=traffic.frame_size_bytes,
            requested_rate_fps=requested_rate_fps,
            duration_s=duration_s,
            tx_frames=tx_frames,
            rx_frames=rx_frames,
            actual_tx_rate_fps=actual_tx_rate_fps,
            line_rate_fps=traffic.line_rate_fps if line_rate_fps is None else line_rate_fps,
            latency=latency,
            flags=derived + tuple(flags),
            per_second=per_second,
            warm_frames=warm_frames,
            rx_frames_by_size=rx_frames_by_size,
            notes=notes,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrialResult:
        """The trial `as_dict` wrote (its derived values are computed again, not read)."""
        latency = data.get("latency")
        numbers: dict[str, Any] = {name: int(data[name]) for name in _COUNT_FIELDS}
        numbers.update({name: float(data[name]) for name in _REAL_FIELDS})
        return cls(
            kind=data["kind"],
            **numbers,
            latency=LatencyStats(**latency) if latency else None,
            flags=tuple(data.get("flags", ())),
            per_second=tuple(data.get("per_second", ())),
            purpose=data.get("purpose", ""),
            warm_frames=int(data.get("warm_frames", 0)),
            rx_frames_by_size=tuple((int(s), int(n)) for s, n in data.get("rx_frames_by_size", ())),
            notes=tuple(str(n) for n in data.get("notes", ())),
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


# What a capability trial calls to act on the DUT (restart it, make it forget addresses): given by
# the deployment (`DutControl`), so the generator never needs to know how.
DutAction = Callable[[], None]


# ---- Optional capabilities -------------------------------------------------------------------
# A generator implements these only if it can really measure what they ask: a search that needs one
# checks for it before its first trial (`missing_capability`) and the test fails with one clear
# TrafficGenError; nothing is ever estimated in its place.


@dataclass(frozen=True)
class RecoveryTrialResult:
    """An overload-then-drop trial (RFC 2544 section 26.5, system recovery).

    The generator sends at `overload_fps` for `overload_s`, then, without stopping, at
    `recovery_fps` for `recovery_s`; the moment of the rate change is RFC 2544's Timestamp A.
    """

    overload: TrialResult  # counters of the overload phase (frames sent before the drop)
    recovery: TrialResult  # counters of the phase after the drop (frames sent after it)
    # RFC 2544's Timestamp B - Timestamp A: from the drop to the send time of the last frame lost
    # among those sent after the drop; 0.0 when none of them was lost.
    last_loss_after_drop_s: float
    resolution_s: float  # how precisely the generator dates a lost frame (per-frame: 1 / rate)

    def __post_init__(self) -> None:
        if self.last_loss_after_drop_s < 0 or self.resolution_s < 0:
            raise ValueError("recovery times cannot be negative")


@runtime_checkable
class RecoveryMeasurer(Protocol):
    """A generator that can date the last lost frame after a rate drop (sequence numbers or
    per-frame timestamps at the receiver)."""

    def recovery_trial(
        self, traffic: Traffic, overload_fps: float, overload_s: float, recovery_fps: float, recovery_s: float
    ) -> RecoveryTrialResult:
        """Overload, drop the rate without a pause, keep sending; see `RecoveryTrialResult`."""
        ...


@dataclass(frozen=True)
class ResetTrialResult:
    """A stream at a constant rate during which the DUT was reset (RFC 2544 26.6, RFC 6201)."""

    trial: TrialResult  # counters of the whole stream
    reset_at_s: float  # when the reset action started, seconds after the first frame
    # RFC 6201 timestamp method: from the last frame received before the reset (Timestamp A) to
    # the first frame received after it (Timestamp B), i.e. the longest silence at the receiver.
    gap_s: float
    recovered: bool  # False: no frame arrived after the reset before the stream ended
    resolution_s: float  # how precisely the receiver dates a frame

    def __post_init__(self) -> None:
        if self.gap_s < 0 or self.reset_at_s < 0 or self.resolution_s < 0:
            raise ValueError("reset times cannot be negative")


@runtime_checkable
class ResetMeasurer(Protocol):
    """A generator that can stream while the DUT is reset and date the gap at the receiver (the
    timestamp method of RFC 6201)."""

    def reset_trial(
        self, traffic: Traffic, rate_fps: float, duration_s: float, reset_at_s: float, reset: DutAction | None
    ) -> ResetTrialResult:
        """Stream at `rate_fps` for `duration_s`; `reset_at_s` seconds in, call `reset` (which
        restarts the DUT and returns when the restart command has finished) while the stream
        goes on. `reset` is None only for a generator that simulates the DUT itself; a real one
        raises TrafficGenError then."""
        ...


@dataclass(frozen=True)
class AddressTrialResult:
    """An RFC 2889 address trial (sections 5.7 caching capacity and 5.8 learning rate).

    Learning phase: one frame from each of `addresses` distinct source MACs, sent from the
    learning port. Test phase: one frame to each of those addresses, sent from the test port; a
    switch that learned an address forwards its frame to the learning port only, one that did not
    floods it (also to a monitoring port).
    """

    addresses: int  # distinct source MAC addresses of the learning phase
    learning: TrialResult  # the learning frames (tx: frames sent at the learning rate)
    test: TrialResult  # the test frames; rx: those that reached the learning port
    flooded_frames: int  # test frames also seen where the address does not live (not learned)

    def __post_init__(self) -> None:
        if self.addresses < 1 or self.flooded_frames < 0:
            raise ValueError("an address trial needs >= 1 address and a non-negative flood count")


@runtime_checkable
class AddressMeasurer(Protocol):
    """A generator that sends from many source MACs and watches a port for flooded frames."""

    def address_trial(
        self, traffic: Traffic, addresses: int, learning_rate_fps: float, test_rate_fps: float, forget: DutAction | None
    ) -> AddressTrialResult:
        """Learning then test phase (see `AddressTrialResult`), with addresses the DUT has not
        learned before: `forget` (when given) makes the DUT drop its learned addresses and is
        called first; without it the generator uses addresses never sent before in this run."""
        ...


@runtime_checkable
class DutControl(Protocol):
    """What a test may do to the device under test itself (given by the deployment, not the
    generator): restart it for rfc2544_reset, forget learned addresses for RFC 2889."""

    def restart(self) -> None:
        """Restart the forwarding (e.g. ovs-vswitchd, or the bridge); return when restarted."""
        ...

    def forget_addresses(self) -> None:
        """Flush the switch's learned MAC addresses."""
        ...


def generator_name(measurer: object) -> str:
    """The registered name of a generator backend (its class name for any other measurer)."""
    name = getattr(measurer, "NAME", None)
    return name if isinstance(name, str) else type(measurer).__name__


def missing_capability(measurer: object, traffic_type: str, method: str) -> TrafficGenError:
    """The error for a generator that cannot run the trials a traffic type needs."""
    return TrafficGenError(
        f"generator {generator_name(measurer)} cannot run {traffic_type} trials (it has no {method}); "
        "choose a generator that supports them, e.g. --trafficgen dummy for a simulated DUT"
    )
