"""VSPERF's performance matrix (`--matrix`): every test of a run against the first one.

For the metric MATRIX_METRIC (throughput_rx_fps by default) and every frame size, each test's
value and its change in % of the first test's value at the same frame size. Typical use: the
same test under several configurations (`phy2phy_tput` with different switches or settings
as separate test cases), to see at a glance which one is faster and by how much.
Read from the results files only; written as matrix.rst next to the report and printed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vsperf.report.markup import Rst, format_value, grid_table
from vsperf.results.atomic import write_text_atomic
from vsperf.results.model import RunResults, as_number
from vsperf.results.sizes import PacketSize, size_label, size_sort_key

MATRIX_FILE = "matrix.rst"
DEFAULT_METRIC = "throughput_rx_fps"  # as conf/04_report.yaml


@dataclass(frozen=True)
class MatrixRow:
    """One test of the matrix."""

    index: int  # the test's index in the run
    name: str
    deployment: str
    values: dict[PacketSize, float | None]  # frame size -> metric value (None: not measured)
    changes_percent: dict[PacketSize, float | None]  # frame size -> % change against the first test


def performance_matrix(run: RunResults, metric: str = DEFAULT_METRIC) -> tuple[list[PacketSize], list[MatrixRow]]:
    """(frame sizes, one row per test); the first row is the reference (its changes are 0)."""
    sizes = sorted({r.packet_size for t in run.tests for r in t.results}, key=size_sort_key)
    rows: list[MatrixRow] = []
    reference: dict[PacketSize, float | None] = {}
    for position, test in enumerate(run.tests):
        values = {s: None for s in sizes} | {r.packet_size: as_number(r.metrics.get(metric)) for r in test.results}
        if position == 0:
            reference = values
        changes: dict[PacketSize, float | None] = {}
        for size in sizes:
            base, value = reference.get(size), values.get(size)
            changes[size] = 100.0 * (value - base) / abs(base) if base and value is not None else None
        rows.append(MatrixRow(test.index, test.name, test.deployment, values, changes))
    return sizes, rows


def _header(sizes: Sequence[PacketSize], metric: str) -> list[str]:
    header = ["#", "Test", "Deployment"]
    for size in sizes:
        header += [f"{size_label(size)} {metric}", f"{size_label(size)} vs #0 (%)"]
    return header


def _cells(row: MatrixRow, sizes: Sequence[PacketSize]) -> list[Any]:
    cells: list[Any] = [row.index, row.name, row.deployment]
    for size in sizes:
        cells += [row.values.get(size), row.changes_percent.get(size)]
    return cells


def matrix_table(sizes: Sequence[PacketSize], rows: Sequence[MatrixRow], metric: str) -> Rst:
    """The matrix as an RST grid table."""
    return grid_table(_header(sizes, metric), [_cells(r, sizes) for r in rows])


def matrix_text(sizes: Sequence[PacketSize], rows: Sequence[MatrixRow], metric: str) -> str:
    """The matrix as a plain-text table for the terminal (numbers right-aligned)."""
    header = _header(sizes, metric)
    body = [[format_value(c) if not isinstance(c, str) else c for c in _cells(r, sizes)] for r in rows]
    widths = [max(len(str(line[i])) for line in [header, *body]) for i in range(len(header))]

    def line(cells: Sequence[str], numbers: bool) -> str:
        out = [c.rjust(widths[i]) if numbers and i not in (1, 2) else c.ljust(widths[i]) for i, c in enumerate(cells)]
        return "  ".join(out).rstrip()

    return "\n".join([line(header, False), *(line(b, True) for b in body)])


def write_matrix(run: RunResults, results_dir: Path, metric: str = DEFAULT_METRIC) -> tuple[Path, str]:
    """Write results_dir/matrix.rst; returns its path and the matrix as plain text (to print)."""
    sizes, rows = performance_matrix(run, metric)
    title = f"Performance matrix: {metric}, every test against test #0"
    if not rows:
        table = text = "No test was run."
    elif not any(v is not None for r in rows for v in r.values.values()):
        table = text = f"No test reported {metric}."
    else:
        table, text = str(matrix_table(sizes, rows, metric)), matrix_text(sizes, rows, metric)
    path = results_dir / MATRIX_FILE
    write_text_atomic(path, f"{title}\n{'=' * len(title)}\n\n{table}\n")
    return path, f"{title}\n\n{text}\n"
