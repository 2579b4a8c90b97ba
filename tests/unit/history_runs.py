"""Run directories for the results store's tests: results.json written as a vsperf run writes it,
with the values a test needs (a series with a known step, tags, versions), fast enough for hundreds."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from vsperf.results.model import SCHEMA_VERSION, ComponentInfo, FrameSizeResult, RunResults, TestResult

START = datetime(2026, 1, 1, 2, 0, tzinfo=UTC)


def metrics(throughput_fps: float) -> dict[str, Any]:
    """A throughput test's metrics at `throughput_fps` (latency and loss alongside, text too)."""
    return {"throughput_rx_fps": throughput_fps, "tx_rate_fps": throughput_fps, "frame_loss_percent": 0.0,
            "avg_latency_ns": 12_000.0, "min_latency_ns": 8_000.0, "max_latency_ns": 40_000.0,
            "type": "rfc2544", "packet_size": 64, "traffic_type": "udp"}


def write_run(root: Path, *, run_id: str, started: datetime, throughput: Mapping[tuple[str, int | str], float],
              vswitch: tuple[str, str] = ("ovs", "3.1.0"), tags: Mapping[str, str] | None = None,
              status: str = "finished", testbed: str = "", report: bool = True, name: str | None = None) -> Path:
    """A run directory under `root` whose tests (test name, frame size) -> throughput are given."""
    folder = root / (name or f"results_{run_id}")
    folder.mkdir(parents=True, exist_ok=True)
    moment = started.isoformat(timespec="seconds")
    by_test: dict[str, list[FrameSizeResult]] = {}
    for (test, size), value in throughput.items():
        by_test.setdefault(test, []).append(FrameSizeResult(size, metrics(value)))
    components = (ComponentInfo("trafficgen", "dummy", "simulated DUT model 1"),
                  ComponentInfo("vswitch", vswitch[0], vswitch[1]))
    tests = tuple(TestResult(index=i, name=test, description=f"LTD.{test}", deployment="p2p",
                             traffic_type="rfc2544_throughput", bidir=True, frame_modification=None,
                             components=components, parameters={}, status="passed", error=None,
                             started_at=moment, finished_at=moment, results=tuple(results))
                  for i, (test, results) in enumerate(by_test.items()))
    run = RunResults(schema_version=SCHEMA_VERSION, vsperf_version="0.1.0", run_id=run_id, status=status,
                     started_at=moment, finished_at=moment, command_line=("vsperf", *by_test), simulated=True,
                     environment={"hostname": "lab1", "vsperf_git_commit": "0" * 40},
                     settings={"HISTORY_TAGS": dict(tags or {}), "TESTBED": testbed}, settings_sources={},
                     tests=tests)
    (folder / "results.json").write_text(json.dumps(run.to_dict()) + "\n", encoding="utf-8")
    if report:
        (folder / "report.html").write_text(f"<html><body><h1>report of {run_id}</h1></body></html>\n",
                                            encoding="utf-8")
    return folder


def write_series(root: Path, values: Sequence[float], *, test: str = "phy2phy_tput", size: int = 64,
                 step: timedelta = timedelta(hours=12), tags: Mapping[str, str] | None = None,
                 first: int = 0) -> list[Path]:
    """One run per value (a day apart by default), run ids r00000, r00001, ..."""
    return [write_run(root, run_id=f"r{first + i:05d}", started=START + (first + i) * step,
                      throughput={(test, size): value}, tags=tags) for i, value in enumerate(values)]
