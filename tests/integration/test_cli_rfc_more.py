"""RFC 2544 reset and recovery and RFC 2889 address tests through the `vsperf` command on the
local lab (root): vsgen's real frames, the switch really restarted or overloaded, results on
disk, nothing left behind. Durations are short; the defaults are RFC-length."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from test_cli_lab import leftovers, results, vsperf
from test_vsgen_wire import vsgen_skip_reason

pytestmark = pytest.mark.root

SHORT = {
    "TRAFFICGEN_PKT_SIZES": "(64,)",
    "TRAFFICGEN_RESIDUAL_WAIT_S": "0.2",
    # A given throughput: no search first (3 % of the bidirectional 10 GbE line rate, 893 kfps).
    "TRAFFICGEN_THROUGHPUT_PERCENT": "3",
}


@pytest.fixture(autouse=True)
def _lab() -> None:
    reason = vsgen_skip_reason()
    if reason:
        pytest.skip(reason)


def run(tmp_path: Path, test: str, vswitch: str, **params: str) -> dict[str, Any]:
    if vswitch == "ovs" and shutil.which("ovs-vswitchd") is None:
        pytest.skip("Open vSwitch missing: apt-get install openvswitch-switch")
    out = tmp_path / "run"
    text = ";".join(f"{k}={v}" for k, v in {**SHORT, **params}.items())
    proc = vsperf(test, "--vswitch", vswitch, "--results-dir", str(out), "--test-params", text)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = results(out)
    test_data = data["tests"][0]
    assert test_data["status"] == "passed", test_data["error"]
    assert leftovers(data["run_id"]) == []
    result: dict[str, Any] = test_data["results"][0]
    return result


@pytest.mark.parametrize("vswitch", ["linux-bridge", "ovs"])
def test_reset_time_of_a_real_switch(tmp_path: Path, vswitch: str) -> None:
    # At 0.5 % of line rate (149 kfps): both switches forward all of it when not being reset.
    result = run(tmp_path, "phy2phy_reset", vswitch, TRAFFICGEN_RESET_DURATION_S="3", TRAFFICGEN_RESET_AT_S="1",
                 TRAFFICGEN_RESET_REPETITIONS="2", TRAFFICGEN_THROUGHPUT_PERCENT="0.5")
    metrics = result["metrics"]
    per_trial = result["details"]["reset_trials"]
    assert len(per_trial) == 2 and all(t["recovered"] and t["lost_frames"] > 0 for t in per_trial)
    # A real gap, wider than the frame spacing and consistent with the frames lost in it.
    assert metrics["reset_time_s_min"] > 2 * metrics["reset_time_resolution_s"]
    assert metrics["reset_time_s_max"] < 2.0
    assert metrics["reset_time_s"] >= 0.5 * metrics["reset_time_frame_loss_s"]
    if vswitch == "ovs":  # ovs-vswitchd restarts and re-attaches its ports: hundreds of ms
        assert metrics["reset_time_s_min"] > 0.05
    assert result["anomalies"] == []


@pytest.mark.parametrize("vswitch", ["linux-bridge", "ovs"])
def test_recovery_time_after_an_overload(tmp_path: Path, vswitch: str) -> None:
    result = run(tmp_path, "phy2phy_recovery", vswitch, TRAFFICGEN_RECOVERY_OVERLOAD_S="1",
                 TRAFFICGEN_RECOVERY_AFTER_S="1", TRAFFICGEN_RECOVERY_REPETITIONS="2")
    metrics = result["metrics"]
    assert 0.0 <= metrics["recovery_time_s_min"] <= metrics["recovery_time_s_max"] < 1.0
    assert metrics["recovery_time_resolution_s"] == pytest.approx(1 / (metrics["recovery_rate_fps"] / 2))
    if vswitch == "ovs":
        # ovs drops what it cannot forward: 982 kfps is beyond what it forwards here.
        assert metrics["overload_frame_loss_percent"] > 0
    elif metrics["overload_frame_loss_percent"] == 0:
        # The kernel bridge forwards in the sender's context: it slows the generator down.
        assert metrics["recovery_time_s"] == 0.0
        assert any("not overloaded" in note for note in result["anomalies"])


def test_caching_on_linux_bridge_reports_the_largest_tried(tmp_path: Path) -> None:
    result = run(tmp_path, "phy2phy_caching", "linux-bridge", TRAFFICGEN_RFC2889_MAX_ADDRESSES="2048",
                 TRAFFICGEN_RFC2889_ADDRESS_RATE_FPS="20000")
    assert result["metrics"]["caching_capacity_addresses"] == 2048
    assert result["details"]["limit_found"] is False
    assert any("largest tried" in note for note in result["anomalies"])


def test_caching_on_ovs_finds_its_mac_table_size(tmp_path: Path) -> None:
    result = run(tmp_path, "phy2phy_caching", "ovs", TRAFFICGEN_RFC2889_MAX_ADDRESSES="9000",
                 TRAFFICGEN_RFC2889_ADDRESS_RATE_FPS="10000")
    # OVS's default other_config:mac-table-size; every address above it is flooded (the first
    # trial of a deployment floods one or two more: entries other than the test's took slots; on a
    # busy machine OVS learns a few addresses late and floods their first frames too).
    assert result["metrics"]["caching_capacity_addresses"] == 8192
    assert result["details"]["limit_found"] is True
    failed = [t for t in result["details"]["address_trials"] if not t["passed"]]
    assert failed and all(0 <= t["flooded_frames"] - (t["addresses"] - 8192) <= 10 for t in failed)


def test_learning_rate_on_linux_bridge(tmp_path: Path) -> None:
    result = run(tmp_path, "phy2phy_learning", "linux-bridge", TRAFFICGEN_RFC2889_LEARNING_ADDRESSES="1000",
                 TRAFFICGEN_RFC2889_ADDRESS_RATE_FPS="20000", TRAFFICGEN_SEARCH_WIDTH_PERCENT="10",
                 TRAFFICGEN_RFC2544_MAX_RATE_PERCENT="1")
    metrics = result["metrics"]
    assert metrics["address_learning_rate_fps"] > 1000
    assert all(t["flooded_frames"] == 0 for t in result["details"]["address_trials"] if t["passed"])
