"""vsperf.history.export: measurements as CSV or JSON, one row per run, test, size, metric."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta
from pathlib import Path

from history_runs import START, write_run
from history_store import sqlite_store

from vsperf.history.export import COLUMNS, export
from vsperf.history.importer import import_dirs
from vsperf.history.query import Filters


def test_csv_and_json_hold_the_same_rows(tmp_path: Path) -> None:
    for i in range(3):
        write_run(tmp_path / "runs", run_id=f"r{i}", started=START + timedelta(days=i),
                  throughput={("phy2phy_tput", 64): 1e6 + i, ("phy2phy_tput", 1518): 8e5})
    with sqlite_store(tmp_path) as store:
        import_dirs(store, [tmp_path / "runs"])
        filters = Filters(metrics=("throughput_rx_fps",), sizes=(64,))
        text, data = io.StringIO(), io.StringIO()
        with store.connect() as c:
            assert export(c, filters, text, "csv") == 3
            assert export(c, filters, data, "json") == 3
            assert export(c, Filters(tests=("nothing",)), io.StringIO(), "json") == 0
    rows = list(csv.DictReader(io.StringIO(text.getvalue())))
    assert list(rows[0]) == list(COLUMNS)
    assert [(r["run_id"][-2:], r["started_at"], float(r["value"])) for r in rows] == [
        ("r0", "2026-01-01T02:00:00Z", 1e6), ("r1", "2026-01-02T02:00:00Z", 1e6 + 1),
        ("r2", "2026-01-03T02:00:00Z", 1e6 + 2)]
    parsed = json.loads(data.getvalue())
    assert [r["value"] for r in parsed] == [float(r["value"]) for r in rows]
    assert parsed[0]["vswitch"] == "ovs" and parsed[0]["testbed"] == "local" and parsed[0]["packet_size"] == 64
