"""The local lab through the `vsperf` command, as a user runs it (root): real switches, real
frames, results on disk, and nothing left behind however the run ends."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from cli_helpers import command, environment, leftovers, params_text, results, vsperf
from conftest import lab_skip_reason

SHORT_SETTINGS = {
    "TRAFFICGEN_DURATION": "1",
    "TRAFFICGEN_PKT_SIZES": "(64,)",
    "TRAFFICGEN_RESIDUAL_WAIT_S": "0.3",
    # A low ceiling keeps the search short and inside what trafgen can send here.
    "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT": "0.3",
    "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT": "0.1",
}


def short(**overrides: str) -> str:
    """--test-params for short trials, with `overrides`."""
    return params_text(SHORT_SETTINGS, **overrides)


SHORT = short()

pytestmark = pytest.mark.root


@pytest.fixture(autouse=True)
def _lab() -> None:
    reason = lab_skip_reason()
    if reason:
        pytest.skip(reason)


def assert_measured(out: Path, vswitch: str) -> dict[str, Any]:
    data = results(out)
    test = data["tests"][0]
    assert test["status"] == "passed", test["error"]
    metrics = test["results"][0]["metrics"]
    assert metrics["throughput_rx_fps"] > 0
    assert metrics["frame_loss_percent"] <= data["settings"]["TRAFFICGEN_LOSSRATE"]
    names = {c["role"]: c for c in test["components"]}
    assert names["vswitch"]["name"] == vswitch
    assert names["vswitch"]["version"] and names["vswitch"]["version"] != "unknown"
    report = (out / "report.rst").read_text()
    assert f"vSwitch: {vswitch}, Version: {names['vswitch']['version']}" in report
    assert leftovers(data["run_id"]) == []
    return data


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
    out = tmp_path / "run"
    args = [test, "--vswitch", vswitch, "--results-dir", str(out), "--test-params", SHORT]
    if vnf:
        args += ["--vnf", vnf]
    proc = vsperf(*args)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = assert_measured(out, vswitch)
    trials = data["tests"][0]["results"][0]["trials"]
    assert all(t["tx_frames"] > 0 for t in trials)


def test_mod_vlan_frames_arrive_tagged(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = vsperf("phy2phy_tput_mod_vlan", "--vswitch", "ovs", "--results-dir", str(out), "--test-params", SHORT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = assert_measured(out, "ovs")
    for trial in data["tests"][0]["results"][0]["trials"]:
        assert "rx_untagged_frames" not in trial["flags"]
        assert "rx_wrong_vlan" not in trial["flags"]
        assert trial["rx_frames"] > 0  # the receiver counts only frames with the expected tag


def test_scalability_with_1000_flows(tmp_path: Path) -> None:
    out = tmp_path / "run"
    params = short(TRAFFIC="{'multistream': 1000, 'pre_installed_flows': True}")
    proc = vsperf("phy2phy_scalability", "--vswitch", "ovs", "--results-dir", str(out), "--test-params", params)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert_measured(out, "ovs")
    assert results(out)["tests"][0]["parameters"]["TRAFFIC"]["multistream"] >= 1000


def test_continuous_and_back2back_on_a_real_switch(tmp_path: Path) -> None:
    out = tmp_path / "run"
    # vsgen bursts at Mfps: OVS absorbs a few thousand frames, so the granularity must be finer.
    params = short(TRAFFICGEN_DURATION="0.5", TRAFFICGEN_B2B_GRANULARITY_FRAMES="200")
    proc = vsperf("phy2phy_cont", "back2back", "--vswitch", "ovs", "--results-dir", str(out), "--test-params", params)
    assert proc.returncode == 0, proc.stderr[-2000:]
    cont, b2b = results(out)["tests"]
    assert cont["results"][0]["metrics"]["throughput_rx_fps"] > 0
    assert b2b["results"][0]["metrics"]["b2b_frames"] > 0
    assert leftovers(results(out)["run_id"]) == []


def start(out: Path, *extra: str) -> subprocess.Popen[str]:
    params = short(TRAFFICGEN_DURATION="3", TRAFFICGEN_PKT_SIZES="(64,128)")
    return subprocess.Popen(
        command("phy2phy_tput", "--vswitch", "ovs", "--results-dir", str(out), "--test-params", params, *extra),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment(), start_new_session=True,
    )


def wait_for(predicate: Any, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError("timed out waiting")


def measured_sizes(out: Path) -> int:
    try:
        data = results(out)
    except (OSError, ValueError):
        return 0
    return sum(len(t["results"]) for t in data["tests"])


def in_second_size(out: Path) -> bool:
    return measured_sizes(out) >= 1


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_mid_trial_keeps_results_and_leaves_nothing(tmp_path: Path, sig: signal.Signals) -> None:
    out = tmp_path / "run"
    proc = start(out)
    try:
        wait_for(lambda: in_second_size(out))
        time.sleep(1.0)  # inside a trial of the second frame size
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, stderr[-2000:]
    assert "interrupted" in stderr
    assert "Traceback" not in stderr and "Exception in thread" not in stderr, stderr[-2000:]
    data = results(out)
    assert data["status"] == "interrupted"
    assert data["tests"][0]["status"] == "interrupted"
    assert data["tests"][0]["results"][0]["packet_size"] == 64
    assert leftovers(data["run_id"]) == []


def test_vswitchd_killed_mid_trial(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = start(out)
    try:
        wait_for(lambda: (out / "results.json").exists())
        run_id = results(out)["run_id"]

        def vswitchd() -> int | None:
            for p in psutil.process_iter(["pid", "name", "cmdline"]):
                if p.info["name"] == "ovs-vswitchd" and f"vsperf-{run_id}" in " ".join(p.info["cmdline"] or []):
                    return int(p.info["pid"])
            return None

        wait_for(lambda: in_second_size(out))
        pid = vswitchd()
        assert pid is not None
        time.sleep(0.5)
        os.kill(pid, signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, stderr[-2000:]
    data = results(out)
    test = data["tests"][0]
    assert test["status"] == "failed"
    assert "ovs-vswitchd" in test["error"] and "died" in test["error"]
    assert test["results"][0]["packet_size"] == 64  # measured before the failure, kept
    assert "ovs-vswitchd" in stdout + stderr
    assert leftovers(run_id) == []


def test_next_run_removes_what_a_sigkilled_run_left(tmp_path: Path) -> None:
    killed = tmp_path / "killed"
    proc = start(killed)
    try:
        wait_for(lambda: in_second_size(killed))
        run_id = results(killed)["run_id"]
        os.killpg(proc.pid, signal.SIGKILL)  # vsperf and everything in its session... but not
        proc.wait(timeout=30)                # the daemons, which detached: they are left over
    finally:
        if proc.poll() is None:
            proc.kill()
    assert leftovers(run_id), "a SIGKILLed run leaves its namespaces and daemons"
    out = tmp_path / "next"
    proc2 = vsperf("phy2phy_cont", "--vswitch", "linux-bridge", "--results-dir", str(out), "--test-params", SHORT)
    assert proc2.returncode == 0, proc2.stderr[-2000:]
    assert "leftover" in (out / "overall.log").read_text()
    assert leftovers(run_id) == []


def test_trafficgen_mode_deploys_no_switch(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = vsperf("phy2phy_tput", "--mode", "trafficgen", "--results-dir", str(out), "--test-params", SHORT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = results(out)
    test = data["tests"][0]
    assert test["results"][0]["metrics"]["throughput_rx_fps"] > 0
    roles = {c["role"] for c in test["components"]}
    assert "vswitch" not in roles
    assert any(c["name"] == "wire" for c in test["components"])
    assert leftovers(data["run_id"]) == []
