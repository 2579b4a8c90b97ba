"""Tables of the report besides the metrics and the trial log: the statistics the collectors
recorded (one table per group) and a test's results overview (packet size x key metrics)."""

from __future__ import annotations

import json
from typing import Any

from vsperf.report.markup import Rst, grid_table
from vsperf.results.model import FrameSizeResult, TestResult, jsonable

# Columns of a test's Results overview, in this order, those the test reports (at most 6).
OVERVIEW_KEYS = (
    "tx_rate_fps",
    "throughput_rx_fps",
    "throughput_rx_percent",
    "throughput_rx_mbps",
    "frame_loss_percent",
    "b2b_frames",
    "b2b_frame_loss_percent",
    "b2b_buffer_time_s",
    "avg_latency_ns",
    "max_latency_ns",
)
OVERVIEW_MAX_METRICS = 6
# Label of the rows of statistics groups that are tables (row -> column -> value): CPU 0, ...
MATRIX_ROW_LABELS = {"System CPU": "CPU"}


def statistics_tables(result: FrameSizeResult) -> list[tuple[str, Rst]]:
    """One table per group of collected statistics: Statistic | Value (e.g. per process, as
    VSPERF's reports), or a row per core / port when the group is a table itself."""
    tables = []
    for group, stats in result.statistics.items():
        if not stats:
            continue
        if all(isinstance(v, dict) for v in stats.values()):
            tables.append((group, _matrix_table(MATRIX_ROW_LABELS.get(group, ""), stats)))
        else:
            tables.append((group, grid_table(("Statistic", "Value"), [(k, _stat_value(v)) for k, v in stats.items()])))
    return tables


def _matrix_table(row_label: str, stats: dict[str, Any]) -> Rst:
    # Whichever way is narrower on a page: few rows (2 ports, 3 CPU lines) become columns.
    columns: dict[str, None] = {}
    for row in stats.values():
        columns.update(dict.fromkeys(row))
    if len(stats) <= len(columns):
        header = ("Statistic", *(f"{row_label} {name}" if row_label else name for name in stats))
        body = [(col, *(_stat_value(row.get(col)) for row in stats.values())) for col in columns]
    else:
        header = (row_label or "Row", *columns)
        body = [(name, *(_stat_value(row.get(col)) for col in columns)) for name, row in stats.items()]
    return grid_table(header, body)


def overview_table(test: TestResult) -> Rst | None:
    """Packet size | the test's key metrics | trials: the whole test at a glance."""
    keys = [k for k in OVERVIEW_KEYS if any(k in r.metrics for r in test.results)][:OVERVIEW_MAX_METRICS]
    if not keys:
        return None
    rows = [(r.packet_size, *(r.metrics.get(k) for k in keys), len(r.trials)) for r in test.results]
    return grid_table(("packet_size", *keys, "trials"), rows)


def _stat_value(value: Any) -> Any:
    # Counters and percentages as the collector gave them; nested values as compact JSON.
    if value is None or isinstance(value, int | float | str):
        return value
    return json.dumps(jsonable(value), separators=(", ", ": "))
