"""VSPERF's definitions on the local lab (root): pvpv_cont's single stream becomes the lab's N streams
(a lab setting, not the definition), and addresses outside 198.18.0.0/15 are refused before anything
is created."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import lab_skip_reason

ROOT = Path(__file__).resolve().parents[2]
SHORT = "TRAFFICGEN_DURATION=1;TRAFFICGEN_PKT_SIZES=(64,);TRAFFICGEN_RESIDUAL_WAIT_S=0.3;TRAFFIC={'frame_rate': 0.2}"

pytestmark = pytest.mark.root


@pytest.fixture(autouse=True)
def _lab() -> None:
    reason = lab_skip_reason({"ip": "iproute2", "trafgen": "netsniff-ng", "ovs-vswitchd": "openvswitch-switch"})
    if reason:
        pytest.skip(reason)


def vsperf(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRAFFIC", "VSWITCH", "VNF", "GUEST"))}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "vsperf", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_pvpv_cont_single_stream_gets_the_lab_streams(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = vsperf("pvpv_cont", "--vswitch", "ovs", "--trafficgen", "trafgen", "--results-dir", str(out),
                  "--report-format", "rst", "--test-params", SHORT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads((out / "results.json").read_text())
    [test] = data["tests"]
    assert "multistream" not in test["parameters"]["TRAFFIC"]  # the definition is upstream's
    metrics = test["results"][0]["metrics"]
    assert metrics["throughput_rx_fps"] > 0
    assert (metrics["stream_count"], metrics["match_type"]) == (2, "L3")  # the lab's setting
    assert metrics["guest_loopback"] == "linux_bridge linux_bridge"


def test_lab_refuses_addresses_outside_the_benchmarking_range(tmp_path: Path) -> None:
    proc = vsperf("phy2phy_tput", "--vswitch", "ovs", "--results-dir", str(tmp_path / "run"),
                  "--test-params", "TRAFFIC={'l3': {'srcip': '1.1.1.1', 'dstip': '90.90.90.90'}}")
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.strip().splitlines()[-1] == (
        "vsperf: error: TRAFFIC l3 srcip 1.1.1.1 is outside 198.18.0.0/15: the local lab sends only there; "
        "set TRAFFIC l3 srcip/dstip inside it (e.g. 198.18.0.1, 198.18.1.1) or use a testbed")
    assert not (tmp_path / "run").exists()
