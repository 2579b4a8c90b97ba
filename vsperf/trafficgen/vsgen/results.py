"""From the engine's answers to vsperf's results: latency, per-second rows, sequence flags."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

from vsperf.search import hdr
from vsperf.search.measurer import LatencyStats, TrialResult
from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort
from vsperf.trafficgen.vsgen.frames import FCS_BYTES, VLAN_TAG_BYTES
from vsperf.trafficgen.vsgen.histogram import PortLatency, bucket_range, merge, percentiles
from vsperf.trafficgen.vsgen.protocol import PortResult, RunResult, Tick

FLAG_DUPLICATES = "rx_duplicated_frames"  # the same frame arrived more than once
FLAG_REORDERED = "rx_reordered_frames"  # frames arrived after later frames of their stream
# VLAN checks (Frame Modification vlan: the switch tags frames towards the generator), named as trafgen's:
FLAG_RX_UNTAGGED = "rx_untagged_frames"  # test frames arrived without the VLAN tag they should carry
FLAG_RX_WRONG_VLAN = "rx_wrong_vlan"  # test frames arrived tagged where no tag was expected


def hdr_of(hist: Mapping[int, int], min_ns: float, max_ns: float) -> str:
    """The engine's merged histogram as an encoded HDR histogram: each bucket's frames at its
    middle, clamped to the exact minimum and maximum (the buckets are 16 ns wide below 65.5 us,
    64 ns below 1.05 ms: finer than the HDR histogram's 3 digits there)."""
    def middle(bucket: int) -> float:
        low, width = bucket_range(bucket)
        return min(max_ns, max(min_ns, low + width / 2.0))

    return hdr.encode_counts((middle(b), c) for b, c in hist.items())


def latency_stats(ports: Iterable[PortLatency], histogram: bool = False) -> LatencyStats | None:
    """Latency over every frame the given ports received (None when they received none); with
    `histogram`, the whole distribution too (every frame's latency, in the engine's buckets),
    and its percentiles up to 99.999."""
    known = [p for p in ports if p.samples > 0]
    if not known:
        return None
    samples = sum(p.samples for p in known)
    low = float(min(p.min_ns for p in known))
    high = float(max(p.max_ns for p in known))
    merged = merge(p.hist for p in known)
    text = hdr_of(merged, low, high) if histogram else ""
    return LatencyStats(
        min_ns=low,
        avg_ns=sum(p.sum_ns for p in known) / samples,
        max_ns=high,
        percentiles_ns=hdr.percentiles(text) if text else percentiles(merged, low, high),
        samples=samples,
        hdrh=text,
    )


def sizes_received(ports: Iterable[PortResult], pushed_vlan_ports: Collection[int]) -> tuple[tuple[int, int], ...]:
    """Frames received per frame size (FCS included) over `ports`, as sent: a port whose frames the
    switch tagged (`pushed_vlan_ports`) counts them 4 bytes longer than they left."""
    counts: dict[int, int] = {}
    for port in ports:
        extra = VLAN_TAG_BYTES if port.port in pushed_vlan_ports else 0
        for length, frames in port.sizes:
            size = length + FCS_BYTES - extra
            counts[size] = counts.get(size, 0) + frames
    return tuple(sorted(counts.items()))


def sequence_flags(result: RunResult) -> tuple[str, ...]:
    """Flags for what the sequence analysis found: duplicates, reordering."""
    flags: list[str] = []
    if any(d.dup or d.excess for d in result.dirs):
        flags.append(FLAG_DUPLICATES)
    if any(d.reorder for d in result.dirs):
        flags.append(FLAG_REORDERED)
    return tuple(flags)


def vlan_flags(result: RunResult, tagged_ports: Collection[int]) -> tuple[str, ...]:
    """Flags for test frames whose VLAN tag is not what the receiving port expects: a tag on the
    ports of `tagged_ports` (the engine counts tagged frames, whatever their VLAN id), none elsewhere."""
    flags: list[str] = []
    for port in result.ports:
        if port.port in tagged_ports and port.frames > port.tagged:
            flags.append(FLAG_RX_UNTAGGED)
        elif port.port not in tagged_ports and port.tagged:
            flags.append(FLAG_RX_WRONG_VLAN)
    return tuple(dict.fromkeys(flags))


def _mbps(fps: float, frame_size_bytes: float) -> float:
    """L2 megabits per second (frame bytes with FCS, no preamble), as VSPERF reports them."""
    return fps * frame_size_bytes * 8 / 1e6


def second_row(previous: Tick | None, tick: Tick, tx_ports: Mapping[int, int], frame_size_bytes: float
               ) -> dict[str, float] | None:
    """Rates between two ticks: aggregate and per port (tx of the directions a port sends,
    rx of the frames it received). None when no time passed between them."""
    t0 = previous.t_s if previous else 0.0
    dt = tick.t_s - t0
    if dt <= 0:
        return None
    tx_by_port: dict[int, float] = {}
    for direction, count in tick.tx.items():
        before = previous.tx.get(direction, 0) if previous else 0
        port = tx_ports.get(direction, direction)
        tx_by_port[port] = tx_by_port.get(port, 0.0) + (count - before) / dt
    rx_by_port = {
        port: (count - (previous.rx.get(port, 0) if previous else 0)) / dt for port, count in tick.rx.items()
    }
    tx_fps = sum(tx_by_port.values())
    rx_fps = sum(rx_by_port.values())
    row = {
        "time_s": tick.t_s,
        "tx_fps": tx_fps,
        "rx_fps": rx_fps,
        "tx_mbps": _mbps(tx_fps, frame_size_bytes),
        "rx_mbps": _mbps(rx_fps, frame_size_bytes),
    }
    for port in sorted(set(tx_by_port) | set(rx_by_port)):
        tx = tx_by_port.get(port, 0.0)
        rx = rx_by_port.get(port, 0.0)
        row[f"port{port}_tx_fps"] = tx
        row[f"port{port}_rx_fps"] = rx
        row[f"port{port}_tx_mbps"] = _mbps(tx, frame_size_bytes)
        row[f"port{port}_rx_mbps"] = _mbps(rx, frame_size_bytes)
    return row


def per_second_rows(ticks: Sequence[Tick], tx_ports: Mapping[int, int], frame_size_bytes: float,
                    previous: Tick | None = None) -> list[dict[str, float]]:
    """One row per tick (see `second_row`); `previous` is the tick before the first one."""
    rows: list[dict[str, float]] = []
    for tick in ticks:
        row = second_row(previous, tick, tx_ports, frame_size_bytes)
        if row is not None:
            rows.append(row)
        previous = tick
    return rows


def trial_result(kind: str, traffic: Traffic, rate: float, duration: float, result: RunResult, ticks: Sequence[Tick],
                 ports: Sequence[GenPort]) -> TrialResult:
    """The TrialResult of one engine run on the generator's `ports`."""
    tx = sum(d.tx_frames for d in result.dirs)
    rx = sum(d.unique_rx_frames for d in result.dirs)
    actual = sum(d.achieved_fps for d in result.dirs)
    rx_ports = {d.rx_port for d in result.dirs}
    latency = latency_stats([p.latency for p in result.ports if p.port in rx_ports], traffic.latency_histogram)
    tx_ports = {d.direction: d.tx_port for d in result.dirs}
    # A port expects tagged frames when the switch pushes a VLAN towards it, or the traffic is tagged.
    tagged = {i for i, p in enumerate(ports) if p.rx_vlan_id is not None or traffic.vlan.enabled}
    pushed = {i for i, p in enumerate(ports) if p.rx_vlan_id is not None and not traffic.vlan.enabled}
    sizes = sizes_received([p for p in result.ports if p.port in rx_ports], pushed) if traffic.mix else ()
    return TrialResult.measured(
        kind, traffic, rate, duration, tx, rx, actual, latency=latency,
        flags=sequence_flags(result) + vlan_flags(result, tagged),
        per_second=tuple(per_second_rows(ticks, tx_ports, traffic.mean_frame_bytes)),
        warm_frames=sum(d.warm_tx for d in result.dirs), rx_frames_by_size=sizes,
    )
