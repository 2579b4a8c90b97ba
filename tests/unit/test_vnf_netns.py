"""vsperf.vnf.netns: the loopback choice (VSPERF's GUEST_LOOPBACK), and the VNF on its host (the
local lab or a testbed's DUT host): its commands through the host's executor, its namespace and
veths recorded in the run's journal before they exist, removed at stop, and by the next run after
a killed one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_machine import RUN_ID, FakeMachine
from settings_util import make_settings
from test_dpdk_testpmd import FORWARD_STATS

from vsperf.errors import ConfigError, PrerequisiteError
from vsperf.host.host import Host
from vsperf.host.journal import Journal, Owner
from vsperf.host.names import RunNames
from vsperf.host.release import release
from vsperf.vnf.netns import NetnsVnf, loopback_for

NS = f"vsp{RUN_ID}v0"
SWITCH_NS = f"vsp{RUN_ID}s"


def test_list_repeats_over_vnfs() -> None:
    settings = make_settings(GUEST_LOOPBACK=["linux_bridge", "testpmd"])
    assert [loopback_for(settings, i) for i in range(4)] == ["linux_bridge", "testpmd"] * 2


def test_default_and_plain_string() -> None:
    assert loopback_for(make_settings(), 3) == "linux_bridge"
    assert loopback_for(make_settings(GUEST_LOOPBACK=["testpmd"]), 1) == "testpmd"


@pytest.mark.parametrize("value", ["l2fwd", "buildin", "clean"])
def test_vm_loopbacks_are_not_available(value: str) -> None:
    with pytest.raises(ConfigError, match="not available with the netns VNF"):
        loopback_for(make_settings(GUEST_LOOPBACK=[value]), 0)


def test_unknown_loopback() -> None:
    with pytest.raises(ConfigError, match=r"GUEST_LOOPBACK.*expected one of"):
        make_settings(GUEST_LOOPBACK=["vpp"])


def _vnf(tmp_path: Path, name: str = "dut", **settings: object) -> tuple[NetnsVnf, FakeMachine, Journal]:
    machine = FakeMachine(name)
    journal = Journal(RUN_ID, root=tmp_path / "state")
    machine.watch(journal)
    return NetnsVnf(make_settings(settings), Host(name, machine, RunNames(RUN_ID), journal)), machine, journal


@pytest.mark.parametrize(("name", "switch_netns", "where"),
                         [("dut", None, "ip"), ("local", SWITCH_NS, f"ip -n {SWITCH_NS}")])
def test_the_vnf_is_built_on_its_host_recorded_first_and_removed(
        tmp_path: Path, name: str, switch_netns: str | None, where: str) -> None:
    # a testbed's DUT host: its switch ends in the host's own namespace; the local lab's: in the switch's
    vnf, machine, journal = _vnf(tmp_path, name)
    if switch_netns:
        machine.namespaces.add(switch_netns)
    ports = vnf.create(0, 1500, switch_netns)
    assert [(p.name, p.ifname) for p in ports] == [("vnf0.0", f"{NS}s0"), ("vnf0.1", f"{NS}s1")]
    assert all(len(p.ifname) <= 15 for p in ports) and vnf.ports == ports
    assert machine.recorded_before(f"ip netns add {NS}", "netns", NS)
    # made on the switch's side, the VNF's end moved into its namespace at once
    add_veth = f"{where} link add {NS}s0 mtu 1500 type veth peer name {NS}i0 mtu 1500 netns {NS}"
    assert machine.recorded_before(add_veth, "link", f"{NS}s0")
    assert machine.link(f"{NS}s0", switch_netns).peer == (NS, f"{NS}i0")
    vnf.start()
    assert machine.recorded_before(f"ip -n {NS} link add name {NS}b type bridge", "link", f"{NS}b")
    assert machine.link(f"{NS}i1", NS).master == f"{NS}b" and machine.link(f"{NS}b", NS).up
    assert vnf.details() == {"loopback": "linux_bridge", "namespace": NS}
    assert vnf.version() == "6.1.0-test" and vnf.pids() == {}
    assert json.loads(journal.path.read_text())["entries"]  # on disk while it exists
    vnf.stop()
    assert NS not in machine.namespaces and (switch_netns, f"{NS}s1") not in machine.links
    assert machine.index(f"{where} link del dev {NS}s0") < machine.index(f"ip netns del {NS}")
    assert len(journal) == 0 and not journal.path.exists() and vnf.ports == ()
    calls = len(machine.calls)
    vnf.stop()  # twice: nothing more
    assert len(machine.calls) == calls


def test_a_killed_runs_vnf_is_removed_by_the_next_run(tmp_path: Path) -> None:
    vnf, machine, journal = _vnf(tmp_path)
    vnf.create(0, 1500, None)
    vnf.start()
    # vsperf is killed here: the journal on disk is all the next run knows
    left = Journal.load(journal.path)
    left.owner = Owner(0, 1)
    done = release(left, {"dut": machine})
    assert done.errors == [] and done.lost_hosts == []
    assert f"host dut: netns {NS} deleted" in done.done
    # the namespace first (with what still runs in it), then the links of the switch's side
    assert machine.index(f"ip netns del {NS}") < machine.index(f"ip link del dev {NS}s0")
    assert NS not in machine.namespaces and (None, f"{NS}s0") not in machine.links and machine.links == {}
    assert len(left) == 0 and not left.path.exists()


def test_the_testpmd_loopback_runs_in_the_vnfs_namespace_until_stopped(tmp_path: Path) -> None:
    vnf, machine, journal = _vnf(tmp_path, GUEST_LOOPBACK=["testpmd"], GUEST_TESTPMD_FWD_MODE="macswap")
    machine.outputs["dpdk-testpmd"] = "macswap packet forwarding - ports=2 - cores=1 - streams=2\n"
    machine.final_outputs["dpdk-testpmd"] = FORWARD_STATS
    machine.handlers["dpdk-telemetry.py"] = lambda argv: (0, '{"/ethdev/link_status": {"status": "UP"}}\n')
    machine.handlers["pkg-config"] = lambda argv: (0, "22.11.11\n")
    vnf.create(0, 1500, None)
    vnf.start()
    [(argv, netns)] = machine.spawned
    assert netns == NS and argv[0] == "dpdk-testpmd" and "--forward-mode=macswap" in argv
    vdevs = [argv[i + 1] for i, a in enumerate(argv) if a == "--vdev"]
    assert vdevs == [f"net_af_packet0,iface={NS}i0", f"net_af_packet1,iface={NS}i1"]
    assert f"--file-prefix=vsp{RUN_ID}v0" in argv and (NS, f"{NS}b") not in machine.links  # no bridge
    assert machine.recorded_before(f"[spawn] [{NS}] dpdk-testpmd", "dir", f"/var/run/dpdk/vsp{RUN_ID}v0")
    # it forwards once DPDK reports both links up (telemetry, on the VNF's host)
    assert [c for c in machine.commands() if "telemetry" in c] == [f"dpdk-telemetry.py -f vsp{RUN_ID}v0"] * 2
    pid = vnf.pids()["testpmd vnf0"]
    assert [(e.host, e.pid) for e in journal if e.kind == "process"] == [("dut", pid)]
    assert vnf.version() == "DPDK 22.11.11" and vnf.details()["loopback"] == "testpmd"
    vnf.check_alive()
    vnf.stop()
    assert not machine.procs[pid].running and [e for e in journal if e.kind == "process"] == []
    assert NS not in machine.namespaces


def test_prerequisites_are_checked_on_the_vnfs_host(tmp_path: Path) -> None:
    vnf, machine, _journal = _vnf(tmp_path, GUEST_LOOPBACK=["linux_bridge", "testpmd"])
    vnf.check_prerequisites()
    machine.absent.add("dpdk-testpmd")
    with pytest.raises(PrerequisiteError, match=r"^host dut: dpdk-testpmd is missing: apt-get install dpdk-dev there$"):
        vnf.check_prerequisites()
    bridge_only, machine, _journal = _vnf(tmp_path / "b")
    machine.absent.add("dpdk-testpmd")
    bridge_only.check_prerequisites()  # a kernel bridge needs no testpmd
    with pytest.raises(PrerequisiteError, match="not available with the netns VNF"):
        _vnf(tmp_path / "c", GUEST_LOOPBACK=["l2fwd"])[0].check_prerequisites()
