"""The line protocol of the vsgen engine: commands it reads, JSON events it writes.

Commands (one line each; see csrc/main.c and run.c):
    port I netns=NAME|- ifname=IF [raw=N]
    dir D tx=I rx=J streams=N vary=none|mac|ip|udp|smac base=V l3=14|18|52|56|60|64|68 frame=HEX
        [sizes=L,L,...]
    run mode=rate|burst|cont dirs=D[,D] [rate=FPS] [frames=N[,N]] [path=auto|xdp|afxdp|packet]
        [residual=S] [detail=K] [cpus=C[,C]] [tick=S] [rate2=FPS frames2=N] [threads=N] [pass=N]
        [warm=N[,N] warm_rate=FPS [warm_rate2=FPS]] [hist=0|1] [sizes=0|1] [raw=0|1]
    stop | ping | quit
Events: hello, ok, tick, result, error, bye (a JSON object per line, "ev" names it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from vsperf.config.schema_vsgen import MAX_TX_THREADS, PATHS, Path
from vsperf.errors import TrafficGenError
from vsperf.trafficgen.vsgen.frames import MAX_DIRECTIONS, MAX_STREAMS, Vary
from vsperf.trafficgen.vsgen.histogram import PortLatency

Mode = Literal["rate", "burst", "cont"]
MAX_PORTS = 16
MAX_MIX_FRAMES = 1024  # lengths of one group of a frame mix (VSG_MIX_MAX)
MAX_RAW_LATENCIES = 1 << 24  # latencies a port keeps raw (VSG_MAX_RAW)
_NAME = re.compile(r"^[A-Za-z0-9_.:@-]{1,63}$")


class EngineProtocolError(TrafficGenError):
    """The engine said something this side does not understand."""


def _name(value: str, what: str) -> str:
    if not _NAME.match(value):
        raise ValueError(f"{what} {value!r} is not a plain name")
    return value


def port_command(index: int, netns: str | None, ifname: str, raw: int = 0) -> str:
    """Open generator port `index`: interface `ifname` in namespace `netns` (None: the engine's);
    `raw`: latencies it can keep one by one (runs with raw=True)."""
    if not 0 <= index < MAX_PORTS:
        raise ValueError(f"port index {index} outside 0..{MAX_PORTS - 1}")
    if len(ifname) > 15:
        raise ValueError(f"interface name {ifname!r} is longer than 15 characters")
    if not 0 <= raw <= MAX_RAW_LATENCIES:
        raise ValueError(f"raw latencies {raw} outside 0..{MAX_RAW_LATENCIES}")
    ns = _name(netns, "namespace") if netns else "-"
    return f"port {index} netns={ns} ifname={_name(ifname, 'interface')}" + (f" raw={raw}" if raw else "")


def dir_command(direction: int, tx_port: int, rx_port: int, streams: int, vary: Vary, base: int, l3: int,
                frame: bytes, sizes: tuple[int, ...] = ()) -> str:
    """Define direction `direction`: `frame` (without FCS) from `tx_port` to `rx_port`; `sizes`:
    a frame mix's sending pattern, each frame cut to the next length (without FCS, at most
    len(frame))."""
    if not 0 <= direction < MAX_DIRECTIONS:
        raise ValueError(f"direction {direction} outside 0..{MAX_DIRECTIONS - 1}")
    if not 1 <= streams <= MAX_STREAMS:
        raise ValueError(f"streams {streams} outside 1..{MAX_STREAMS}")
    if l3 not in (14, 18, 52, 56, 60, 64, 68):
        raise ValueError(f"l3 offset {l3} is not 14, 18 or a tunnel's 52, 56, 60, 64, 68")
    if len(sizes) > MAX_MIX_FRAMES or any(not 0 < n <= len(frame) for n in sizes):
        raise ValueError(f"a frame mix's pattern needs 1..{MAX_MIX_FRAMES} lengths of at most {len(frame)} bytes")
    mix = f" sizes={','.join(str(n) for n in sizes)}" if sizes else ""
    return (f"dir {direction} tx={tx_port} rx={rx_port} streams={streams} vary={vary} base={base} "
            f"l3={l3} frame={frame.hex()}{mix}")


@dataclass(frozen=True)
class RunRequest:
    """One run of the engine; rates and frame counts are per direction."""

    mode: Mode
    dirs: tuple[int, ...]
    rate_fps: float = 0.0  # per direction; 0 for a burst (as fast as possible)
    frames: tuple[int, ...] = ()  # per direction (one value: the same for each); none when continuous
    path: Path = "auto"
    residual_s: float = 2.0
    detail_streams: int = 64  # per-stream counters reported when a direction has at most this many
    # Transmit thread j (direction by direction, `threads` each) on cpus[j % len(cpus)].
    cpus: tuple[int, ...] = ()
    tick_s: float = 1.0
    # Two-rate run (rate mode; RFC 2544 system recovery): after `frames`, each direction goes on
    # without a pause with `frames2` frames at `rate2_fps` (0 and 0: one rate).
    rate2_fps: float = 0.0
    frames2: int = 0
    # Transmit threads per direction (at most one per stream): thread t sends streams t, t+N, ...,
    # its share of the frames and of the rate; the counts add up to the direction's exactly.
    threads: int = 1
    # Warm start per direction: frames sent first (not counted), from warm_rate_fps up to
    # warm_rate2_fps (0: a lead-in at warm_rate_fps).
    warm_frames: int = 0
    warm_rate_fps: float = 0.0
    warm_rate2_fps: float = 0.0
    histogram: bool = True  # False: no latency histogram (what it costs, for the bench)
    count_sizes: bool = False  # count received frames per length (a frame mix)
    raw: bool = False  # keep every latency (ports opened with raw=N)
    # Test frames each receive queue of a port passes to the kernel per trial (counted as usual),
    # so that a packet capture on the port sees them (TRAFFIC capture, frame modification checks).
    pass_frames: int = 0

    def __post_init__(self) -> None:
        if (self.rate2_fps > 0) != (self.frames2 > 0) or self.rate2_fps < 0 or self.frames2 < 0:
            raise ValueError(f"rate2 and frames2 go together, got {self.rate2_fps} fps, {self.frames2} frames")
        if self.frames2 and self.mode != "rate":
            raise ValueError("a two-rate run (rate2, frames2) must be a rate run")
        if not self.dirs:
            raise ValueError("a run needs at least one direction")
        if self.mode != "burst" and not self.rate_fps > 0:
            raise ValueError(f"a {self.mode} run needs a rate above 0 frames/s, got {self.rate_fps}")
        if self.mode != "cont" and (len(self.frames) not in (1, len(self.dirs)) or min(self.frames) < 1):
            raise ValueError(f"a {self.mode} run needs frame counts >= 1 per direction, got {self.frames}")
        if self.path not in PATHS:
            raise ValueError(f"path {self.path!r} is not one of {', '.join(PATHS)}")
        if not 0 <= self.residual_s <= 60:
            raise ValueError(f"residual wait {self.residual_s} s outside 0..60 s")
        if self.tick_s < 0.05:
            raise ValueError(f"tick {self.tick_s} s below 0.05 s")
        if not 1 <= self.threads <= MAX_TX_THREADS:
            raise ValueError(f"transmit threads {self.threads} outside 1..{MAX_TX_THREADS}")
        if not 0 <= self.pass_frames <= 1_000_000:
            raise ValueError(f"frames passed to a capture {self.pass_frames} outside 0..1000000")
        if self.frames2 and self.threads > 1:
            raise ValueError("a two-rate run (rate2, frames2) transmits from one thread per direction")
        if self.warm_frames < 0 or (self.warm_frames and self.warm_rate_fps <= 0) or self.warm_rate2_fps < 0:
            raise ValueError(f"a warm start needs frames >= 0 and a positive rate, got {self.warm_frames} frames "
                             f"at {self.warm_rate_fps} fps")

    def command(self) -> str:
        """The engine's command line for this run."""
        words = [f"run mode={self.mode}", "dirs=" + ",".join(str(d) for d in self.dirs)]
        if self.mode != "burst":
            words.append(f"rate={self.rate_fps:.6f}")
        if self.mode != "cont":
            words.append("frames=" + ",".join(str(n) for n in self.frames))
        words += [f"path={self.path}", f"residual={self.residual_s:g}", f"detail={self.detail_streams}",
                  f"tick={self.tick_s:g}"]
        if self.cpus:
            words.append("cpus=" + ",".join(str(c) for c in self.cpus))
        if self.frames2:
            words += [f"rate2={self.rate2_fps:.6f}", f"frames2={self.frames2}"]
        if self.threads > 1:
            words.append(f"threads={self.threads}")
        if self.warm_frames:
            words += [f"warm={self.warm_frames}", f"warm_rate={self.warm_rate_fps:.6f}"]
            if self.warm_rate2_fps:
                words.append(f"warm_rate2={self.warm_rate2_fps:.6f}")
        if not self.histogram:
            words.append("hist=0")
        if self.count_sizes:
            words.append("sizes=1")
        if self.raw:
            words.append("raw=1")
        if self.pass_frames:
            words.append(f"pass={self.pass_frames}")
        return " ".join(words)


@dataclass(frozen=True)
class Tick:
    """Cumulative counters at `t_s` seconds into a run."""

    t_s: float
    tx: dict[int, int]  # frames sent, per direction
    rx: dict[int, int]  # frames of this trial received (duplicates included), per port


@dataclass(frozen=True)
class StreamCounts:
    """One stream's counters (reported for directions with few streams)."""

    stream: int
    tx: int
    rx: int  # duplicates included
    dup: int
    reorder: int


@dataclass(frozen=True)
class DirResult:
    """What one direction sent, and what its receiving port got of it."""

    direction: int
    tx_port: int
    rx_port: int
    path: str  # "xdp-live", "af_xdp" or "af_packet"
    path_note: str  # why XDP was not used, when it was not
    ring_drops: int | None  # frames the peer's full ring refused (XDP on veth), None: not known
    streams: int
    requested_fps: float
    frames_requested: int
    tx_frames: int
    tx_time_s: float
    achieved_fps: float
    cpu_s: float  # CPU time of the transmit threads (summed)
    rx_frames: int  # duplicates included
    dup: int
    reorder: int
    lost: int  # sum over streams of frames sent and never received
    excess: int  # frames received beyond those sent (duplicates not recognised as such)
    streams_with_loss: int
    max_stream_loss: int
    detail: tuple[StreamCounts, ...]
    t_start_ns: int = 0  # CLOCK_MONOTONIC time the first frame was due (the receive times' clock)
    rate2_fps: float = 0.0  # two-rate run: the rate after the change (0: one rate)
    frames2_requested: int = 0
    tx1_frames: int = 0  # frames sent before the rate change (all, in a one-rate run)
    t_drop_s: float = 0.0  # when the second rate's schedule started, after t_start_ns (0: no change)
    rx2_frames: int = 0  # frames received that were sent after the change (duplicates included)
    # Index (sequence * streams + stream: frames are sent in that order) of the last frame lost:
    # skipped by a later frame of its stream, or never followed by one; -1 when none was lost.
    last_lost_index: int = -1
    threads: int = 1  # transmit threads that sent this direction (at most one per stream)
    warm_tx: int = 0  # frames of its warm start (sent before, never counted)

    @property
    def unique_rx_frames(self) -> int:
        """Frames received, each counted once."""
        return self.rx_frames - self.dup


@dataclass(frozen=True)
class PortResult:
    """Receive counters of one port over the trial."""

    port: int
    rx_mode: str  # "native" or "generic" XDP
    frames: int
    dup: int
    reorder: int
    late: int
    stale: int
    foreign: int
    other: int
    tagged: int
    latency: PortLatency
    # Receive times (CLOCK_MONOTONIC ns) of this trial's test frames: first, last, and the longest
    # interval between two consecutive ones with the time of the frame that ended it (0: none).
    first_rx_ns: int = 0
    last_rx_ns: int = 0
    gap_max_ns: int = 0
    gap_end_ns: int = 0
    warm: int = 0  # frames of the warm start received (never counted)
    sizes: tuple[tuple[int, int], ...] = ()  # (frame length without FCS, frames received), when counted
    raw: tuple[int, ...] = ()  # every latency, ns, when kept (the first raw_cap)
    raw_seen: int = 0  # latencies the port saw while keeping them (more than raw when it was full)


@dataclass(frozen=True)
class RunResult:
    """The engine's answer to one run."""

    mode: str
    trial_tag: int
    elapsed_s: float
    cpu_s: float  # CPU time of the whole engine process over the run
    residual_s: float
    stopped_by: str  # "done", "stop", "signal" or "eof"
    dirs: tuple[DirResult, ...]
    ports: tuple[PortResult, ...]


def parse_event(line: str) -> dict[str, Any]:
    """One engine output line as a dict with an "ev" key."""
    try:
        event = json.loads(line)
    except json.JSONDecodeError as exc:
        raise EngineProtocolError(f"vsgen engine wrote something that is not JSON: {line[:120]!r}") from exc
    if not isinstance(event, dict) or not isinstance(event.get("ev"), str):
        raise EngineProtocolError(f"vsgen engine wrote an event without 'ev': {line[:120]!r}")
    return event


def parse_tick(event: dict[str, Any]) -> Tick:
    try:
        return Tick(
            float(event["t"]),
            {int(k): int(v) for k, v in event["tx"].items()},
            {int(k): int(v) for k, v in event["rx"].items()},
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise EngineProtocolError(f"malformed tick event: {event}") from exc


def _dir(d: dict[str, Any]) -> DirResult:
    ring = int(d["ring_drops"])
    return DirResult(
        direction=int(d["dir"]), tx_port=int(d["tx_port"]), rx_port=int(d["rx_port"]), path=str(d["path"]),
        path_note=str(d.get("path_note", "")), ring_drops=ring if ring >= 0 else None,
        streams=int(d["streams"]), requested_fps=float(d["requested_fps"]),
        frames_requested=int(d["frames_requested"]), tx_frames=int(d["tx"]), tx_time_s=float(d["tx_time_s"]),
        achieved_fps=float(d["achieved_fps"]), cpu_s=float(d["cpu_s"]), rx_frames=int(d["rx"]),
        dup=int(d["dup"]), reorder=int(d["reorder"]), lost=int(d["lost"]), excess=int(d["excess"]),
        streams_with_loss=int(d["streams_with_loss"]), max_stream_loss=int(d["max_stream_loss"]),
        detail=tuple(StreamCounts(*(int(x) for x in row)) for row in d.get("detail", ())),
        t_start_ns=int(float(d.get("t_start_ns", 0))), rate2_fps=float(d.get("rate2_fps", 0.0)),
        frames2_requested=int(d.get("frames2_requested", 0)), tx1_frames=int(d.get("tx1", d["tx"])),
        t_drop_s=float(d.get("t_drop_s", 0.0)), rx2_frames=int(d.get("rx2", 0)),
        last_lost_index=int(d.get("last_lost", -1)), threads=int(d.get("threads", 1)),
        warm_tx=int(d.get("warm_tx", 0)),
    )


def _port(p: dict[str, Any]) -> PortResult:
    frames = int(p["frames"])
    return PortResult(
        port=int(p["port"]), rx_mode=str(p["rx_mode"]), frames=frames, dup=int(p["dup"]),
        reorder=int(p["reorder"]), late=int(p["late"]), stale=int(p["stale"]), foreign=int(p["foreign"]),
        other=int(p["other"]), tagged=int(p["tagged"]),
        latency=PortLatency(
            samples=frames, sum_ns=int(p["lat_sum_ns"]), min_ns=int(p["lat_min_ns"]),
            max_ns=int(p["lat_max_ns"]), hist=tuple((int(b), int(c)) for b, c in p["hist"]),
        ),
        first_rx_ns=int(p.get("first_ns", 0)), last_rx_ns=int(p.get("last_ns", 0)),
        gap_max_ns=int(p.get("gap_max_ns", 0)), gap_end_ns=int(p.get("gap_end_ns", 0)),
        warm=int(p.get("warm", 0)), sizes=tuple((int(n), int(c)) for n, c in p.get("sizes", ())),
        raw=tuple(int(v) for v in p.get("raw", ())), raw_seen=int(p.get("raw_seen", 0)),
    )


def parse_result(event: dict[str, Any]) -> RunResult:
    """A "result" event as a RunResult."""
    try:
        return RunResult(
            mode=str(event["mode"]), trial_tag=int(event["trial_tag"]), elapsed_s=float(event["elapsed_s"]),
            cpu_s=float(event["cpu_s"]), residual_s=float(event["residual_s"]),
            stopped_by=str(event["stopped_by"]),
            dirs=tuple(_dir(d) for d in event["dirs"]),
            ports=tuple(_port(p) for p in event["ports"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise EngineProtocolError(f"malformed result event ({exc!r}): {str(event)[:200]}") from exc
