"""The JSON-lines protocol between vsperf and its TRex client worker (vsperf.trafficgen.trex.worker).

TRex's Python client puts its own old libraries (pyyaml 3.11, scapy 2.4.3, ...) first on
`sys.path` when it is imported and replaces modules already loaded: it never runs in vsperf's
process. The worker is a process of its own; vsperf writes one request per line on its standard
input and reads one answer per line on its standard output. Every request and answer is a
frozen dataclass here, encoded with `encode` and decoded with `decode_answer` /
`decode_request`: a malformed line is a ProtocolError naming what is wrong, never a KeyError
later. This module uses the standard library only: the worker imports it before the client.

Requests: `Connect` (once), `RunTrial` (any number), `Close`. Answers: `Connected`,
`TrialCounts` (after a `Started` line when the trial asked for one), `Closed`, or `Failure` for
any request (its `kind` says what went wrong).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal, TypeVar

PROTOCOL_VERSION = 1
VaryField = Literal["none", "dl_dst", "nw_dst", "tp_dst", "dl_src"]
# connect: the server does not answer; version: it answers but refuses the client (API
# version); trex: it refused a request; client: the client could not be imported; protocol: a
# malformed line.
FailureKind = Literal["connect", "version", "trex", "client", "protocol"]


class ProtocolError(ValueError):
    """A line that is not a valid request or answer of this protocol."""


# --- what a trial sends ---------------------------------------------------------------------


@dataclass(frozen=True)
class StreamSpec:
    """One TRex stream: a single burst of `frames` frames at `pps` from TRex port `port`, counted
    per stream (`pg_id`: TRex's packet group) and, for a latency stream, timestamped."""

    port: int  # TRex port that sends it
    pg_id: int  # packet group id: its own tx/rx counters (and latency) at the server
    frames: int  # exact number of frames it sends
    pps: float  # its rate, frames/s
    frame_size_bytes: int  # on the wire, FCS included (TRex adds the 4-byte FCS)
    src_mac: str
    dst_mac: str
    src_ip: str
    dst_ip: str
    src_udp: int
    dst_udp: int
    vlan_id: int | None = None  # None: untagged
    vlan_priority: int = 0
    vlan_cfi: int = 0
    vary: VaryField = "none"  # the field that counts through `flows` values, frame after frame
    flows: int = 1  # values the varied field takes (VSPERF's multistream)
    latency: bool = False  # a latency stream (TRex's STLFlowLatencyStats) instead of a counted one
    self_start: bool = True  # False: it starts when the stream naming it as `next_pg_id` ends
    next_pg_id: int | None = None  # the stream (same port) that follows this one without a pause

    def __post_init__(self) -> None:
        if self.frames < 1 or self.pps <= 0:
            raise ProtocolError(f"stream {self.pg_id}: needs >= 1 frame and a positive rate")
        if self.flows < 1:
            raise ProtocolError(f"stream {self.pg_id}: needs >= 1 flow")


@dataclass(frozen=True)
class PortInfo:
    """A TRex port as the server describes it."""

    index: int
    hw_mac: str
    driver: str
    speed_gbps: float
    link_up: bool


@dataclass(frozen=True)
class StreamCounts:
    """What one stream sent and what its receiving port counted of it."""

    pg_id: int
    tx_frames: int
    rx_frames: int


@dataclass(frozen=True)
class LatencyCounts:
    """TRex's latency statistics of one latency stream, in microseconds (TRex's unit)."""

    pg_id: int
    min_us: float
    max_us: float
    average_us: float  # TRex's sliding average (a low-pass filter over its 0.5 s windows)
    histogram: dict[str, int]  # bucket start (us) -> frames: [k, k + 10^floor(log10 k)), "0": below 10 us
    dropped: int = 0  # TRex's estimate from sequence numbers
    out_of_order: int = 0
    duplicates: int = 0


@dataclass(frozen=True)
class PortCounts:
    """A TRex port's own counters (every frame it sent or received, not only the test's)."""

    port: int
    tx_frames: int
    rx_frames: int


@dataclass(frozen=True)
class RxSamples:
    """A port's receive counter (every frame it received) sampled while the trial sent."""

    port: int
    times_s: tuple[float, ...]  # after the start request
    frames: tuple[int, ...]


@dataclass(frozen=True)
class RateFit:
    """How one port sent, from its transmit counter sampled during the trial."""

    port: int
    rate_fps: float  # the rate fitted to the samples taken while it sent; 0.0 with fewer than three
    samples: int  # samples taken while the port was sending
    sending_s: float = 0.0  # the last sample (s after the start request) that saw it still sending


# --- requests ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Connect:
    """Connect to the server and take `ports` (reset: no stream, counters cleared)."""

    op: Literal["connect"] = "connect"
    server: str = "127.0.0.1"
    sync_port: int = 4501
    async_port: int = 4500
    ports: tuple[int, ...] = (0, 1)
    promiscuous: bool = False
    timeout_s: float = 10.0


@dataclass(frozen=True)
class RunTrial:
    """Send `streams` (all at once), wait until every port has sent, then `residual_s` for the
    frames in flight (TRex keeps counting them per stream that long), and read the counters."""

    op: Literal["trial"] = "trial"
    streams: tuple[StreamSpec, ...] = ()
    residual_s: float = 2.0
    sample_interval_s: float = 0.02  # how often the transmit counters are read while sending
    timeout_s: float = 60.0  # the longest the ports may send: a trial still sending then fails
    stop_after_s: float = 0.0  # > 0: the ports are stopped that long after the start, their counts read
    announce_start: bool = False  # answer `Started` as soon as the ports started, then the counts
    sample_rx: bool = False  # sample the receive counters too (TrialCounts.rx_samples)

    def __post_init__(self) -> None:
        if not self.streams:
            raise ProtocolError("a trial needs at least one stream")
        pg_ids = [s.pg_id for s in self.streams]
        if len(set(pg_ids)) != len(pg_ids):
            raise ProtocolError(f"stream pg_ids must be distinct, got {pg_ids}")


@dataclass(frozen=True)
class Close:
    """Stop traffic, release the ports, disconnect; the worker then exits."""

    op: Literal["close"] = "close"


Request = Connect | RunTrial | Close


# --- answers ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Connected:
    answer: Literal["connected"] = "connected"
    server_version: str = ""  # e.g. "v3.07"
    client_version: str = ""  # the client's API, e.g. "STL 5.1"
    ports: tuple[PortInfo, ...] = ()


@dataclass(frozen=True)
class Started:
    """The ports of a trial that asked for it (`announce_start`) have started; its counts follow."""

    answer: Literal["started"] = "started"


@dataclass(frozen=True)
class TrialCounts:
    """Counters of one trial, read after the traffic stopped and the residual wait."""

    answer: Literal["trial"] = "trial"
    streams: tuple[StreamCounts, ...] = ()
    ports: tuple[PortCounts, ...] = ()
    latency: tuple[LatencyCounts, ...] = ()
    fits: tuple[RateFit, ...] = ()
    wall_s: float = 0.0  # from the start request to the moment every port had stopped sending
    rx_errors: int = 0  # counted frames TRex could not attribute to a stream (arrived too late)
    rx_samples: tuple[RxSamples, ...] = ()  # with `sample_rx`
    stopped: bool = False  # the ports were stopped at `stop_after_s`, before they had sent everything


@dataclass(frozen=True)
class Closed:
    answer: Literal["closed"] = "closed"


@dataclass(frozen=True)
class Failure:
    answer: Literal["failure"] = "failure"
    kind: FailureKind = "trex"
    message: str = ""


Answer = Connected | Started | TrialCounts | Closed | Failure

# --- encoding -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ready:
    """The worker's first line, before any request: the client is imported, the protocol spoken."""

    answer: Literal["ready"] = "ready"
    protocol: int = PROTOCOL_VERSION
    python: str = ""  # the worker's Python version


_REQUESTS: dict[str, type[Any]] = {"connect": Connect, "trial": RunTrial, "close": Close}
_ANSWERS: dict[str, type[Any]] = {"ready": Ready, "connected": Connected, "started": Started, "trial": TrialCounts,
                                  "closed": Closed, "failure": Failure}
# The dataclass of the items of each field that holds a tuple of them.
_ITEMS: dict[tuple[type[Any], str], type[Any]] = {
    (RunTrial, "streams"): StreamSpec,
    (Connected, "ports"): PortInfo,
    (TrialCounts, "streams"): StreamCounts,
    (TrialCounts, "ports"): PortCounts,
    (TrialCounts, "latency"): LatencyCounts,
    (TrialCounts, "fits"): RateFit,
    (TrialCounts, "rx_samples"): RxSamples,
}
T = TypeVar("T")


def encode(message: Request | Answer | Ready) -> str:
    """One line of JSON (no newline inside) for `message`."""
    return json.dumps(asdict(message), separators=(",", ":"))


def _build(cls: type[T], data: Any, where: str) -> T:
    if not isinstance(data, dict):
        raise ProtocolError(f"{where}: expected an object, got {type(data).__name__}")
    known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - known)
    if unknown:
        raise ProtocolError(f"{where}: unknown field(s) {', '.join(unknown)}")
    values: dict[str, Any] = {}
    for name, value in data.items():
        if isinstance(value, list):
            item = _ITEMS.get((cls, name))
            values[name] = tuple(_build(item, v, f"{where}.{name}") if item else v for v in value)
        else:
            values[name] = value
    try:
        return cls(**values)
    except TypeError as exc:
        raise ProtocolError(f"{where}: {exc}") from exc


def _decode(line: str, table: dict[str, type[Any]], key: str) -> Any:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ProtocolError(f"not JSON: {line[:80]!r} ({exc.msg})") from exc
    if not isinstance(data, dict) or data.get(key) not in table:
        raise ProtocolError(f"no valid {key!r} in {line[:80]!r} (expected one of {', '.join(table)})")
    return _build(table[data[key]], data, data[key])


def decode_request(line: str) -> Request:
    """The request on `line`; ProtocolError when it is not one."""
    request: Request = _decode(line, _REQUESTS, "op")
    return request


def decode_answer(line: str) -> Answer | Ready:
    """The answer on `line`; ProtocolError when it is not one."""
    answer: Answer | Ready = _decode(line, _ANSWERS, "answer")
    return answer
