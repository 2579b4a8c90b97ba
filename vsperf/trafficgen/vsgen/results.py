"""From the engine's answers to vsperf's results: latency, per-second rows, sequence flags."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

from vsperf.search.measurer import LatencyStats
from vsperf.trafficgen.vsgen.histogram import PortLatency, merge, percentiles
from vsperf.trafficgen.vsgen.protocol import RunResult, Tick

FLAG_DUPLICATES = "rx_duplicated_frames"  # the same frame arrived more than once
FLAG_REORDERED = "rx_reordered_frames"  # frames arrived after later frames of their stream
# VLAN checks (Frame Modification vlan: the switch tags frames towards the generator), named as trafgen's:
FLAG_RX_UNTAGGED = "rx_untagged_frames"  # test frames arrived without the VLAN tag they should carry
FLAG_RX_WRONG_VLAN = "rx_wrong_vlan"  # test frames arrived tagged where no tag was expected


def latency_stats(ports: Iterable[PortLatency]) -> LatencyStats | None:
    """Latency over every frame the given ports received (None when they received none)."""
    known = [p for p in ports if p.samples > 0]
    if not known:
        return None
    samples = sum(p.samples for p in known)
    low = float(min(p.min_ns for p in known))
    high = float(max(p.max_ns for p in known))
    return LatencyStats(
        min_ns=low,
        avg_ns=sum(p.sum_ns for p in known) / samples,
        max_ns=high,
        percentiles_ns=percentiles(merge(p.hist for p in known), low, high),
        samples=samples,
    )


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


def _mbps(fps: float, frame_size_bytes: int) -> float:
    """L2 megabits per second (frame bytes with FCS, no preamble), as VSPERF reports them."""
    return fps * frame_size_bytes * 8 / 1e6


def second_row(previous: Tick | None, tick: Tick, tx_ports: Mapping[int, int], frame_size_bytes: int
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


def per_second_rows(ticks: Sequence[Tick], tx_ports: Mapping[int, int], frame_size_bytes: int,
                    previous: Tick | None = None) -> list[dict[str, float]]:
    """One row per tick (see `second_row`); `previous` is the tick before the first one."""
    rows: list[dict[str, float]] = []
    for tick in ticks:
        row = second_row(previous, tick, tx_ports, frame_size_bytes)
        if row is not None:
            rows.append(row)
        previous = tick
    return rows
