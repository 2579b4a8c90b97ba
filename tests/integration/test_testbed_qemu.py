"""QEMU guests as the VNF of `vsperf pvp_tput --testbed`: the guest runs on sshd host A (the DUT),
vsgen on sshd host B, every command of the guest over host A's SSH connection.

- `qemu-virtio-net` on `ovs`: the guest's taps are created on host A (in the run's journal),
  QEMU opens them there;
- `qemu-vhost-user` on `ovs-dpdk`: its vhost-user sockets live in the run's directory on host A;
- vsperf's guest image is built (or found) on this machine and copied to host A over SFTP; the
  guest's serial console is QEMU's stdio over its SSH channel, copied into the results;
- a SIGKILLed run leaves its QEMU running on host A; the next run stops it (its journal).

TCG guests forward 10^4-10^5 frames/s here: low rates (at most 0.02 % of 10 GbE at 64 B), 1 s
trials, a coarse search. The hosts share this machine's process table and filesystem, so
"nothing left" is checked there (see testbed_bed.py).
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from testbed_bed import Bed, assert_nothing_left, finish, open_bed, running, skip_missing_switch

from vsperf.host.journal import DEFAULT_STATE_ROOT, JOURNAL_FILE

pytestmark = pytest.mark.root

LOW_RATE = (";TRAFFICGEN_RFC2544_MAX_RATE_PERCENT=0.02;TRAFFICGEN_RFC2544_RESOLUTION_PERCENT=0.01;"
            "TRAFFICGEN_RESIDUAL_WAIT_S=0.5;GUEST_TIMEOUT=[120];GUEST_ACCEL=tcg")


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    with open_bed(tmp_path_factory.mktemp("testbed_qemu"), "v9q", 108) as opened:
        yield opened


@pytest.fixture(autouse=True)
def _qemu_tools() -> None:
    # The guest image is built on this machine from its busybox and dpdk-testpmd; QEMU runs on
    # host A, which is this machine too.
    for tool, package in (("qemu-system-x86_64", "qemu-system-x86"), ("dpdk-testpmd", "dpdk-dev")):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} missing: apt-get install {package}")
    if not Path("/bin/busybox").exists():
        pytest.skip("busybox missing: apt-get install busybox-static")


def guests_of(run_id: str) -> list[int]:
    """PIDs of run `run_id`'s QEMU guests (on the shared process table)."""
    return [p.pid for p in psutil.process_iter(["name", "cmdline"])
            if p.info["name"] == "qemu-system-x86_64" and any(a.startswith(f"vsp{run_id}-vm")
                                                               for a in p.info["cmdline"] or [])]


def run_dirs(run_id: str) -> list[Path]:
    return list(Path("/tmp").glob(f"vsperf-{run_id}-*"))


@pytest.mark.parametrize(("vswitch", "vnf"), [("ovs", "qemu-virtio-net"), ("ovs-dpdk", "qemu-vhost-user")])
def test_pvp_tput_with_a_qemu_guest_on_the_dut_host(bed: Bed, tmp_path: Path, vswitch: str, vnf: str) -> None:
    skip_missing_switch(vswitch)
    before, links_before = bed.states(), bed.links()
    results = tmp_path / "run"
    proc = bed.vsperf(*bed.args(results, "(64,)", vswitch, test="pvp_tput", params=LOW_RATE), "--vnf", vnf,
                      cwd=tmp_path)
    _out, err = finish(proc, 600)
    assert proc.returncode == 0, err[-3000:]
    data = json.loads((results / "results.json").read_text())
    test, run_id = data["tests"][0], str(data["run_id"])
    assert test["status"] == "passed" and test["deployment"] == "pvp"
    # frames crossed host B -> host A's switch -> the guest on host A -> switch -> host B
    assert sum(t["rx_frames"] for t in test["results"][0]["trials"]) > 0
    guest = next(c for c in test["components"] if c["role"] == "vnf")
    assert guest["name"] == vnf and guest["details"]["host"] == bed.dut and guest["details"]["accel"] == "tcg"
    log = (results / "commands.log").read_text()
    # the image went to host A over SFTP, QEMU started there (its console on the channel's stdio)
    assert re.search(rf"\[{bed.dut}\] scp .*:/tmp/vsperf-{run_id}-files/\w+-vmlinuz", log)
    started = re.findall(rf"^.*\[{bed.dut}\] \[background\] ssh .*qemu-system-x86_64 .*$", log, re.M)
    assert len(started) == 1 and "stdio,id=serial0" in started[0] and f"vsp{run_id}-vm0" in started[0]
    if vnf == "qemu-virtio-net":
        for k in (0, 1):
            assert re.search(rf"\[{bed.dut}\] ssh .* ip tuntap add dev vsp{run_id}v0s{k} mode tap", log)
    else:
        assert f"/tmp/vsperf-{run_id}-vhost/v0p0.sock" in started[0]
    consoles = sorted(p.name for p in results.glob("guest*-console*.log"))
    assert consoles == ["guest0-console.log"]
    assert "VSPERF-GUEST-FORWARDING" in (results / "guest0-console.log").read_text()
    assert guests_of(run_id) == [] and run_dirs(run_id) == []
    assert_nothing_left(bed, run_id, before, links_before)  # the taps too: no new interface on host A


def test_the_next_run_stops_the_guest_of_a_sigkilled_run(bed: Bed, tmp_path: Path) -> None:
    before, links_before = bed.states(), bed.links()
    results = tmp_path / "killed"
    # 60 s trials: the run is killed inside the first one.
    args = [a.replace("TRAFFICGEN_DURATION=1;", "TRAFFICGEN_DURATION=60;")
            for a in bed.args(results, "(64,)", "linux-bridge", test="pvp_tput", params=LOW_RATE)]
    run_id = ""
    with running(bed.vsperf(*args, "--vnf", "qemu-virtio-net", cwd=tmp_path)) as proc:
        deadline = time.monotonic() + 300
        console = results / "guest0-console.log"
        while time.monotonic() < deadline and proc.poll() is None:
            if console.exists() and "VSPERF-GUEST-FORWARDING" in console.read_text(errors="replace"):
                break
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        run_id = next(p.parent.name for p in DEFAULT_STATE_ROOT.glob(f"*/{JOURNAL_FILE}") if bed.dut in p.read_text())
        time.sleep(1.0)  # traffic flows through the guest
        proc.kill()  # SIGKILL: no teardown at all
    pids = guests_of(run_id)
    assert len(pids) == 1, "the guest on host A outlives the killed vsperf"
    assert {f"vsp{run_id}v0s0", f"vsp{run_id}v0s1"} <= bed.links()["a"]
    nxt = bed.next_run(tmp_path)
    assert nxt.returncode == 0, nxt.stderr
    assert "removed leftover of a killed run" in nxt.stderr and "qemu vm0" in nxt.stderr
    assert not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in pids)
    assert guests_of(run_id) == [] and run_dirs(run_id) == []
    assert_nothing_left(bed, run_id, before, links_before)
