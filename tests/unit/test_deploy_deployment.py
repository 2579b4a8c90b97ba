"""vsperf.deploy.deployment: the one deployment, on the local lab (one host, veth ports) and on a
testbed (a DUT host and a generator host over SSH, cabled ports), against FakeMachines: the order
of its commands and on which host they run, each thing recorded in the run's journal before it
exists, what teardown releases, the report's components, and its one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_machine import RUN_ID, FakeMachine, FakeOvs, cabled_hosts, lab_hosts
from settings_util import make_settings

from vsperf.backends import build_registries
from vsperf.config import traffic_from_settings
from vsperf.deploy.build import DeploymentSpec, build_deployment
from vsperf.deploy.deployment import HostDeployment, mtu_for
from vsperf.errors import DeploymentError
from vsperf.host.hosts import RunHosts
from vsperf.traffic import Traffic

REGS = build_registries()
TAG = f"vsp{RUN_ID}"
SWITCH_NS, G0, G1, V0 = f"{TAG}s", f"{TAG}g0", f"{TAG}g1", f"{TAG}v0"
BRIDGE = f"{TAG}b0"


def _deployment(hosts: RunHosts, name: str = "p2p", vswitch: str = "linux-bridge", *, traffic_only: bool = False,
                fm: str | None = None, jumbo_mtu_bytes: int | None = None, **settings: Any) -> HostDeployment:
    values = make_settings(settings)
    spec = DeploymentSpec(name, vswitch, "auto", values, frame_modification=fm, traffic_only=traffic_only,
                          jumbo_mtu_bytes=jumbo_mtu_bytes)
    deployment = build_deployment(spec, REGS, hosts, traffic_from_settings(values, 64))
    assert isinstance(deployment, HostDeployment)
    return deployment


def _created(machine: FakeMachine) -> list[tuple[str, str, str]]:
    """(command, kind, name) of each namespace, veth, bridge and tap the machine was asked to make."""
    made = []
    for command in machine.commands():
        words = command.split()
        if words[:3] == ["ip", "netns", "add"]:
            made.append((command, "netns", words[3]))
        elif "link" in words and "add" in words and words[words.index("link") + 1] == "add":
            at = words.index("add") + 1
            made.append((command, "link", words[at + 1] if words[at] == "name" else words[at]))
    return made


def test_mtu_carries_the_biggest_frame() -> None:
    assert mtu_for(Traffic(frame_size_bytes=64)) == 1500
    assert mtu_for(Traffic(frame_size_bytes=9018)) == 9000


def test_jumbo_frames_set_the_mtu_of_the_ports_the_deployment_makes(tmp_path: Path) -> None:
    hosts, machine = lab_hosts(tmp_path)
    with _deployment(hosts, "p2p", jumbo_mtu_bytes=9000):  # 64-byte frames, VSWITCH_JUMBO_FRAMES_SIZE 9000
        veths = [c for c in machine.commands() if " type veth " in c]
        assert len(veths) == 2 and all(c.count("mtu 9000") == 2 for c in veths), veths


# --- the local lab --------------------------------------------------------------------------------


def test_lab_pvp_is_built_in_order_each_thing_recorded_first_and_all_removed(tmp_path: Path) -> None:
    hosts, machine = lab_hosts(tmp_path)
    deployment = _deployment(hosts, "pvp")
    with deployment:
        made = _created(machine)
        # ports (switch namespace, generator namespaces and veths), then the VNF's, then the bridges,
        # then the VNF's loopback
        # a veth is made on its switch side, its other end moved into its namespace at once
        assert [name for _, _, name in made] == [SWITCH_NS, G0, f"{TAG}p0", G1, f"{TAG}p1", V0, f"{V0}s0",
                                                 f"{V0}s1", BRIDGE, f"{TAG}b1", f"{V0}b"]
        for command, kind, name in made:
            assert machine.recorded_before(command, kind, name), command
        ports = deployment.gen_ports
        assert [(p.netns, p.ifname, p.ipv4, p.peer_ipv4) for p in ports] == [
            (G0, G0, "198.18.0.1", "198.18.1.1"), (G1, G1, "198.18.1.1", "198.18.0.1")]
        assert ports[0].mac == machine.link(G0, G0).mac and ports[0].peer_mac == ports[1].mac
        assert machine.link(G0, G0).addresses == ["198.18.0.1/15"]  # static neighbours, ARP off
        assert f"ip -n {G0} neigh replace 198.18.1.1 lladdr {ports[1].mac} dev {G0} nud permanent" in \
            machine.commands()
        # the generator ports' switch ends are in the switch's namespace, bridged to the VNF's
        assert machine.link(f"{TAG}p0", SWITCH_NS).master == BRIDGE
        assert machine.link(f"{V0}s0", SWITCH_NS).master == BRIDGE
        assert deployment.dut_ports() == ((SWITCH_NS, f"{TAG}p0"), (SWITCH_NS, f"{TAG}p1"))
        assert hosts.journal.path.exists()
        # the local lab's report names no host
        assert [(c.role, c.name, c.details.get("host")) for c in deployment.components()] == [
            ("vswitch", "linux-bridge", None), ("vnf", "netns", None)]
        assert deployment.components()[1].details["index"] == "0"
        deployment.check_alive()
    assert machine.namespaces == set() and machine.links == {}
    assert len(hosts.journal) == 0 and not hosts.journal.path.exists()
    assert deployment.gen_ports == () and deployment.dut_ports() == ()


def test_lab_wire_joins_the_generator_ports_back_to_back(tmp_path: Path) -> None:
    hosts, machine = lab_hosts(tmp_path)
    deployment = _deployment(hosts, traffic_only=True)
    with deployment:
        assert machine.namespaces == {G0, G1}  # no switch namespace, no switch
        assert machine.link(G0, G0).peer == (G1, G1)
        assert [(c.role, c.name, c.version, c.details) for c in deployment.components()] == [
            ("port", "wire", "veth pair",
             {"note": "traffic only (--mode trafficgen): the generator ports are joined back to back"})]
        assert deployment.dut_pids() == {} and deployment.dut_ports() == ()
        deployment.check_alive()
        with pytest.raises(DeploymentError, match=r"^--mode trafficgen has no switch to restart$"):
            deployment.restart()
        with pytest.raises(DeploymentError, match=r"^--mode trafficgen has no switch whose addresses to flush$"):
            deployment.forget_addresses()
    assert machine.namespaces == set() and not hosts.journal.path.exists()


def test_lab_clean_runs_the_switch_only(tmp_path: Path) -> None:
    # deployment clean: the switch is started and stopped, nothing else (no generator ports)
    hosts, machine = lab_hosts(tmp_path)
    ovs = FakeOvs(machine)
    deployment = _deployment(hosts, "clean", "ovs")
    with deployment:
        assert machine.namespaces == {SWITCH_NS} and ovs.running() == {"ovsdb-server", "ovs-vswitchd"}
        assert ovs.netns == SWITCH_NS and deployment.gen_ports == () and deployment.dut_ports() == ()
        assert set(deployment.dut_pids()) == {"ovsdb-server", "ovs-vswitchd"}
    assert ovs.running() == set() and machine.namespaces == set()


def test_lab_teardown_after_a_failed_deploy_removes_only_what_the_run_made(tmp_path: Path) -> None:
    hosts, machine = lab_hosts(tmp_path)
    machine.namespaces.add(V0)  # someone's namespace with the VNF's name: creating it fails
    deployment = _deployment(hosts, "pvp")
    with pytest.raises(DeploymentError, match=rf"^cannot create network namespace {V0}: .*File exists"), deployment:
        pass
    assert machine.namespaces == {V0}  # not the run's: left alone
    assert machine.links == {} and not hosts.journal.path.exists()


def test_teardown_before_deploy_is_harmless(tmp_path: Path) -> None:
    hosts, machine = lab_hosts(tmp_path)
    deployment = _deployment(hosts, "pvp")
    deployment.teardown()
    deployment.teardown()
    assert deployment.dut_pids() == {} and deployment.gen_ports == ()
    assert [argv for argv, _ns in machine.calls if argv[0] != "find"] == []


def test_a_vanished_bridge_or_daemon_is_reported(tmp_path: Path) -> None:
    hosts, machine = lab_hosts(tmp_path)
    with _deployment(hosts) as deployment:
        machine.remove_link(BRIDGE, SWITCH_NS)
        with pytest.raises(DeploymentError, match=rf"^bridge {BRIDGE} is gone$"):
            deployment.check_alive()
    hosts, machine = lab_hosts(tmp_path / "ovs")
    FakeOvs(machine)
    with _deployment(hosts, vswitch="ovs") as deployment:
        deployment.check_alive()
        machine.procs[4102].running = False  # ovs-vswitchd died
        with pytest.raises(DeploymentError, match=r"^ovs-vswitchd \(pid 4102\) died"):
            deployment.check_alive()


# --- a testbed --------------------------------------------------------------------------------------


def test_testbed_p2p_bridges_the_dut_ports_and_puts_everything_back(tmp_path: Path) -> None:
    hosts, dut, gen = cabled_hosts(tmp_path)
    traffic = traffic_from_settings(make_settings(), 64)
    deployment = _deployment(hosts)  # the lab's Linux bridge class, given the DUT host
    with deployment:
        assert dut.link("ens1").master == BRIDGE and dut.link("ens2").master == BRIDGE
        assert dut.link("ens1").up and gen.link("p1").up
        journal = json.loads(hosts.journal.path.read_text())
        assert [(e["kind"], e["host"], e["name"]) for e in journal["entries"] if e["kind"] == "link"] == [
            ("link", "dut", BRIDGE)]
        assert dut.recorded_before(f"ip link add name {BRIDGE} type bridge", "link", BRIDGE)
        # each cabled port's state recorded before it was changed
        assert {(e["host"], e["name"]) for e in journal["entries"] if e["kind"] == "port"} == {
            ("dut", "ens1"), ("dut", "ens2"), ("gen", "p0"), ("gen", "p1")}
        assert dut.recorded_before("ip link set dev ens1 up", "port", "ens1")
        assert gen.recorded_before("ip link set dev p1 up", "port", "p1")
        ports = deployment.gen_ports
        assert [(p.netns, p.ifname, p.mac, p.peer_mac) for p in ports] == [
            (None, "p0", "02:00:00:00:01:01", "02:00:00:00:01:02"),
            (None, "p1", "02:00:00:00:01:02", "02:00:00:00:01:01")]
        assert ports[0].ipv4 == traffic.l3.srcip and ports[1].ipv4 == traffic.l3.dstip
        assert deployment.dut_ports() == ()  # read on the DUT host by the collectors, not from here
        deployment.check_alive()
        before = len(dut.calls)
        deployment.restart()  # RFC 2544 reset: the lab's bridge code, on the DUT host
        assert dut.commands()[before:] == [f"ip link set dev {BRIDGE} down", f"ip link set dev {BRIDGE} up"]
        deployment.forget_addresses()
        assert dut.commands()[-1] == f"ip link set dev {BRIDGE} type bridge fdb_flush"
        components = {c.name: c for c in deployment.components()}
        assert components["linux-bridge"].version == "6.1.0-test"
        assert components["linux-bridge"].details["host"] == "dut"  # a testbed's report names the host
        assert [(c.details["host"], c.details["interface"], c.details["cabled to"])
                for c in deployment.components() if c.role == "port"] == [("dut", "ens1", "gen:p0"),
                                                                           ("dut", "ens2", "gen:p1")]
        dut.remove_link(BRIDGE)
        with pytest.raises(DeploymentError, match=rf"^host dut: bridge {BRIDGE} is gone$"):
            deployment.check_alive()
    # every command ran on its own host; the bridge is gone, the ports are as they were
    assert not any(" add " in c for c in gen.commands()) and not gen.namespaces
    assert (None, BRIDGE) not in dut.links and dut.link("ens1").master is None
    assert not dut.link("ens1").up and gen.link("p0").up and not gen.link("p1").up
    assert not hosts.journal.path.exists()


def test_testbed_vlan_push_tags_frames_towards_the_generator(tmp_path: Path) -> None:
    hosts, dut, _gen = cabled_hosts(tmp_path)
    with _deployment(hosts, "p2p", fm="vlan", VSWITCH_VLAN_ID=123) as deployment:
        # the generator counts only frames that carry the tag (vsgen flags the others)
        assert [p.rx_vlan_id for p in deployment.gen_ports] == [123, 123]
        commands = dut.commands()
        assert f"ip link add name {BRIDGE} type bridge stp_state 0 forward_delay 0 vlan_filtering 1" in commands
        # frames leave towards the generator on both DUT ports tagged (no "untagged")
        for ifname in ("ens1", "ens2"):
            assert f"bridge vlan add dev {ifname} vid 123 pvid" in commands


def test_another_userspace_ovs_on_the_dut_host_is_refused_before_the_switch_starts(tmp_path: Path) -> None:
    hosts, dut, gen = cabled_hosts(tmp_path)
    FakeOvs(dut)
    dut.add_phys("ovs-netdev", "02:00:00:00:00:09")
    with pytest.raises(DeploymentError, match=r"^host dut: another Open vSwitch .*\(ovs-netdev exists\)"), \
            _deployment(hosts, vswitch="ovs"):
        pass
    assert not any(argv[0].startswith("ovs") for argv, _ns in dut.calls)  # no OVS command ran
    assert not dut.link("ens1").up and not gen.link("p1").up and not hosts.journal.path.exists()


def test_testbed_ovs_runs_in_the_dut_hosts_namespace_and_is_stopped(tmp_path: Path) -> None:
    hosts, dut, _gen = cabled_hosts(tmp_path)
    ovs = FakeOvs(dut)
    with _deployment(hosts, vswitch="ovs") as deployment:
        assert ovs.netns is None and ovs.ifaces == ["ens1", "ens2"]
        # a testbed's interfaces are attached as they are: AF_XDP, no GRO change
        add_br = next(c for c in dut.commands() if " add-br " in c)
        assert "add-port vspabc123b0 ens1 -- set Interface ens1 type=afxdp ofport_request=1" in add_br
        assert not any("ethtool -K" in c for c in dut.commands())
        assert deployment.dut_pids() == {"ovs-vswitchd": 4102, "ovsdb-server": 4101}
        assert {c.name: c.details["host"] for c in deployment.components()}["ovs"] == "dut"
    assert ovs.running() == set() and not hosts.journal.path.exists()
    assert f"/tmp/vsperf-{RUN_ID}-ovs" not in dut.dirs  # the run's directory on the host removed


def test_a_dut_host_lost_during_the_run_keeps_its_records_for_the_next_run(tmp_path: Path) -> None:
    hosts, dut, gen = cabled_hosts(tmp_path)
    deployment = _deployment(hosts)
    deployment.deploy()
    dut.up = False  # the DUT host stops answering
    deployment.teardown()  # nothing is asked of it; the generator host is put back
    assert not gen.link("p1").up
    left = {(e.host, e.kind, e.name) for e in hosts.journal}
    assert left == {("dut", "port", "ens1"), ("dut", "port", "ens2"), ("dut", "link", BRIDGE)}
    assert hosts.journal.path.exists()  # the next run finds them


def test_testbed_wire_uses_the_generator_ports_only_and_puts_them_back(tmp_path: Path) -> None:
    # --mode trafficgen on a testbed: the cables' DUT ends are the user's DUT, never touched
    hosts, dut, gen = cabled_hosts(tmp_path)
    dut.link("ens1").master = "userbr0"  # the user's DUT: a bridge vsperf did not make
    traffic = traffic_from_settings(make_settings(), 64)
    deployment = _deployment(hosts, traffic_only=True)
    with deployment:
        journal = json.loads(hosts.journal.path.read_text())
        assert {(e["host"], e["name"]) for e in journal["entries"]} == {("gen", "p0"), ("gen", "p1")}
        assert gen.link("p1").up
        ports = deployment.gen_ports
        assert [(p.netns, p.ifname, p.mac, p.peer_mac, p.rx_vlan_id) for p in ports] == [
            (None, "p0", "02:00:00:00:01:01", "02:00:00:00:01:02", None),
            (None, "p1", "02:00:00:00:01:02", "02:00:00:00:01:01", None)]
        assert ports[0].ipv4 == traffic.l3.srcip and ports[1].peer_ipv4 == traffic.l3.srcip
        deployment.check_alive()
        assert [(c.role, c.details["host"], c.details["interface"], c.details["cabled to"])
                for c in deployment.components()] == [("port", "gen", "p0", "dut:ens1"),
                                                      ("port", "gen", "p1", "dut:ens2")]
    assert dut.calls == []  # not one command on the DUT host
    assert dut.link("ens1").master == "userbr0"
    assert not gen.link("p1").up and not hosts.journal.path.exists()
