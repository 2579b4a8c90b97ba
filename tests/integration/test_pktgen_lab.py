"""Pktgen-DPDK on the local lab through the `vsperf` command (root and a pktgen built with Lua).

pktgen is not packaged: these tests run the pktgen named by PKTGEN_BINARY, or `pktgen` on
PATH, and skip saying so when there is none (docs/trafficgens.rst says how to build it). They
were run against Pktgen 23.06.1 built from source against Debian 12's DPDK 22.11.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import leftovers, vsperf
from conftest import lab_skip_reason

pytestmark = pytest.mark.root


def pktgen_binary() -> str | None:
    """The pktgen under test: PKTGEN_BINARY, else `pktgen` on PATH."""
    return os.environ.get("PKTGEN_BINARY") or shutil.which("pktgen")


@pytest.fixture
def pktgen() -> str:
    reason = lab_skip_reason({"ip": "iproute2"})
    if reason:
        pytest.skip(reason)
    binary = pktgen_binary()
    if binary is None:
        pytest.skip("pktgen is not installed: set PKTGEN_BINARY or put a pktgen built with Lua on PATH "
                    "(docs/trafficgens.rst)")
    return binary


def test_phy2phy_tput_counts_frames_through_a_linux_bridge(tmp_path: Path, pktgen: str) -> None:
    out = tmp_path / "run"
    params = ";".join([
        f"TRAFFICGEN_PKTGEN_BINARY={pktgen}",
        "TRAFFICGEN_DURATION=1",
        "TRAFFICGEN_PKT_SIZES=(64,)",
        "TRAFFICGEN_RESIDUAL_WAIT_S=1",
        # 0.02 % of 2 x 10 Gbit/s at 64 B: 1,488 frames/s per port, inside what pktgen's
        # af_packet ports reach on a shared 2-CPU machine.
        "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT=0.02",
        "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT=0.01",
    ])
    proc = vsperf("phy2phy_tput", "--trafficgen", "pktgen", "--vswitch", "linux-bridge", "--results-dir", str(out),
                  "--test-params", params, timeout_s=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data: dict[str, Any] = json.loads((out / "results.json").read_text())
    test = data["tests"][0]
    assert test["status"] == "passed", test["error"]
    gen = next(c for c in test["components"] if c["role"] == "trafficgen")
    assert gen["name"] == "pktgen"
    assert gen["version"].split()[0].count(".") >= 1 and "DPDK" in gen["version"]  # e.g. "23.06.1 (DPDK 22.11.11)"
    trials = test["results"][0]["trials"]
    assert trials
    for trial in trials:
        # pktgen sends an exact count: half of rate x duration from each port (bidirectional)
        per_port = max(1, round(trial["requested_rate_fps"] / 2 * trial["duration_s"]))
        if "generator_under_delivery" in trial["flags"]:
            # pktgen fell behind (a busy machine) and was stopped at the trial's end: reported
            assert 0 < trial["tx_frames"] <= 2 * per_port
        else:
            assert trial["tx_frames"] == 2 * per_port
        assert 0 < trial["rx_frames"] <= trial["tx_frames"]
        assert trial["actual_tx_rate_fps"] > 0
    metrics = test["results"][0]["metrics"]
    assert metrics["frame_loss_percent"] is None or 0 <= metrics["frame_loss_percent"] <= 100
    csv = next(out.glob("result_0_*.csv")).read_text()
    assert "pktgen" in csv and gen["version"] in csv
    assert leftovers(data["run_id"]) == []


def test_missing_pktgen_is_one_line_before_anything_is_deployed(tmp_path: Path) -> None:
    if lab_skip_reason({"ip": "iproute2"}):
        pytest.skip(lab_skip_reason({"ip": "iproute2"}) or "")
    proc = vsperf("phy2phy_tput", "--trafficgen", "pktgen", "--vswitch", "linux-bridge", "--results-dir",
                  str(tmp_path / "run"), "--test-params", f"TRAFFICGEN_PKTGEN_BINARY={tmp_path / 'no-pktgen'}")
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert "pktgen is missing" in lines[0] and "TRAFFICGEN_PKTGEN_BINARY" in lines[0]
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "run").exists()  # stopped before the run began
