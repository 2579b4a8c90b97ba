"""The seeds' tables, built from a benchmark result's details (results files only).

`seed_tables` gives the report's tables as the seeds print them (units in the cells);
`csv_tables` the same data with plain numbers, one CSV file each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Keys of a result's details that hold a benchmark's tables (not shown as plain details).
TABLE_DETAIL_KEYS = ("rows", "runs", "points")


@dataclass(frozen=True)
class Table:
    """One table: a title, a short key (CSV file suffix), a header and rows of cells."""

    title: str
    key: str
    header: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]


def _sched(name: str, priority: int) -> str:
    return f"SCHED_{name}" + (f" ({priority})" if priority else "")


def _bytes_text(n: int) -> str:
    if n == 0:
        return "default"
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"


def _rate_text(bps: float) -> str:
    for unit, scale in (("Gbits/sec", 1e9), ("Mbits/sec", 1e6), ("Kbits/sec", 1e3)):
        if bps >= scale:
            return f"{bps / scale:.2f} {unit}"
    return f"{bps:.2f} bits/sec"


def _transfer_text(n: int) -> str:
    for unit, scale in (("GBytes", 1 << 30), ("MBytes", 1 << 20), ("KBytes", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n} Bytes"


def _opt(value: Any, fmt: str) -> str:
    return "" if value is None else format(value, fmt)


def udploss_table(rows: Sequence[Mapping[str, Any]]) -> Table:
    """seeds/004's table: one row per measurement."""
    header = ("Client Scheduler", "Connected Mode", "Payload", "Server Scheduler", "RcvBuf", "Method",
              "Loss %", "Data", "Wire")
    body = tuple(
        (
            _sched(r["sender_sched"], r["sender_priority"]),
            "Yes" if r["connected"] else "No",
            r["payload_bytes"],
            _sched(r["receiver_sched"], r["receiver_priority"]),
            _bytes_text(r["rcvbuf_bytes"]),
            r["method"],
            f"{r['loss_percent']:.3f}",
            f"{r['data_mbps']:.1f} Mbps",
            f"{r['wire_mbps']:.1f} Mbps",
        )
        for r in rows
    )
    return Table("UDP message loss (seeds/004)", "rows", header, body)


def iperf_summary_table(runs: Sequence[Mapping[str, Any]]) -> Table:
    """seeds/002's client table, per stack: sender and receiver totals, retransmits, UDP loss and jitter."""
    header = ("Stack", "Interval", "Transfer", "Bandwidth", "Retr", "Loss %", "Jitter ms", "sender/receiver")
    body: list[tuple[Any, ...]] = []
    for run in runs:
        s = run["summary"]
        interval = f"0.00-{s['duration_s']:.2f} sec"
        body.append((run["stack"], interval, _transfer_text(s["sender_bytes"]), _rate_text(s["sender_bps"]),
                     _opt(s["retransmits"], "d"), "", "", "sender"))
        body.append((run["stack"], interval, _transfer_text(s["receiver_bytes"]), _rate_text(s["receiver_bps"]),
                     "", _opt(s["loss_percent"], ".3f"), _opt(s["jitter_ms"], ".3f"), "receiver"))
    return Table("Bandwidth summary (seeds/002)", "summary", tuple(header), tuple(body))


def iperf_per_second_table(runs: Sequence[Mapping[str, Any]]) -> Table:
    """seeds/000's table: per interval, each stack's sender (S) and receiver (R) Mbit/s and kpps,
    the stacks side by side."""
    udp = any(r["per_second"] and r["per_second"][0]["sender_kpps"] is not None for r in runs)
    header: list[str] = []
    for run in runs:
        stack = run["stack"]
        header += [f"{stack} S:mbps", *([f"{stack} S:kpps"] if udp else []),
                   f"{stack} R:mbps", *([f"{stack} R:kpps"] if udp else [])]
    header.append("info")
    length = max((len(r["per_second"]) for r in runs), default=0)
    body = []
    for i in range(length):
        cells: list[Any] = []
        end_s = 0.0
        for run in runs:
            row = run["per_second"][i] if i < len(run["per_second"]) else {}
            end_s = max(end_s, float(row.get("end_s", 0.0)))
            cells.append(_opt(row.get("sender_mbps"), ".0f"))
            if udp:
                cells.append(_opt(row.get("sender_kpps"), ".0f"))
            cells.append(_opt(row.get("receiver_mbps"), ".0f"))
            if udp:
                cells.append(_opt(row.get("receiver_kpps"), ".0f"))
        seconds = round(end_s)
        cells.append(f"{seconds // 60:02d}:{seconds % 60:02d}")
        body.append(tuple(cells))
    return Table("Per-second bandwidth (seeds/000)", "per_second", tuple(header), tuple(body))


def _num(value: Any, fmt: str = ".3f") -> str:
    return "n/a" if value is None else format(value, fmt)


def sweep_bw_table(points: Sequence[Mapping[str, Any]]) -> Table:
    """seeds/003's test_perf_bw table: one row per (size, flows) point."""
    header = ("direction", "size", "flows", "Tx queues DUT / Tester", "type", "Rx on DUT, Gb/s",
              "Rx on Tester, Gb/s", "Rx on DUT, Mpps", "Rx on Tester, Mpps")
    body = tuple(
        (p["direction"], p["size"], p["flows"], p["queues"], p["type"], _num(p["rx_dut_gbps"]),
         _num(p["rx_tester_gbps"]), _num(p["rx_dut_mpps"]), _num(p["rx_tester_mpps"]))
        for p in points
    )
    return Table("Bandwidth sweep (seeds/003 test_perf_bw)", "points", header, body)


def sweep_latency_table(points: Sequence[Mapping[str, Any]]) -> Table:
    """seeds/003's test_perf_latency table."""
    header = ("size", "p50, us", "p90, us", "p99, us", "pkt loss, %")
    body = tuple((p["size"], _num(p["p50_us"], ".1f"), _num(p["p90_us"], ".1f"), _num(p["p99_us"], ".1f"),
                  _num(p["loss_percent"])) for p in points)
    return Table("Latency (seeds/003 test_perf_latency)", "points", header, body)


def seed_tables(details: Mapping[str, Any]) -> list[Table]:
    """The tables of one benchmark result (none for other traffic types)."""
    kind = str(details.get("benchmark", ""))
    if kind == "sweep_bw":
        return [sweep_bw_table(details["points"])]
    if kind == "sweep_latency":
        return [sweep_latency_table(details["points"])]
    if kind == "udp_msg_loss":
        return [udploss_table(details["rows"])]
    if kind.startswith("iperf3"):
        return [iperf_summary_table(details["runs"]), iperf_per_second_table(details["runs"])]
    return []


def csv_tables(details: Mapping[str, Any]) -> list[Table]:
    """The same data as `seed_tables` with plain numbers: udploss rows, iperf3 per-second rows."""
    kind = str(details.get("benchmark", ""))
    if kind in ("sweep_bw", "sweep_latency"):
        points = details["points"]
        header = tuple(k for k in points[0] if k != "flags") if points else ()
        return [Table("points", "points", header, tuple(tuple(p[k] for k in header) for p in points))]
    if kind == "udp_msg_loss":
        rows = details["rows"]
        header = tuple(rows[0]) if rows else ()
        return [Table("rows", "rows", header, tuple(tuple(r[k] for k in header) for r in rows))]
    if kind.startswith("iperf3"):
        runs = details["runs"]
        keys = next((tuple(r["per_second"][0]) for r in runs if r["per_second"]), ())
        body = tuple((run["stack"], *(row[k] for k in keys)) for run in runs for row in run["per_second"])
        summary_keys = tuple(runs[0]["summary"]) if runs else ()
        summary = tuple((run["stack"], *(run["summary"][k] for k in summary_keys)) for run in runs)
        return [Table("per_second", "per_second", ("stack", *keys), body),
                Table("summary", "summary", ("stack", *summary_keys), summary)]
    return []
