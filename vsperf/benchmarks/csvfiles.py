"""A benchmark's tables as CSV files next to the test's CSV (results files only)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from vsperf.benchmarks.tables import csv_tables
from vsperf.results.atomic import write_text_atomic
from vsperf.results.csvfile import csv_filename, format_cell
from vsperf.results.model import TestResult
from vsperf.results.sizes import size_slug


def benchmark_csv_paths(results_dir: Path, test: TestResult) -> list[Path]:
    """(Re)write result_<idx>_<Name>_<Deployment>_<size>_<table>.csv for every benchmark table
    of `test` (udp_msg_loss: rows; iperf3: per_second, summary); returns their paths."""
    stem = csv_filename(test.index, test.name, test.deployment).removesuffix(".csv")
    paths = []
    for result in test.results:
        for table in csv_tables(result.details):
            out = io.StringIO()
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow(table.header)
            for row in table.rows:
                writer.writerow([format_cell(v) for v in row])
            path = results_dir / f"{stem}_{size_slug(result.packet_size)}_{table.key}.csv"
            write_text_atomic(path, out.getvalue())
            paths.append(path)
    return paths
