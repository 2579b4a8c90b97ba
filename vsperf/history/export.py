"""`vsperf history export`: every measurement under the filters as CSV or JSON, streamed."""

from __future__ import annotations

import csv
import json
from datetime import datetime
from typing import Any, TextIO

from sqlalchemy import Connection

from vsperf.history.query import Filters, export_rows

FORMATS = ("csv", "json")
COLUMNS = ("run_id", "started_at", "status", "vsperf_version", "hostname", "test", "deployment", "packet_size",
           "metric", "value", "vswitch", "vnf", "trafficgen", "testbed", "variant", "test_index", "frame_mix")


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.isoformat() + "Z" if isinstance(v, datetime) else v) for k, v in row.items()}


def export(connection: Connection, filters: Filters, out: TextIO, fmt: str) -> int:
    """Write the rows to `out` in `fmt` (csv or json: a list of objects); returns the row count."""
    count = 0
    if fmt == "csv":
        writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in export_rows(connection, filters):
            writer.writerow(_plain(row))
            count += 1
        return count
    out.write("[")
    for row in export_rows(connection, filters):
        out.write(("," if count else "") + "\n  " + json.dumps(_plain(row), sort_keys=False))
        count += 1
    out.write("\n]\n" if count else "]\n")
    return count
