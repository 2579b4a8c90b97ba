"""The local lab's tests that run with vsgen (test_cli_lab.py, test_cli_rfc_more.py), with
`--trafficgen trex` (root, TRex built from source: they skip saying what to install otherwise).

Same deployments, switches, VNFs and test types, the same checks a user makes (a measured result,
the components named in the report, nothing left behind), at rates TRex sends on a veth here
(~295 kframes/s at most). TRex's own behaviours (exact counts per stream, latency, its server's
failures) are tested in test_trex_lab.py.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from cli_helpers import command, environment, leftovers, results, vsperf
from test_cli_lab import assert_measured, short
from trex_install import trex_base_dir, trex_servers, trex_skip_reason

pytestmark = pytest.mark.root
TREX = ("--trafficgen", "trex")


@pytest.fixture(autouse=True)
def _trex() -> None:
    reason = trex_skip_reason()
    if reason:
        pytest.skip(reason)


def params(**overrides: str) -> str:
    """test_cli_lab's short trials (at most 0.3 % of line rate: 89 kframes/s) with the TRex under test."""
    return short(TRAFFICGEN_TREX_BASE_DIR=str(trex_base_dir()), **overrides)


def run_ok(*args: str) -> Path:
    out = Path(args[args.index("--results-dir") + 1])
    proc = vsperf(*args, *TREX, timeout_s=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


@pytest.mark.parametrize(
    "test, vswitch, vnf",
    [
        ("phy2phy_tput", "ovs", None),
        ("phy2phy_tput", "linux-bridge", None),
        ("phy2phy_tput", "ovs-dpdk", None),
        ("phy2phy_tput", "none", None),
        ("pvp_tput", "ovs", "netns"),
        ("pvp_tput", "linux-bridge", "netns"),
        ("pvp_tput", "ovs-dpdk", "testpmd-vhost"),
        ("pvvp_tput", "ovs", None),
        ("pvvp_tput", "ovs-dpdk", None),
        ("pvpv_tput", "ovs", None),
    ],
)
def test_throughput_with_real_frames(tmp_path: Path, test: str, vswitch: str, vnf: str | None) -> None:
    if vswitch.startswith("ovs") and shutil.which("ovs-vswitchd") is None:
        pytest.skip("Open vSwitch missing: apt-get install openvswitch-switch")
    out = tmp_path / "run"
    args = [test, "--vswitch", vswitch, "--results-dir", str(out), "--test-params", params()]
    run_ok(*args, *(["--vnf", vnf] if vnf else []))
    data = assert_measured(out, vswitch)
    test_data = data["tests"][0]
    assert next(c for c in test_data["components"] if c["role"] == "trafficgen")["name"] == "trex"
    assert all(t["tx_frames"] > 0 for t in test_data["results"][0]["trials"])


def test_mod_vlan_frames_arrive_tagged(tmp_path: Path) -> None:
    out = run_ok("phy2phy_tput_mod_vlan", "--vswitch", "ovs", "--results-dir", str(tmp_path / "run"),
                 "--test-params", params())
    data = assert_measured(out, "ovs")
    # TRex counts a stream's frames whatever tag the switch pushed on them: all of them arrived
    assert all(t["rx_frames"] > 0 for t in data["tests"][0]["results"][0]["trials"])


def test_scalability_with_1000_flows(tmp_path: Path) -> None:
    out = run_ok("phy2phy_scalability", "--vswitch", "ovs", "--results-dir", str(tmp_path / "run"), "--test-params",
                 params(TRAFFIC="{'multistream': 1000, 'pre_installed_flows': True}"))
    assert_measured(out, "ovs")
    assert results(out)["tests"][0]["parameters"]["TRAFFIC"]["multistream"] >= 1000


def test_continuous_and_back2back_on_a_real_switch(tmp_path: Path) -> None:
    out = run_ok("phy2phy_cont", "back2back", "--vswitch", "ovs", "--results-dir", str(tmp_path / "run"),
                 "--test-params", params(TRAFFICGEN_DURATION="0.5", TRAFFICGEN_B2B_GRANULARITY_FRAMES="200"))
    cont, b2b = results(out)["tests"]
    assert cont["results"][0]["metrics"]["throughput_rx_fps"] > 0
    assert b2b["results"][0]["metrics"]["b2b_frames"] > 0
    assert leftovers(results(out)["run_id"]) == []


def test_vswitchd_killed_mid_trial(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = subprocess.Popen(command("phy2phy_tput", "--vswitch", "ovs", "--results-dir", str(out), *TREX,
                                    "--test-params", params(TRAFFICGEN_DURATION="3", TRAFFICGEN_PKT_SIZES="(64,128)")),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment())
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if results(out)["tests"][0]["results"]:
                    break
            except (OSError, ValueError, KeyError, IndexError):
                pass
            time.sleep(0.1)
        run_id = results(out)["run_id"]
        pids = [p.pid for p in psutil.process_iter(["name", "cmdline"])
                if p.info["name"] == "ovs-vswitchd" and f"vsperf-{run_id}" in " ".join(p.info["cmdline"] or [])]
        assert pids, f"no ovs-vswitchd of run {run_id} (vsperf exit {proc.poll()})"
        time.sleep(0.5)
        os.kill(pids[0], signal.SIGKILL)
        _stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, stderr[-2000:]
    test = results(out)["tests"][0]
    assert test["status"] == "failed" and "ovs-vswitchd" in test["error"] and "died" in test["error"]
    assert test["results"][0]["packet_size"] == 64  # measured before the failure, kept
    assert leftovers(run_id) == [] and trex_servers(run_id) == {}


def test_trafficgen_mode_deploys_no_switch(tmp_path: Path) -> None:
    out = run_ok("phy2phy_tput", "--mode", "trafficgen", "--results-dir", str(tmp_path / "run"),
                 "--test-params", params())
    test = results(out)["tests"][0]
    assert test["results"][0]["metrics"]["throughput_rx_fps"] > 0
    assert "vswitch" not in {c["role"] for c in test["components"]}
    assert any(c["name"] == "wire" for c in test["components"])
    assert leftovers(results(out)["run_id"]) == []


# --- test_cli_rfc_more.py's: RFC 2544 reset and recovery, RFC 2889 addresses ----------------------


def rfc(tmp_path: Path, test: str, vswitch: str, **values: str) -> dict[str, Any]:
    if vswitch == "ovs" and shutil.which("ovs-vswitchd") is None:
        pytest.skip("Open vSwitch missing: apt-get install openvswitch-switch")
    text = ";".join(f"{k}={v}" for k, v in {"TRAFFICGEN_PKT_SIZES": "(64,)", "TRAFFICGEN_RESIDUAL_WAIT_S": "0.2",
                                             "TRAFFICGEN_THROUGHPUT_PERCENT": "0.3",
                                             "TRAFFICGEN_TREX_BASE_DIR": str(trex_base_dir()), **values}.items())
    out = run_ok(test, "--vswitch", vswitch, "--results-dir", str(tmp_path / "run"), "--test-params", text)
    data = results(out)
    assert data["tests"][0]["status"] == "passed", data["tests"][0]["error"]
    assert leftovers(data["run_id"]) == []
    result: dict[str, Any] = data["tests"][0]["results"][0]
    return result


@pytest.mark.parametrize("vswitch", ["linux-bridge", "ovs"])
def test_reset_time_of_a_real_switch(tmp_path: Path, vswitch: str) -> None:
    # 0.05 % of line rate (14.9 kframes/s): both switches forward all of it when not being reset
    result = rfc(tmp_path, "phy2phy_reset", vswitch, TRAFFICGEN_RESET_DURATION_S="3", TRAFFICGEN_RESET_AT_S="1",
                 TRAFFICGEN_RESET_REPETITIONS="2", TRAFFICGEN_THROUGHPUT_PERCENT="0.05")
    metrics, per_trial = result["metrics"], result["details"]["reset_trials"]
    assert len(per_trial) == 2 and all(t["recovered"] and t["lost_frames"] > 0 for t in per_trial)
    assert metrics["reset_time_s_max"] < 2.0
    # the silence the receive counters saw (sampled every ~20 ms) is the time the frames lost in it took
    for trial in per_trial:
        assert trial["reset_time_s"] == pytest.approx(trial["reset_time_frame_loss_s"],
                                                      abs=trial["resolution_s"] + 0.05), trial
    if vswitch == "ovs":  # ovs-vswitchd restarts and re-attaches its ports: hundreds of ms, well resolved
        assert metrics["reset_time_s_min"] > 2 * metrics["reset_time_resolution_s"]
    assert result["anomalies"] == []


@pytest.mark.parametrize("vswitch", ["linux-bridge", "ovs"])
def test_recovery_time_after_an_overload(tmp_path: Path, vswitch: str) -> None:
    result = rfc(tmp_path, "phy2phy_recovery", vswitch, TRAFFICGEN_RECOVERY_OVERLOAD_S="1",
                 TRAFFICGEN_RECOVERY_AFTER_S="1", TRAFFICGEN_RECOVERY_REPETITIONS="2")
    metrics = result["metrics"]
    assert 0.0 <= metrics["recovery_time_s_min"] <= metrics["recovery_time_s_max"] < 1.0
    assert metrics["recovery_time_resolution_s"] == pytest.approx(0.1)  # a counted slice after the drop
    if metrics["overload_frame_loss_percent"] == 0:
        assert metrics["recovery_time_s"] == 0.0
        assert any("not overloaded" in note for note in result["anomalies"])


def test_caching_on_linux_bridge_reports_the_largest_tried(tmp_path: Path) -> None:
    result = rfc(tmp_path, "phy2phy_caching", "linux-bridge", TRAFFICGEN_RFC2889_MAX_ADDRESSES="2048",
                 TRAFFICGEN_RFC2889_ADDRESS_RATE_FPS="20000")
    assert result["metrics"]["caching_capacity_addresses"] == 2048
    assert result["details"]["limit_found"] is False


def test_caching_on_ovs_finds_its_mac_table_size(tmp_path: Path) -> None:
    # 4,000 learning frames/s: OVS learns in its slow path, which TRex's busy core competes with here
    result = rfc(tmp_path, "phy2phy_caching", "ovs", TRAFFICGEN_RFC2889_MAX_ADDRESSES="9000",
                 TRAFFICGEN_RFC2889_ADDRESS_RATE_FPS="4000")
    assert result["metrics"]["caching_capacity_addresses"] == 8192  # OVS's default mac-table-size
    failed = [t for t in result["details"]["address_trials"] if not t["passed"]]
    assert failed and all(t["flooded_frames"] > 0 for t in failed)


def test_learning_rate_on_linux_bridge(tmp_path: Path) -> None:
    result = rfc(tmp_path, "phy2phy_learning", "linux-bridge", TRAFFICGEN_RFC2889_LEARNING_ADDRESSES="1000",
                 TRAFFICGEN_RFC2889_ADDRESS_RATE_FPS="20000", TRAFFICGEN_SEARCH_WIDTH_PERCENT="10",
                 TRAFFICGEN_RFC2544_MAX_RATE_PERCENT="1")
    assert result["metrics"]["address_learning_rate_fps"] > 1000
    assert all(t["flooded_frames"] == 0 for t in result["details"]["address_trials"] if t["passed"])
