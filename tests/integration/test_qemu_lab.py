"""QEMU guests as VNFs through the `vsperf` command (root, real QEMU: TCG on machines whose KVM
does not work): pvp_tput and pvp_back2back with vhost-user (OVS-DPDK) and virtio-net (taps on ovs
and the Linux bridge), testpmd and linux_bridge loopbacks, PVVP with two guests, a user's qcow2
image that vsperf logs in to, frames counted end to end, a guest that dies, and a SIGKILLed run's
guests removed.

TCG guests forward 10^4-10^5 frames/s here, less when the machine is busy: the rates are low (at
most 0.02 % of 10 GbE at 64 B, ~3 kframes/s per direction), trials short (1 s or less), tests that
share a topology run in one `vsperf` invocation, and each test boots as few guests as it can. The
guest image is built once into the default cache (GUEST_IMAGE_CACHE_DIR) and reused.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from cli_helpers import command, environment, leftovers, params_text, results
from cli_helpers import vsperf as run_vsperf
from conftest import lab_skip_reason
from login_image import build_login_image, missing_tool

from vsperf.vnf.qemu.console import clean

pytestmark = pytest.mark.root

# Low rates TCG guests carry on a busy 2-CPU machine: the search starts at 0.02 % of 10 GbE
# (~6 kframes/s in all) and, on loss, halves down to 0.005 % (~1.5 kframes/s).
LOW_RATE = {
    "TRAFFICGEN_DURATION": "1",
    "TRAFFICGEN_PKT_SIZES": "(64,)",
    "TRAFFICGEN_RESIDUAL_WAIT_S": "0.5",
    "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT": "0.02",
    "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT": "0.005",
    "GUEST_TIMEOUT": "[120]",
}


def params(**overrides: str) -> str:
    return params_text(LOW_RATE, **overrides)


def vsperf(*args: str, timeout_s: float = 400) -> subprocess.CompletedProcess[str]:
    return run_vsperf(*args, timeout_s=timeout_s)


@pytest.fixture(autouse=True)
def _qemu_lab() -> None:
    reason = lab_skip_reason()
    if reason:
        pytest.skip(reason)
    for tool, package in (("qemu-system-x86_64", "qemu-system-x86"), ("dpdk-testpmd", "dpdk-dev")):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} missing: apt-get install {package}")
    if not Path("/bin/busybox").exists():
        pytest.skip("busybox missing: apt-get install busybox-static")


def vnf_entries(test: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in test["components"] if c["role"] == "vnf"]


def lossless(trials: list[dict[str, Any]], minimum: int) -> list[dict[str, Any]]:
    """Trials that got every frame they sent (at least `minimum`) back through the guests."""
    return [t for t in trials if t["tx_frames"] >= minimum and t["rx_frames"] == t["tx_frames"]]


def assert_guests(test: dict[str, Any], guests: int) -> list[dict[str, Any]]:
    """The test's VNF entries: `guests` QEMU guests, with the accelerator they ran with."""
    vnfs = vnf_entries(test)
    assert len(vnfs) == guests
    for vnf in vnfs:
        assert vnf["version"].startswith("QEMU ")
        assert vnf["details"]["accel"] in ("kvm", "tcg")
        if vnf["details"]["accel"] == "tcg":
            assert "functional, not performance" in vnf["details"]["accel_note"]
    return vnfs


def assert_throughput(test: dict[str, Any], guests: int) -> list[dict[str, Any]]:
    """pvp/pvvp_tput passed with a zero-loss rate: some trial got every frame back."""
    assert test["status"] == "passed", test["error"]
    result = test["results"][0]
    assert result["metrics"]["throughput_rx_fps"] > 0
    assert lossless(result["trials"], 500), [(t["tx_frames"], t["rx_frames"]) for t in result["trials"]]
    return assert_guests(test, guests)


def assert_end_to_end(out: Path, guests: int) -> dict[str, Any]:
    """The throughput test passed end to end, each guest's console log is in the results, and
    nothing of the run is left."""
    data = results(out)
    assert_throughput(data["tests"][0], guests)
    for index in range(guests):
        console = (out / f"guest{index}-console.log").read_text()
        assert "VSPERF-GUEST-FORWARDING" in console
    assert leftovers(data["run_id"]) == []
    return data


def test_guest_image_build_is_cached_and_carries_only_what_guests_need() -> None:
    first = vsperf("guest-image", "build")
    assert first.returncode == 0, first.stderr[-3000:]
    again = vsperf("guest-image", "build")
    assert again.returncode == 0 and "(cached," in again.stdout, again.stdout
    manifest_path = Path(again.stdout.split("manifest: ", 1)[1].split()[0])
    manifest = json.loads(manifest_path.read_text())
    files = set(manifest["files"])
    assert {"init", "bin/busybox", "usr/bin/dpdk-testpmd", "etc/vsperf-modules"} <= files
    release = manifest["kernel_release"]
    modules = {Path(f).name for f in files if f.startswith(f"usr/lib/modules/{release}/")}
    assert {"virtio_net.ko", "virtio_pci.ko", "uio_pci_generic.ko", "bridge.ko", "stp.ko"} <= modules
    pmds = {Path(f).name.split(".so")[0] for f in files if "/dpdk/pmds-" in f}
    assert {"librte_net_virtio", "librte_mempool_ring", "librte_bus_pci"} <= pmds
    assert "librte_net_af_xdp" not in pmds and "librte_net_vhost" not in pmds  # unused PMDs stay out
    assert manifest["versions"]["kernel_package"].startswith("linux-image-")
    assert (manifest_path.parent / "vmlinuz").stat().st_size > 1_000_000
    assert (manifest_path.parent / "initrd.gz").stat().st_size == manifest["initrd_bytes"]


@pytest.mark.parametrize("vswitch, vnf, loopback", [
    pytest.param("ovs-dpdk", "QemuDpdkVhostUser", "testpmd", id="vhost-user-ovs-dpdk-testpmd"),
    pytest.param("ovs", "QemuVirtioNet", "linux_bridge", id="virtio-net-ovs-linux_bridge"),
    pytest.param("linux-bridge", "QemuVirtioNet", "testpmd", id="virtio-net-linux-bridge-testpmd"),
])
def test_pvp_tput_and_back2back(tmp_path: Path, vswitch: str, vnf: str, loopback: str) -> None:
    """Both PVP tests of seed 001 in one run (a guest boots for each), frames counted end to end."""
    out = tmp_path / "run"
    proc = vsperf("pvp_tput", "pvp_back2back", "--vswitch", vswitch, "--vnf", vnf, "--results-dir", str(out),
                  "--test-params", params(TRAFFICGEN_DURATION="0.5", TRAFFICGEN_B2B_GRANULARITY_FRAMES="100",
                                          GUEST_LOOPBACK=f"['{loopback}']", GUEST_TESTPMD_FWD_MODE="['io']"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = results(out)
    tput, b2b = data["tests"]
    assert (tput["name"], b2b["name"]) == ("pvp_tput", "pvp_back2back")
    assert_throughput(tput, guests=1)
    assert b2b["status"] == "passed", b2b["error"]
    assert b2b["results"][0]["metrics"]["b2b_frames"] >= 100
    # The longest lossless burst came back whole through the guest.
    assert lossless(b2b["results"][0]["trials"], 100), b2b["results"][0]["trials"]
    assert_guests(b2b, guests=1)
    for test in (tput, b2b):
        details = vnf_entries(test)[0]["details"]
        assert vnf_entries(test)[0]["name"] == {"QemuDpdkVhostUser": "qemu-vhost-user"}.get(vnf, "qemu-virtio-net")
        assert details["loopback"] == loopback
        if loopback == "testpmd":
            assert details["forwarding_mode"] == "io"
        if vnf == "QemuVirtioNet":
            assert details["vhost_net"].startswith(("on", "off"))
    # One console log per guest boot: the second test's guest numbers its log on.
    for name in ("guest0-console.log", "guest0-console-2.log"):
        assert f"VSPERF-GUEST-FORWARDING loopback={loopback}" in (out / name).read_text()
    assert leftovers(data["run_id"]) == []


def qemu_snapshot_files() -> set[Path]:
    """QEMU's -snapshot overlays (unlinked at once, so none should ever be seen)."""
    return set(Path(os.environ.get("TMPDIR", "/var/tmp")).glob("vl.*"))


def test_pvp_tput_logs_in_to_a_users_qcow2_image(tmp_path: Path) -> None:
    """GUEST_IMAGE: a qcow2 that boots to a login and forwards nothing by itself; vsperf logs in on
    the serial console and sets up the loopback, as VSPERF did; the image is never modified."""
    reason = missing_tool()
    if reason:
        pytest.skip(reason)
    built = vsperf("guest-image", "build")
    assert built.returncode == 0, built.stderr[-3000:]
    image_dir = Path(built.stdout.split("manifest: ", 1)[1].split()[0]).parent
    qcow2 = build_login_image(tmp_path / "image", image_dir, password="s3cret-login", hostname="vsperf-login")
    digest = hashlib.sha256(qcow2.read_bytes()).hexdigest()
    overlays = qemu_snapshot_files()
    out = tmp_path / "run"
    proc = vsperf("pvp_tput", "--vswitch", "linux-bridge", "--vnf", "QemuVirtioNet", "--results-dir", str(out),
                  "--test-params", params(GUEST_IMAGE=f"['{qcow2}']", GUEST_USERNAME="['root']",
                                          GUEST_PASSWORD="['s3cret-login']", GUEST_PROMPT="['vsperf-login ~]#']",
                                          GUEST_LOOPBACK="['linux_bridge']"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = results(out)
    test = data["tests"][0]
    vnf = assert_throughput(test, guests=1)[0]
    assert vnf["details"]["image"] == str(qcow2) and vnf["details"]["loopback"] == "linux_bridge"
    console = (out / "guest0-console.log").read_text(errors="replace")
    assert "vsperf-login login: root" in console and "Password:" in console
    # Every command vsperf typed ran, the last one too; vsperf's own image's marker is not there.
    assert re.search(r"ip link set br0 up\n\[root@vsperf-login ~\]#", clean(console)), clean(console)[-600:]
    assert "VSPERF-GUEST" not in console
    assert hashlib.sha256(qcow2.read_bytes()).hexdigest() == digest
    assert qemu_snapshot_files() == overlays
    assert leftovers(data["run_id"]) == []


def test_pvvp_tput_two_guests_on_ovs_taps(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = vsperf("pvvp_tput", "--vswitch", "ovs", "--vnf", "QemuVirtioNet", "--results-dir", str(out),
                  "--test-params", params(GUEST_LOOPBACK="['linux_bridge', 'testpmd']"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = assert_end_to_end(out, guests=2)
    loopbacks = [v["details"]["loopback"] for v in vnf_entries(data["tests"][0])]
    assert loopbacks == ["linux_bridge", "testpmd"]


def qemu_pid(run_id: str) -> int | None:
    for proc in psutil.process_iter(["pid", "name", "cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if proc.info["name"] == "qemu-system-x86_64" and f"vsp{run_id}-vm0" in cmdline:
            return int(proc.info["pid"])
    return None


def start_long_run(out: Path) -> subprocess.Popen[str]:
    """pvp_tput on the Linux bridge with trials long enough to kill something in the middle (a
    guest that dies is noticed when the trial ends: longer trials only make the test slower)."""
    return subprocess.Popen(
        command("pvp_tput", "--vswitch", "linux-bridge", "--vnf", "QemuVirtioNet", "--results-dir", str(out),
                "--test-params", params(TRAFFICGEN_DURATION="10")),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment(), start_new_session=True,
    )


def wait_for_guest(out: Path, timeout_s: float = 150) -> tuple[str, int]:
    """(run id, QEMU pid) once the guest forwards."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        console = out / "guest0-console.log"
        if console.exists() and "VSPERF-GUEST-FORWARDING" in console.read_text(errors="replace"):
            run_id = results(out)["run_id"] if (out / "results.json").exists() else ""
            if not run_id:
                run_id = (out / "overall.log").read_text().split("vsperf run ", 1)[1].split(":", 1)[0]
            pid = qemu_pid(run_id)
            if pid is not None:
                return run_id, pid
        time.sleep(0.2)
    raise AssertionError("the guest did not forward in time")


def test_a_guest_killed_mid_test_fails_it_and_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = start_long_run(out)
    try:
        run_id, pid = wait_for_guest(out)
        time.sleep(3)  # inside the first trial
        os.kill(pid, signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 1, stderr[-3000:]
    assert "qemu vm0" in stdout + stderr  # the summary names the guest that died
    test = results(out)["tests"][0]
    assert test["status"] == "failed"
    assert f"qemu vm0 (pid {pid}) died" in test["error"], test["error"]
    assert "Traceback" not in stderr
    assert leftovers(run_id) == []


def test_ctrl_c_stops_the_guest_by_pid(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = start_long_run(out)
    try:
        run_id, pid = wait_for_guest(out)
        time.sleep(2)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 1, stderr[-3000:]
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert leftovers(run_id) == []


def test_next_run_removes_the_guests_of_a_sigkilled_run(tmp_path: Path) -> None:
    killed = tmp_path / "killed"
    proc = start_long_run(killed)
    try:
        run_id, pid = wait_for_guest(killed)
        os.killpg(proc.pid, signal.SIGKILL)  # vsperf, not QEMU: it runs in a session of its own
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert psutil.pid_exists(pid), "the guest outlives a SIGKILLed vsperf"
    assert leftovers(run_id)
    out = tmp_path / "next"
    proc2 = vsperf("phy2phy_cont", "--vswitch", "linux-bridge", "--results-dir", str(out),
                   "--test-params", params())
    assert proc2.returncode == 0, proc2.stderr[-3000:]
    assert "leftover" in (out / "overall.log").read_text()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert leftovers(run_id) == []
