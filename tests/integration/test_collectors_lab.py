"""Observability on the local lab (root): the DUT's processes with seeds/001's columns, port
counters, per-core CPU, and stress-ng's workers busy during phy2phy_cpu_load's traffic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import lab_skip_reason

ROOT = Path(__file__).resolve().parents[2]
SEED_COLUMNS = [
    "UID", "PID", "%usr", "%system", "%guest", "%CPU", "CPU", "minflt/s", "majflt/s",
    "VSZ", "RSS", "%MEM", "kB_rd/s", "kB_wr/s", "kB_ccwr/s",
]
# Trials of 2 s (the statistics need a traffic phase longer than half a second), one frame size,
# a low ceiling that trafgen reaches on these machines.
PARAMS = ("TRAFFICGEN_PKT_SIZES=(64,);TRAFFICGEN_DURATION=2;TRAFFICGEN_RESIDUAL_WAIT_S=0.3;"
          "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT=0.3;TRAFFICGEN_RFC2544_RESOLUTION_PERCENT=0.2;"
          "COLLECTOR_INTERVAL_S=0.5;REPORT_PLOTS=False")

pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    reason = lab_skip_reason({"ip": "iproute2", "trafgen": "netsniff-ng", "ovs-vswitchd": "openvswitch-switch",
                              "stress-ng": "stress-ng"})
    if reason:
        pytest.skip(reason)
    results = tmp_path_factory.mktemp("lab") / "r"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRAFFIC", "VSWITCH", "COLLECTOR"))}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run(
        [sys.executable, "-m", "vsperf", "phy2phy_tput", "phy2phy_cpu_load", "--vswitch", "ovs",
         "--trafficgen", "trafgen", "--results-dir", str(results), "--report-format", "rst",
         "--test-params", PARAMS],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    data: dict[str, Any] = json.loads((results / "results.json").read_text())
    data["report"] = (results / "report.rst").read_text()
    return data


def _statistics(data: dict[str, Any], test: int) -> dict[str, Any]:
    stats: dict[str, Any] = data["tests"][test]["results"][0]["statistics"]
    return stats


def test_ovs_processes_with_the_seed_columns(run: dict[str, Any]) -> None:
    stats = _statistics(run, 0)
    for name in ("ovs-vswitchd", "ovsdb-server"):
        row = stats[f"Process: {name}"]
        assert list(row) == SEED_COLUMNS
        assert row["UID"] == 0 and row["VSZ"] > 0 and row["RSS"] > 0
        assert row["%CPU"] is not None  # measured over the traffic phase
    assert stats["Process: ovs-vswitchd"]["%CPU"] > 1.0  # it forwarded the frames
    for name in ("ovs-vswitchd", "ovsdb-server"):
        assert f"Process: {name}:" in run["report"]


def test_ports_and_cpu(run: dict[str, Any]) -> None:
    stats = _statistics(run, 0)
    ports = stats["Interface counters"]
    assert len(ports) == 2
    assert all(p["tx_packets"] > 0 and p["rx_packets"] > 0 for p in ports.values())  # bidirectional
    cpu = stats["System CPU"]
    assert "all" in cpu and all(row["%idle"] is not None for row in cpu.values())
    nics = [c for c in run["tests"][0]["components"] if c["role"] == "port"]
    assert [c["version"] for c in nics] == ["veth", "veth"]  # the driver, read with ethtool


def test_stress_ng_is_busy_during_cpu_load(run: dict[str, Any]) -> None:
    stats = _statistics(run, 1)
    workers = {g: row for g, row in stats.items() if g.startswith("Process: stress-ng-")}
    assert workers, sorted(stats)
    assert max(row["%CPU"] for row in workers.values()) > 20.0
    assert "Process: stress-ng" in stats
    assert any(c["role"] == "loadgen" and c["name"] == "stress-ng" for c in run["tests"][1]["components"])
