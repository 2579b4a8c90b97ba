"""Performance of the results store: import, trend and dashboard at a lab's scale.

1. `vsperf history import` of 1,000 run directories (clones of a real dummy-DUT run: two tests
   at seven frame sizes, with every trial; target under 60 s);
2. `vsperf trend` over 10,000 runs x 50 series (target under 2 s);
3. `vsperf dashboard --out` for 200 series x 1,000 points (target under 30 s), with the peak
   resident memory of the process for 50 and for 200 series: bounded by what one page shows, it
   does not grow with the number of series.

Run: PYTHONPATH=. .venv/bin/python bench/bench_history_perf.py [--quick]
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import insert

from vsperf.history import schema
from vsperf.history.analysis import trends
from vsperf.history.db import Store, open_store, parse_url
from vsperf.history.importer import import_dirs
from vsperf.history.model import SeriesKey
from vsperf.history.query import Filters

START = datetime(2025, 1, 1)


def real_run(folder: Path) -> dict[str, Any]:
    """One real run of the simulated DUT: phy2phy_tput and back2back at seven frame sizes."""
    params = "TRAFFICGEN_PKT_SIZES=(64,128,256,512,1024,1280,1518);TRAFFICGEN_DURATION=1;HISTORY=False"
    subprocess.run([sys.executable, "-m", "vsperf", "phy2phy_tput", "back2back", "--trafficgen", "dummy",
                    "--test-params", params, "--results-dir", str(folder), "--report-format", "rst"],
                   check=True, capture_output=True)
    data: dict[str, Any] = json.loads((folder / "results.json").read_text())
    return data


def clone_runs(template: dict[str, Any], root: Path, count: int) -> list[Path]:
    rng = random.Random(1)
    folders = []
    for i in range(count):
        data = json.loads(json.dumps(template))
        data["run_id"] = f"{i:06x}"
        data["started_at"] = (START + timedelta(hours=i)).replace(tzinfo=UTC).isoformat(timespec="seconds")
        for test in data["tests"]:
            for result in test["results"]:
                for key in ("throughput_rx_fps", "b2b_frames"):
                    if isinstance(result["metrics"].get(key), int | float):
                        result["metrics"][key] *= 1 + rng.gauss(0, 0.01)
        folder = root / f"results_{i:04d}"
        folder.mkdir(parents=True)
        (folder / "results.json").write_text(json.dumps(data))
        folders.append(folder)
    return folders


def bulk_store(path: Path, runs: int, series: int) -> Store:
    """A store of `runs` runs with one value per series each, written in bulk (setup, not measured)."""
    store = open_store(parse_url(str(path), "/x"))
    rng = random.Random(2)
    keys = [SeriesKey(f"test_{s // 7:02d}", "p2p", (64, 128, 256, 512, 1024, 1280, 1518)[s % 7], "throughput_rx_fps",
                      "ovs", "", "dummy", "local") for s in range(series)]
    with store.connect() as c:
        c.execute(insert(schema.series),
                  [{"series_id": i + 1, "key": k.key, **k.as_dict()} for i, k in enumerate(keys)])
        for first in range(0, runs, 1000):
            chunk = range(first, min(runs, first + 1000))
            c.execute(insert(schema.runs), [{
                "run_id": f"r{r:06d}", "started_at": START + timedelta(hours=r), "status": "finished",
                "vsperf_version": "0.1.0", "command_line": "[]", "simulated": True, "hostname": "lab",
                "testbed": "local", "results_dir": f"/runs/r{r}", "environment": "{}", "source_sha256": "x",
                "recorded_at": START} for r in chunk])
            c.execute(insert(schema.tests), [{
                "run_id": f"r{r:06d}", "test_index": 0, "name": "t", "deployment": "p2p",
                "traffic_type": "rfc2544_throughput", "status": "passed", "started_at": START + timedelta(hours=r),
                "vswitch": "ovs", "vswitch_version": "3.1.0" if r < runs // 2 else "3.2.0"} for r in chunk])
            c.execute(insert(schema.components), [{
                "run_id": f"r{r:06d}", "test_index": 0, "position": 0, "role": "vswitch", "name": "ovs",
                "version": "3.1.0" if r < runs // 2 else "3.2.0"} for r in chunk])
            c.execute(insert(schema.measurements), [{
                "run_id": f"r{r:06d}", "test_index": 0, "series_id": s + 1, "started_at": START + timedelta(hours=r),
                "value": 1e6 * (1 + rng.gauss(0, 0.01)) * (0.9 if r > runs - 5 and s % 10 == 0 else 1.0)}
                for r in chunk for s in range(series)])
    return store


def main(quick: bool) -> None:
    scale = 10 if quick else 1
    with tempfile.TemporaryDirectory(prefix="vsperf-bench-history-") as tmp:
        root = Path(tmp)
        template = real_run(root / "template")
        size_kb = (root / "template" / "results.json").stat().st_size / 1024
        dirs = clone_runs(template, root / "runs", 1000 // scale)
        with open_store(parse_url(str(root / "import.sqlite"), "/x")) as store:
            started = time.perf_counter()
            report = import_dirs(store, [root / "runs"])
            import_s = time.perf_counter() - started
            again = time.perf_counter()
            import_dirs(store, [root / "runs"])
            again_s = time.perf_counter() - again
        print(f"import {len(dirs)} run directories ({size_kb:.0f} kB results.json, "
              f"{report.recorded[0].measurements} values each): {import_s:.1f} s ({len(dirs) / import_s:.0f} runs/s; "
              f"target < 60 s); again, all unchanged: {again_s:.1f} s")

        runs = 10_000 // scale
        with bulk_store(root / "trend.sqlite", runs, 50) as store, store.connect() as c:
            started = time.perf_counter()
            lines = [t.line() for t in trends(c, Filters(), 50)]
            trend_s = time.perf_counter() - started
        cli = time.perf_counter()
        subprocess.run([sys.executable, "-m", "vsperf", "trend", "--gate", "--db", str(root / "trend.sqlite")],
                       capture_output=True)
        cli_s = time.perf_counter() - cli
        bare = time.perf_counter()
        subprocess.run([sys.executable, "-m", "vsperf", "trend", "--help"], capture_output=True)
        bare_s = time.perf_counter() - bare
        regressions = sum(1 for t in lines if t.classification == "regression")
        print(f"trend over {runs} runs x {len(lines)} series (newest 50 classified): {trend_s:.2f} s in-process, "
              f"{cli_s:.2f} s as `vsperf trend --gate`, of which {bare_s:.2f} s are Python's start and vsperf's "
              f"imports (`vsperf trend --help`); {regressions} regressions (5 planted); target < 2 s")

        points = 1000 // scale
        for series in (50, 200):
            bulk_store(root / f"dash{series}.sqlite", points, series).close()
            # In a process of its own: its peak resident memory is the dashboard's (and Python's).
            done = subprocess.run([sys.executable, "-c", _DASHBOARD, str(root / f"dash{series}.sqlite"),
                                   str(root / f"site{series}")], capture_output=True, text=True, check=True)
            result = json.loads(done.stdout)
            largest = max(p.stat().st_size for p in (root / f"site{series}" / "series").iterdir())
            print(f"dashboard {result['series']} series x {points} points: {result['seconds']:.1f} s "
                  f"({result['pages']} pages; target < 30 s for 200); peak resident memory "
                  f"{result['maxrss_kib'] / 1024:.0f} MiB (Python and vsperf's imports included), largest "
                  f"series page {largest / 2**10:.0f} KiB")


_DASHBOARD = """
import json, sys
from pathlib import Path
from vsperf.history.dashboard.site import SiteOptions, write_site
from vsperf.history.db import open_store, parse_url
with open_store(parse_url(sys.argv[1], "/x")) as store:
    written = write_site(store, Path(sys.argv[2]), SiteOptions(trend_runs=50))
# VmHWM: this process's peak resident memory (getrusage's ru_maxrss would include the parent's,
# which survives fork and exec).
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"series": written.series, "pages": written.pages, "seconds": written.seconds,
                  "maxrss_kib": peak}))
"""


if __name__ == "__main__":
    main("--quick" in sys.argv)
