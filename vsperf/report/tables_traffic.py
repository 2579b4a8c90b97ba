"""The report's tables of what a frame size's traffic adds: the latency at loads after a throughput
search (shown together, one row per load) and, for a frame mix, the frames received per size
against the mix's shares."""

from __future__ import annotations

from typing import Any

from vsperf.report.markup import Rst, grid_table
from vsperf.results.model import FrameSizeResult
from vsperf.search.hdr import HISTOGRAM_PERCENTILES, percentile_key
from vsperf.traffic.mix import MixError, parse_mix

# details keys these tables show (left out of the "Search details" list)
TRAFFIC_DETAIL_KEYS = ("load_latency",)


def _us(value: Any) -> float | None:
    return float(value) / 1e3 if isinstance(value, int | float) and not isinstance(value, bool) else None


def load_latency_table(result: FrameSizeResult) -> tuple[str, Rst] | None:
    """Latency at each load (µs), with the percentiles its trial measured."""
    entries = result.details.get("load_latency") or []
    if not entries:
        return None
    keys = [percentile_key(p) for p in HISTOGRAM_PERCENTILES
            if any(percentile_key(p) in (e.get("percentiles_ns") or {}) for e in entries)]
    header = ("load", "rate (fps)", "loss (%)", "min (µs)", "avg (µs)", *(f"{k} (µs)" for k in keys), "max (µs)")
    rows = []
    for e in entries:
        percentiles = e.get("percentiles_ns") or {}
        rows.append((f"{e.get('load_percent', 0):g} % of {e.get('goal', '?')}", float(e.get("rate_fps") or 0.0),
                     float(e.get("loss_percent") or 0.0), _us(e.get("min_ns")), _us(e.get("avg_ns")),
                     *(_us(percentiles.get(k)) for k in keys), _us(e.get("max_ns"))))
    return "Latency at loads", grid_table(header, rows)


def size_counts_table(result: FrameSizeResult) -> tuple[str, Rst] | None:
    """Frames received per size over the trials that counted them, against the mix's shares."""
    totals: dict[int, int] = {}
    for trial in result.trials:
        for size, count in trial.rx_frames_by_size:
            totals[size] = totals.get(size, 0) + count
    if not totals or isinstance(result.packet_size, int):
        return None
    try:
        shares = parse_mix(result.packet_size).shares
    except MixError:
        shares = {}
    received = sum(totals.values())
    rows = [(size, count, 100.0 * count / received if received else None,
             100.0 * shares[size] if size in shares else None) for size, count in sorted(totals.items())]
    return ("Frames received per size", grid_table(("size (B)", "frames received", "share (%)", "mix share (%)"),
                                                   rows))


def traffic_tables(result: FrameSizeResult) -> list[tuple[str, Rst]]:
    """The tables of `result` this module has data for, in report order."""
    return [t for t in (load_latency_table(result), size_counts_table(result)) if t is not None]
