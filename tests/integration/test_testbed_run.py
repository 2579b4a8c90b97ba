"""`vsperf phy2phy_tput --testbed` end to end: the DUT's Linux bridge on sshd host A, vsgen on
sshd host B, real frames over the test's veth "cables" between the two hosts' namespaces.

What this proves and what it cannot: the hosts share this machine's filesystem, kernel and
process table, so "nothing left on a host" is checked in its namespace (links, XDP, state) and
on the shared filesystem; that every command went over SSH is checked in the command log.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from cabled_hosts import links_in, state_in
from sshd_hosts import run_sshd
from testbed_bed import (
    Bed,
    assert_nothing_left,
    daemons_of,
    engines_of,
    finish,
    open_bed,
    running,
    skip_missing_switch,
    vnf_namespaces,
    wait_for_results,
)

from vsperf.trafficgen.vsgen.build import ENGINE_NAME

pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def bed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bed]:
    with open_bed(tmp_path_factory.mktemp("testbed_run"), "v9r", 102) as opened:
        yield opened


@pytest.mark.parametrize("vswitch", ["linux-bridge", "ovs", "ovs-dpdk"])
def test_phy2phy_tput_on_two_ssh_hosts(bed: Bed, tmp_path: Path, vswitch: str) -> None:
    skip_missing_switch(vswitch)
    before, links_before = bed.states(), bed.links()
    results = tmp_path / "run"
    proc = bed.vsperf(*bed.args(results, "(64,)", vswitch), cwd=tmp_path)
    _out, err = finish(proc, 600)
    assert proc.returncode == 0, err
    data = json.loads((results / "results.json").read_text())
    test = data["tests"][0]
    assert test["status"] == "passed" and data["simulated"] is False
    metrics = test["results"][0]["metrics"]
    # real frames crossed host B -> host A's switch -> host B, counted by vsgen on host B
    assert sum(t["rx_frames"] for t in test["results"][0]["trials"]) > 10_000 and metrics["packet_size"] == 64
    # the kernel bridge forwards in the sender's context (back-pressure: a zero-loss rate exists);
    # OVS's AF_PACKET ports on this loaded machine may lose frames at every rate tried
    assert metrics["throughput_rx_fps"] > (1000 if vswitch == "linux-bridge" else -1)
    assert any(c["role"] == "vswitch" and c["name"] == vswitch for c in test["components"])
    assert (results / "result_0_phy2phy_tput_p2p.csv").is_file() or list(results.glob("result_*_phy2phy_tput_*.csv"))
    hosts = {h["name"]: h for h in data["environment"]["testbed_hosts"]}
    assert hosts[bed.dut]["roles"] == ["DUT"] and hosts[bed.gen]["roles"] == ["traffic generator"]
    components = {(c["role"], c["name"]): c for c in test["components"]}
    assert components[("vswitch", vswitch)]["details"]["host"] == bed.dut
    assert components[("trafficgen", "vsgen")]["details"]["host"] == bed.gen
    assert components[("port", "port 0")]["version"] == "veth"
    log = (results / "commands.log").read_text()
    creates = "ip link add name vsp\\w+b0 type bridge" if vswitch == "linux-bridge" else \
        "env OVS_RUNDIR=/tmp/vsperf-\\w+-ovs .* ovs-vsctl .* add-br vsp\\w+b0 "
    assert re.search(rf"\[{bed.dut}\] ssh .* 'timeout -k 2 \d+ {creates}", log)
    gen_address = re.escape(bed.ctl["b"][1])
    assert re.search(rf"\[{bed.gen}\] scp .* root@{gen_address}:/tmp/vsperf-\w+-files/{ENGINE_NAME}", log)
    assert re.search(rf"\[{bed.gen}\] \[background\] ssh .*vsperf-\w+-files/{ENGINE_NAME}", log)
    _assert_statistics_read_on_the_hosts(bed, test, log, vswitch)
    assert_nothing_left(bed, data["run_id"], before, links_before)


def _assert_statistics_read_on_the_hosts(bed: Bed, test: dict[str, Any], log: str, vswitch: str) -> None:
    """The collectors' statistics, as a local run has them, read on the DUT host (system and
    switch CPU) and on the generator host (its ports' counters), each through that host's SSH."""
    stats = test["results"][0]["statistics"]
    assert stats["System CPU"]["all"]["%idle"] is not None
    counters = stats["Interface counters"]
    assert sum(row["tx_packets"] for row in counters.values()) > 10_000  # vsgen's frames, counted on host B
    components = {c["name"]: c for c in test["components"] if c["role"] == "collector"}
    hosts = {n: c["details"]["host"] for n, c in components.items()}
    assert hosts == {"pidstat": bed.dut, "cpu": bed.dut, "ifstats": bed.gen}
    assert re.search(rf"\[{bed.dut}\] ssh .* 'timeout -k 2 \d+ cat /proc/stat'", log)
    assert re.search(rf"\[{bed.gen}\] ssh .* 'timeout -k 2 \d+ ip -s -j link show dev ", log)
    if vswitch == "ovs":
        switch = stats["Process: ovs-vswitchd"]
        assert switch["%CPU"] is not None and switch["RSS"] > 0
        # its PID is the DUT host's, read there
        assert re.search(rf"\[{bed.dut}\] ssh .* 'timeout -k 2 \d+ cat /proc/{switch['PID']}/stat "
                         rf"/proc/{switch['PID']}/io'", log)


@pytest.mark.parametrize("vswitch", ["linux-bridge", "ovs", "ovs-dpdk"])
def test_pvp_tput_netns_vnf_on_the_dut_host(bed: Bed, tmp_path: Path, vswitch: str) -> None:
    skip_missing_switch(vswitch)
    before, links_before = bed.states(), bed.links()
    results = tmp_path / "run"
    # A coarse search (fewer 1 s trials): OVS on this machine loses frames at most rates tried.
    coarse = ";TRAFFICGEN_RFC2544_RESOLUTION_PERCENT=2"
    proc = bed.vsperf(*bed.args(results, "(64,)", vswitch, test="pvp_tput", params=coarse), "--vnf", "netns",
                   cwd=tmp_path)
    _out, err = finish(proc, 600)
    assert proc.returncode == 0, err
    data = json.loads((results / "results.json").read_text())
    test = data["tests"][0]
    assert test["status"] == "passed" and test["deployment"] == "pvp"
    # real frames crossed host B -> host A's switch -> the VNF's namespace on host A -> switch -> host B
    assert sum(t["rx_frames"] for t in test["results"][0]["trials"]) > 10_000
    assert test["results"][0]["metrics"]["throughput_rx_fps"] > (1000 if vswitch == "linux-bridge" else -1)
    vnf = next(c for c in test["components"] if c["role"] == "vnf")
    run_id = str(data["run_id"])
    assert vnf["name"] == "netns" and vnf["details"]["host"] == bed.dut
    assert vnf["details"]["namespace"] == f"vsp{run_id}v0" and vnf["details"]["loopback"] == "linux_bridge"
    log = (results / "commands.log").read_text()
    # the VNF was built on host A, over SSH: its namespace, its veths into it, its loopback bridge
    assert re.search(rf"\[{bed.dut}\] ssh .* 'timeout -k 2 \d+ ip netns add vsp{run_id}v0'", log)
    assert re.search(rf"\[{bed.dut}\] ssh .* ip link add vsp{run_id}v0s0 mtu \d+ type veth peer name "
                     rf"vsp{run_id}v0i0 mtu \d+ netns vsp{run_id}v0", log)
    assert re.search(rf"\[{bed.dut}\] ssh .* ip -n vsp{run_id}v0 link add name vsp{run_id}v0b type bridge", log)
    assert not re.search(r"^\S+ \S+ (ip|sysctl|ovs-\w+) ", log, re.M)  # nothing of the DUT's ran on the controller
    assert_nothing_left(bed, run_id, before, links_before)


@pytest.mark.parametrize("vswitch", ["linux-bridge", "ovs"])
def test_dut_host_lost_mid_trial_exit_1_results_kept_next_run_cleans(bed: Bed, tmp_path: Path, vswitch: str) -> None:
    skip_missing_switch(vswitch)
    before, links_before = bed.states(), bed.links()
    results = tmp_path / "lost"
    proc = bed.vsperf(*bed.args(results, "(64,1518)", vswitch), cwd=tmp_path)
    try:
        data = wait_for_results(results / "results.json", proc, 300)
        # 64 B is written; the 1518 B trial (1 s of traffic, then the 2 s residual wait) starts at
        # once: 1 s later the DUT host drops off the network in the middle of it.
        time.sleep(1.0)
        bed.servers["a"].kill()
        _out, err = finish(proc, 300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        run_sshd(bed.servers["a"])
    assert proc.returncode == 1, err
    print(err)  # shown with -s: what a user sees
    errors = [line for line in err.splitlines() if "error" in line.lower()]
    assert len(errors) == 1 and f"host {bed.dut}" in errors[0], err
    assert "Traceback" not in err
    kept = json.loads((results / "results.json").read_text())
    test = kept["tests"][0]
    assert test["status"] == "failed" and f"host {bed.dut}" in test["error"]
    assert [r["metrics"]["packet_size"] for r in test["results"]] == [64]  # what was measured is kept
    assert test["results"][0]["metrics"]["throughput_rx_fps"] >= 0 and test["results"][0]["trials"]
    # host A could not be cleaned: its bridge (and OVS) still there, its ports still attached
    assert any(name.startswith(f"vsp{data['run_id']}b") for name in links_in(bed.ns["a"]) - links_before["a"])
    assert (daemons_of(str(data["run_id"])) != []) == (vswitch == "ovs")
    # host B was: the engine is gone, its ports restored (their carrier follows host A's ends, still up)
    assert engines_of(str(data["run_id"])) == []
    assert {b: replace(state_in(bed.ns["b"], b), carrier=before[b].carrier) for _, b in bed.cables} == \
        {b: before[b] for _, b in bed.cables}
    # the next run (here with the simulated generator: no deployment) restores host A first
    nxt = bed.next_run(tmp_path)
    assert nxt.returncode == 0, nxt.stderr
    assert "removed leftover of a killed run" in nxt.stderr
    assert_nothing_left(bed, str(data["run_id"]), before, links_before)


@pytest.mark.parametrize("test", ["phy2phy_tput", "pvp_tput"])
def test_vsperf_killed_mid_trial_its_engine_ends_and_the_next_run_cleans_both_hosts(bed: Bed, tmp_path: Path,
                                                                                   test: str) -> None:
    before, links_before = bed.states(), bed.links()
    results = tmp_path / "killed"
    with running(bed.vsperf(*bed.args(results, "(64,1518)", test=test), cwd=tmp_path)) as proc:
        data = wait_for_results(results / "results.json", proc, 300)
        run_id = str(data["run_id"])
        time.sleep(1.0)  # inside the 1518 B trial (see the test above)
        assert engines_of(run_id) != []
        proc.kill()  # SIGKILL: no teardown at all
    # Its SSH channels closed with it: the engine on host B saw the end of its input (and its sshd
    # session's end) and exited, detaching its XDP programs.
    deadline = time.monotonic() + 10
    while engines_of(run_id) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert engines_of(run_id) == []
    assert not any(s.xdp_attached for s in bed.states().values())
    assert Path(f"/tmp/vsperf-{run_id}-files/{ENGINE_NAME}").exists()  # the copy stays until the next run
    assert any(name.startswith(f"vsp{run_id}b") for name in links_in(bed.ns["a"]) - links_before["a"])
    if test == "pvp_tput":  # the VNF's namespace and its veths into host A stay, in the journal
        assert vnf_namespaces(run_id) == [f"vsp{run_id}v0"]
        assert {f"vsp{run_id}v0s0", f"vsp{run_id}v0s1"} <= links_in(bed.ns["a"])
    nxt = bed.next_run(tmp_path)
    assert nxt.returncode == 0, nxt.stderr
    assert_nothing_left(bed, run_id, before, links_before)
