"""Chains of VNFs and OVS-DPDK on hugepages on a testbed, end to end through the CLI: sshd host A
(the DUT: switch and netns VNFs) and sshd host B (vsgen), cabled by the test's veth pairs.

- `pvvp_tput` (two VNFs in a chain) with linux-bridge and ovs, and `pvpv_tput` (two VNFs side
  by side, streams split between them by OVS's header matches): every VNF's namespace, veths and
  loopback bridge built on host A over SSH, nothing left afterwards;
- OVS-DPDK with VSWITCH_DPDK_HUGEPAGES (no PCI port: this machine has no NIC to spare) on host
  A: nr_hugepages raised for the run, recorded, and put back at the end, and by the next run
  after a SIGKILL. The test mounts its own hugetlbfs (HUGEPAGE_DIR) before the hosts start (each
  host's sshd has its own mount namespace, copied from this one when it starts).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from testbed_bed import (
    Bed,
    assert_nothing_left,
    daemons_of,
    finish,
    open_bed,
    skip_missing_switch,
    vnf_namespaces,
    wait_for_results,
)

pytestmark = pytest.mark.root

NR_HUGEPAGES = Path("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages")
# A coarse search (fewer 1 s trials): OVS on this machine loses frames at most rates tried.
COARSE = ";TRAFFICGEN_RFC2544_RESOLUTION_PERCENT=5"
# OVS-DPDK on 128 MiB of hugepages; 160 pages (320 MiB) made sure of, for its per-port mempools.
HUGE_PARAMS = ";VSWITCH_DPDK_HUGEPAGES=True;DPDK_SOCKET_MEM=['128'];HUGEPAGE_RAM_ALLOCATION=327680"


@pytest.fixture(scope="module")
def huge_dir() -> Iterator[Path | None]:
    """A private hugetlbfs mount of 2 MiB pages (None when this machine cannot have one)."""
    path = Path(tempfile.mkdtemp(prefix="v9c-huge-"))
    mounted = subprocess.run(["mount", "-t", "hugetlbfs", "-o", "pagesize=2M", "nodev", str(path)],
                             capture_output=True).returncode == 0
    try:
        yield path if mounted and NR_HUGEPAGES.is_file() else None
    finally:
        if mounted:
            subprocess.run(["umount", str(path)], check=True)
        path.rmdir()


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory, huge_dir: Path | None) -> Iterator[Bed]:
    # After the mount: the hosts' sshd copy this mount namespace when they start.
    with open_bed(tmp_path_factory.mktemp("testbed_chains"), "v9c", 110) as opened:
        yield opened


def _run(bed: Bed, tmp_path: Path, test: str, vswitch: str, params: str = "") -> tuple[dict[str, Any], str]:
    """`vsperf TEST --testbed` with the netns VNFs at 64 B: results.json's data and the command log."""
    results = tmp_path / "run"
    proc = bed.vsperf(*bed.args(results, "(64,)", vswitch, test=test, params=COARSE + params), "--vnf", "netns",
                      cwd=tmp_path)
    _out, err = finish(proc, 600)
    assert proc.returncode == 0, err
    return json.loads((results / "results.json").read_text()), (results / "commands.log").read_text()


def _assert_vnfs_built_on_host_a(bed: Bed, log: str, run_id: str, count: int) -> None:
    """Each VNF's namespace, its veths into it and its loopback bridge were made on host A over SSH."""
    for i in range(count):
        vnf = f"vsp{run_id}v{i}"
        assert re.search(rf"\[{bed.dut}\] ssh .* 'timeout -k 2 \d+ ip netns add {vnf}'", log)
        for side in (0, 1):
            assert re.search(rf"\[{bed.dut}\] ssh .* ip link add {vnf}s{side} mtu \d+ type veth peer name "
                             rf"{vnf}i{side} mtu \d+ netns {vnf}", log)
        assert re.search(rf"\[{bed.dut}\] ssh .* ip -n {vnf} link add name {vnf}b type bridge", log)
    assert not re.search(rf"ip netns add vsp{run_id}v{count}\b", log)  # no more VNFs than that
    assert not re.search(r"^\S+ \S+ (ip|sysctl|ovs-\w+) ", log, re.M)  # nothing of the DUT's ran here


@pytest.mark.parametrize("vswitch", ["linux-bridge", "ovs"])
def test_pvvp_tput_two_netns_vnfs_in_a_chain_on_the_dut_host(bed: Bed, tmp_path: Path, vswitch: str) -> None:
    skip_missing_switch(vswitch)
    before, links_before = bed.states(), bed.links()
    data, log = _run(bed, tmp_path, "pvvp_tput", vswitch)
    test = data["tests"][0]
    assert test["status"] == "passed" and test["deployment"] == "pvvp"
    # host B -> host A's switch -> VNF 0 -> switch -> VNF 1 -> switch -> host B
    assert sum(t["rx_frames"] for t in test["results"][0]["trials"]) > 0
    vnfs = sorted((c["details"]["index"], c["details"]["namespace"]) for c in test["components"] if c["role"] == "vnf")
    run_id = str(data["run_id"])
    assert vnfs == [("0", f"vsp{run_id}v0"), ("1", f"vsp{run_id}v1")]
    _assert_vnfs_built_on_host_a(bed, log, run_id, 2)
    if vswitch == "linux-bridge":  # the chain as three two-port bridges: phy0-v0, v0-v1, v1-phy1
        assert len(re.findall(rf"\[{bed.dut}\] ssh .* ip link add name vsp{run_id}b\d type bridge", log)) == 3
    assert_nothing_left(bed, run_id, before, links_before)


def test_pvpv_tput_two_netns_vnfs_side_by_side_on_the_dut_host(bed: Bed, tmp_path: Path) -> None:
    skip_missing_switch("ovs")
    before, links_before = bed.states(), bed.links()
    data, log = _run(bed, tmp_path, "pvpv_tput", "ovs")
    test = data["tests"][0]
    assert test["status"] == "passed" and test["deployment"] == "pvpv"
    assert sum(t["rx_frames"] for t in test["results"][0]["trials"]) > 0
    assert test["results"][0]["metrics"]["stream_count"] == 2  # one stream per VNF (the lab's rule)
    run_id = str(data["run_id"])
    _assert_vnfs_built_on_host_a(bed, log, run_id, 2)
    assert_nothing_left(bed, run_id, before, links_before)


def _pci_testbed(bed: Bed, pci: str) -> Path:
    """The bed's testbed file with DUT port 0 given as PCI device `pci` for vfio-pci."""
    text = bed.testbed_file().read_text().replace(f"dut: {{interface: {bed.cables[0][0]}}}",
                                                  f'dut: {{pci: "{pci}", driver: vfio-pci}}')
    path = bed.dir / f"pci-{pci.replace(':', '-')}.yaml"
    path.write_text(text)
    return path


def test_a_pci_port_is_checked_on_the_dut_host_before_anything_is_created(bed: Bed, tmp_path: Path) -> None:
    """Read-only checks of real devices of this machine, over host A's SSH: a device that does
    not exist, and one whose DPDK driver is not loaded (vfio-pci is not, here)."""
    taken = [d.name for d in Path("/sys/bus/pci/devices").iterdir() if (d / "driver").is_symlink()
             and (d / "driver").readlink().name not in ("vfio-pci", "uio_pci_generic")]
    if not taken or Path("/sys/bus/pci/drivers/vfio-pci").exists():
        pytest.skip("needs a PCI device with a driver and vfio-pci not loaded")
    before, links_before = bed.states(), bed.links()
    driver = (Path("/sys/bus/pci/devices") / taken[0] / "driver").readlink().name
    cases = [("0000:7f:1f.7", r"host dutv9c\d+: no PCI device 0000:7f:1f\.7 \(see lspci -D\)"),
             (taken[0], r"host dutv9c\d+: driver vfio-pci is not loaded; run modprobe vfio-pci there")]
    for pci, message in cases:
        results = tmp_path / pci.replace(":", "-")
        proc = subprocess.run([sys.executable, "-m", "vsperf", "phy2phy_tput", "--vswitch", "ovs-dpdk", "--trafficgen",
                               "vsgen", "--testbed", str(_pci_testbed(bed, pci)), "--results-dir", str(results)],
                              capture_output=True, text=True, cwd=tmp_path, timeout=300)
        assert proc.returncode == 2, proc.stderr
        errors = [line for line in proc.stderr.splitlines() if "error" in line]
        assert len(errors) == 1 and re.search(message, errors[0]), proc.stderr
        assert not results.exists()
    assert bed.states() == before and bed.links() == links_before
    assert (Path("/sys/bus/pci/devices") / taken[0] / "driver").readlink().name == driver  # untouched


def _skip_without_hugepages(huge_dir: Path | None) -> Path:
    skip_missing_switch("ovs-dpdk")
    if huge_dir is None:
        pytest.skip("no hugetlbfs mount or no 2 MiB hugepages here")
    return huge_dir


def _remove_dpdk_runtime_dir(run_id: str) -> None:
    """OVS-DPDK's runtime directory, which a SIGKILLed run leaves (documented; not in the journal)."""
    shutil.rmtree(f"/var/run/dpdk/vsp{run_id}o", ignore_errors=True)


def test_ovs_dpdk_on_hugepages_reserves_them_and_puts_nr_hugepages_back(bed: Bed, tmp_path: Path,
                                                                        huge_dir: Path | None) -> None:
    huge = _skip_without_hugepages(huge_dir)
    before, links_before = bed.states(), bed.links()
    original = NR_HUGEPAGES.read_text().strip()
    results = tmp_path / "run"
    params = f"{HUGE_PARAMS};HUGEPAGE_DIR={huge}"
    proc = bed.vsperf(*bed.args(results, "(64,)", "ovs-dpdk", params=params), cwd=tmp_path)
    _out, err = finish(proc, 600)
    assert proc.returncode == 0, err
    data = json.loads((results / "results.json").read_text())
    test = data["tests"][0]
    run_id = str(data["run_id"])
    _remove_dpdk_runtime_dir(run_id)
    assert test["status"] == "passed" and sum(t["rx_frames"] for t in test["results"][0]["trials"]) > 0
    switch = next(c for c in test["components"] if c["role"] == "vswitch")
    assert switch["details"]["hugepages"] == f"yes ({huge})" and switch["details"]["pci_devices"] == "none"
    log = (results / "commands.log").read_text()
    # raised on host A over SSH (by the 160 pages this machine did not have free), the EAL on them
    assert re.search(rf"\[{bed.dut}\] ssh .*printf .* sh \d+ {NR_HUGEPAGES}'", log)
    config = next(line for line in log.splitlines() if "other_config:dpdk-init=true" in line)
    assert f" [{bed.dut}] ssh " in config
    assert "other_config:dpdk-socket-mem=128" in config and f"other_config:dpdk-hugepage-dir={huge}" in config
    assert "--huge-unlink" in config and "--no-pci" in config and "--no-huge" not in log
    assert NR_HUGEPAGES.read_text().strip() == original  # put back at the end
    assert_nothing_left(bed, run_id, before, links_before)


def test_hugepages_of_a_killed_run_are_put_back_by_the_next_run(bed: Bed, tmp_path: Path,
                                                               huge_dir: Path | None) -> None:
    huge = _skip_without_hugepages(huge_dir)
    before, links_before = bed.states(), bed.links()
    original = int(NR_HUGEPAGES.read_text())
    results = tmp_path / "killed"
    params = f"{HUGE_PARAMS};HUGEPAGE_DIR={huge}"
    proc = bed.vsperf(*bed.args(results, "(64,1518)", "ovs-dpdk", params=params), cwd=tmp_path)
    run_id = ""
    try:
        data = wait_for_results(results / "results.json", proc, 300)
        run_id = str(data["run_id"])
        assert int(NR_HUGEPAGES.read_text()) > original  # the run's hugepages, during the run
        proc.kill()  # SIGKILL: no teardown at all
        proc.communicate(timeout=30)
        assert int(NR_HUGEPAGES.read_text()) > original and daemons_of(run_id) != []
        nxt = bed.next_run(tmp_path)
        assert nxt.returncode == 0, nxt.stderr
        assert f"{NR_HUGEPAGES} back to {original}" in nxt.stderr  # the next run's warning line
        assert int(NR_HUGEPAGES.read_text()) == original
        assert_nothing_left(bed, run_id, before, links_before)
        assert vnf_namespaces(run_id) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if run_id:
            _remove_dpdk_runtime_dir(run_id)
