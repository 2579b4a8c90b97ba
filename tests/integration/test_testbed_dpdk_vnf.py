"""testpmd VNFs on a testbed's DUT host: `pvp_tput --testbed` with dpdk-testpmd started over SSH
on sshd host A (the DUT), vsgen on sshd host B, real frames over the test's veth "cables".

- `--vswitch ovs-dpdk` with its default VNF, testpmd-vhost: testpmd on virtio-user ports on
  OVS-DPDK's vhost-user sockets (in /tmp/vsperf-RUNID-vhost on host A);
- `--vnf netns` with GUEST_LOOPBACK ['testpmd']: testpmd on AF_PACKET ports inside the VNF's
  namespace on host A (behind the Linux bridge);
- a vsperf SIGKILLed mid-trial leaves its testpmd running on host A (a background process of
  the host, not of the SSH channel): the next run stops it by PID and start time, and removes its
  DPDK runtime directory;
- `phy2phy_tput --vswitch none`: testpmd forwarding between host A's two cabled ports.

The hosts share this machine's process table and filesystem: "nothing left on host A" is
checked there (no testpmd of the run, no /var/run/dpdk/vsperf-RUNID-*, no /tmp/vsperf-RUNID-*);
that testpmd ran on host A is checked in the command log (`[host] [background] ssh ...`).
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from testbed_bed import Bed, assert_nothing_left, finish, open_bed, running, skip_missing_switch, vnf_namespaces

from vsperf.dpdk.eal import DPDK_RUNTIME_ROOT

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(shutil.which("dpdk-testpmd") is None, reason="dpdk-testpmd missing: apt-get install dpdk-dev"),
]

# A coarse search (fewer 1 s trials): the loop through testpmd on this loaded machine is slow.
COARSE = ";TRAFFICGEN_RFC2544_RESOLUTION_PERCENT=2"
NETNS_TESTPMD = ";GUEST_LOOPBACK=['testpmd']"


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    with open_bed(tmp_path_factory.mktemp("testbed_dpdk_vnf"), "v9d", 106) as opened:
        yield opened


def pids_of_testpmd(run_id: str) -> list[int]:
    """PIDs of run `run_id`'s testpmd processes (their DPDK file prefix carries the run id)."""
    return [p.pid for p in psutil.process_iter(["cmdline"])
            if any(arg.startswith(f"--file-prefix=vsp{run_id}") for arg in p.info["cmdline"] or [])]


def leftovers_of(run_id: str) -> list[str]:
    """Run `run_id`'s DPDK runtime directories and work directories (vhost-user sockets, logs)."""
    return sorted(str(p) for p in [*Path(DPDK_RUNTIME_ROOT).glob(f"vsp{run_id}*"), *Path("/tmp").glob(
        f"vsperf-{run_id}-*")])


@contextlib.contextmanager
def killed_testpmds_at_exit() -> Iterator[list[str]]:
    """Yields a list to put run ids in; at exit (a failed test too) their testpmds are killed and
    their runtime directories removed, so that a failure leaves nothing behind."""
    run_ids: list[str] = []
    try:
        yield run_ids
    finally:
        for run_id in run_ids:
            for pid in pids_of_testpmd(run_id):
                with contextlib.suppress(psutil.NoSuchProcess):
                    psutil.Process(pid).kill()
            for path in Path(DPDK_RUNTIME_ROOT).glob(f"vsp{run_id}*"):
                shutil.rmtree(path, ignore_errors=True)


def _run_pvp(bed: Bed, tmp_path: Path, vswitch: str, params: str, *extra: str) -> tuple[dict[str, Any], str]:
    """`pvp_tput` on the bed at 64 B; returns results.json and commands.log (asserts exit 0)."""
    results = tmp_path / "run"
    proc = bed.vsperf(*bed.args(results, "(64,)", vswitch, test="pvp_tput", params=COARSE + params), *extra,
                      cwd=tmp_path)
    _out, err = finish(proc, 600)
    assert proc.returncode == 0, err
    return json.loads((results / "results.json").read_text()), (results / "commands.log").read_text()


def _check_forwarded_by_testpmd(bed: Bed, data: dict[str, Any], log: str, vnf_name: str) -> str:
    test = data["tests"][0]
    assert test["status"] == "passed" and test["deployment"] == "pvp" and data["simulated"] is False
    # real frames crossed host B -> host A's switch -> testpmd on host A -> switch -> host B
    assert sum(t["rx_frames"] for t in test["results"][0]["trials"]) > 0
    vnf = next(c for c in test["components"] if c["role"] == "vnf")
    assert vnf["name"] == vnf_name and vnf["details"]["host"] == bed.dut
    run_id = str(data["run_id"])
    # testpmd was started on host A over SSH, with the run's file prefix, and stopped there by PID
    started = re.findall(rf"^\S+ \S+ \[{bed.dut}\] \[background\] ssh .*dpdk-testpmd .*"
                         rf"--file-prefix=vsp{run_id}\w+", log, re.M)
    assert len(started) == 1, log
    # none on the controller: every line of DPDK's programs names the host
    assert [line for line in log.splitlines() if "dpdk-" in line and not re.match(r"\S+ \S+ \[", line)] == []
    return run_id


def test_pvp_ovs_dpdk_with_its_default_vnf_testpmd_vhost_on_the_dut_host(bed: Bed, tmp_path: Path) -> None:
    skip_missing_switch("ovs-dpdk")
    before, links_before = bed.states(), bed.links()
    with killed_testpmds_at_exit() as run_ids:
        data, log = _run_pvp(bed, tmp_path, "ovs-dpdk", "")
        run_ids.append(str(data["run_id"]))
        run_id = _check_forwarded_by_testpmd(bed, data, log, "testpmd-vhost")
        # its vhost-user sockets were in the run's directory on host A, which OVS connected to
        assert re.search(rf"vhost-server-path=/tmp/vsperf-{run_id}-vhost/v0p0.sock", log)
        assert re.search(rf"dpdk-testpmd .*--vdev net_virtio_user0,path=/tmp/vsperf-{run_id}-vhost/v0p0.sock,"
                         r"server=1", log)
        assert pids_of_testpmd(run_id) == [] and leftovers_of(run_id) == []
        assert_nothing_left(bed, run_id, before, links_before)


def test_pvp_netns_vnf_with_the_testpmd_loopback_on_the_dut_host(bed: Bed, tmp_path: Path) -> None:
    before, links_before = bed.states(), bed.links()
    with killed_testpmds_at_exit() as run_ids:
        data, log = _run_pvp(bed, tmp_path, "linux-bridge", NETNS_TESTPMD, "--vnf", "netns")
        run_ids.append(str(data["run_id"]))
        run_id = _check_forwarded_by_testpmd(bed, data, log, "netns")
        vnf = next(c for c in data["tests"][0]["components"] if c["role"] == "vnf")
        assert vnf["details"]["loopback"] == "testpmd" and vnf["version"].startswith("DPDK ")
        # its links were seen up through DPDK's telemetry, on host A
        assert re.search(rf"\[{bed.dut}\] ssh .* dpdk-telemetry.py -f vsp{run_id}v0", log)
        # inside the VNF's namespace on host A, on AF_PACKET ports of the VNF's ends of its veths
        assert re.search(rf"\[{bed.dut}\] \[background\] ssh .* ip netns exec vsp{run_id}v0 sh -c .* dpdk-testpmd "
                         rf".*--vdev net_af_packet0,iface=vsp{run_id}v0i0", log)
        assert pids_of_testpmd(run_id) == [] and leftovers_of(run_id) == []
        assert_nothing_left(bed, run_id, before, links_before)


def _wait_for_a_measured_size(results: Path, proc: subprocess.Popen[str], timeout_s: float,
                              run_ids: list[str]) -> str:
    """The run id (also put in `run_ids` as soon as it is known) once the first frame size is
    measured and the run's testpmd runs on host A (the deployment serves every frame size: the
    next size's trials follow at once)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(OSError, ValueError, KeyError, IndexError):
            data = json.loads((results / "results.json").read_text())
            run_ids[:] = [str(data["run_id"])]
            if data["tests"][0]["results"] and pids_of_testpmd(str(data["run_id"])):
                return str(data["run_id"])
        time.sleep(0.1)
    raise AssertionError(f"no frame size measured with testpmd running (vsperf exit {proc.poll()})")


def test_vsperf_killed_mid_trial_leaves_testpmd_that_the_next_run_stops(bed: Bed, tmp_path: Path) -> None:
    before, links_before = bed.states(), bed.links()
    results = tmp_path / "killed"
    with killed_testpmds_at_exit() as run_ids:
        with running(bed.vsperf(*bed.args(results, "(64,1518)", "linux-bridge", test="pvp_tput",
                                          params=COARSE + NETNS_TESTPMD), "--vnf", "netns", cwd=tmp_path)) as proc:
            run_id = _wait_for_a_measured_size(results, proc, 300, run_ids)
            time.sleep(1.0)  # inside the 1518 B trial
            proc.kill()  # SIGKILL: no teardown at all
        time.sleep(1.0)
        # testpmd is host A's process, not the SSH channel's: it still runs. (Its runtime directory is
        # not checked here: on this shared filesystem, any other testbed run starting now removes
        # /tmp and /var/run/dpdk/vsperf-RUNID-* of every killed run on its own hosts, i.e. here too.)
        pids = pids_of_testpmd(run_id)
        assert len(pids) == 1
        assert vnf_namespaces(run_id) == [f"vsp{run_id}v0"]
        nxt = bed.next_run(tmp_path)
        assert nxt.returncode == 0, nxt.stderr
        assert re.search(rf"removed leftover of a killed run: run {run_id}: host {bed.dut}: process testpmd vnf0 "
                         rf"\(pid {pids[0]}\) stopped", nxt.stderr), nxt.stderr
        assert not psutil.pid_exists(pids[0]) or psutil.Process(pids[0]).status() == psutil.STATUS_ZOMBIE
        assert pids_of_testpmd(run_id) == [] and leftovers_of(run_id) == []
        assert_nothing_left(bed, run_id, before, links_before)


@pytest.mark.parametrize("test", ["phy2phy_tput", "pvp_tput"])
def test_vswitch_none_testpmd_forwards_between_the_duts_cabled_ports(bed: Bed, tmp_path: Path, test: str) -> None:
    """p2p: testpmd joins the two cabled ports; pvp: each cabled port to one end of the netns VNF."""
    before, links_before = bed.states(), bed.links()
    results = tmp_path / "run"
    with killed_testpmds_at_exit() as run_ids:
        proc = bed.vsperf(*bed.args(results, "(64,)", "none", test=test, params=COARSE), cwd=tmp_path)
        _out, err = finish(proc, 600)
        assert proc.returncode == 0, err
        data = json.loads((results / "results.json").read_text())
        run_id = str(data["run_id"])
        run_ids.append(run_id)
        result = data["tests"][0]
        assert result["status"] == "passed" and result["deployment"] == {"phy2phy_tput": "p2p", "pvp_tput": "pvp"}[test]
        # real frames crossed host B -> testpmd on host A's two cabled ports (and the VNF) -> host B
        assert sum(t["rx_frames"] for t in result["results"][0]["trials"]) > 0
        switch = next(c for c in result["components"] if c["role"] == "vswitch")
        assert switch["name"] == "none" and switch["details"]["host"] == bed.dut
        log = (results / "commands.log").read_text()
        a0, a1 = (a for a, _b in bed.cables)
        # in pairs: (a0, a1), or (a0, the VNF's port 0) and (a1, its port 1)
        ports = [a0, f"vsp{run_id}v0s0", a1, f"vsp{run_id}v0s1"] if test == "pvp_tput" else [a0, a1]
        vdevs = " ".join(f"--vdev net_af_\\w+{i},iface={port}" for i, port in enumerate(ports))
        assert re.search(rf"^\S+ \S+ \[{bed.dut}\] \[background\] ssh .*dpdk-testpmd .*--file-prefix=vsp{run_id}n "
                         rf".*{vdevs} ", log, re.M), log
        assert [line for line in log.splitlines() if "dpdk-" in line and not re.match(r"\S+ \S+ \[", line)] == []
        assert pids_of_testpmd(run_id) == [] and leftovers_of(run_id) == []
        assert_nothing_left(bed, run_id, before, links_before)
