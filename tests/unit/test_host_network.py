"""Namespaces, veth pairs, bridges and taps on a host: the `ip` commands a user can replay, each
creation journaled before it exists (and forgotten when it could not be made), removal tolerant
of what is gone. (The same on real namespaces: tests/integration/test_host_network_lab.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_host import FakeMachine, RemoteMachine, mac_of

from vsperf.errors import CommandError, DeploymentError
from vsperf.host.host import Host
from vsperf.host.journal import Journal
from vsperf.host.names import RunNames
from vsperf.host.network import LinkEnd, delete_link, delete_netns
from vsperf.host.release import release

ID = "ab12"
SWITCH_NS, G0 = "vspab12s", "vspab12g0"


def _host(tmp_path: Path, machine: FakeMachine) -> Host:
    return Host(machine.name, machine, RunNames(ID), Journal(ID, root=tmp_path))


def _recorded(host: Host) -> list[tuple[str, str, str | None]]:
    assert host.journal is not None
    return [(e.kind, e.name, e.netns) for e in Journal.load(host.journal.path)] if host.journal.path.exists() else []


def test_a_namespace_is_recorded_made_quiet_and_deleted(tmp_path: Path) -> None:
    dut = RemoteMachine("dut")
    host = _host(tmp_path, dut)
    host.net.add_netns(SWITCH_NS)
    assert _recorded(host) == [("netns", SWITCH_NS, None)]
    assert dut.commands == [
        (("ip", "netns", "add", SWITCH_NS), None),
        (("sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"), SWITCH_NS),
        (("ip", "-n", SWITCH_NS, "link", "set", "dev", "lo", "up"), None)]
    left = dut.add_process(netns=SWITCH_NS)  # what its owner never got to stop
    host.net.del_netns(SWITCH_NS)
    assert dut.netns == set() and left.pid not in dut.procs and _recorded(host) == []
    assert dut.ran("kill") == [("kill", "-KILL", str(left.pid))]
    host.net.del_netns(SWITCH_NS)  # gone already: no error


def test_a_namespace_that_exists_already_is_not_ours(tmp_path: Path) -> None:
    machine = FakeMachine("local")
    machine.netns.add(SWITCH_NS)
    host = _host(tmp_path, machine)
    with pytest.raises(DeploymentError, match=rf"^cannot create network namespace {SWITCH_NS}: .*File exists"):
        host.net.add_netns(SWITCH_NS)
    assert _recorded(host) == [] and machine.netns == {SWITCH_NS}  # never recorded, so never deleted


def test_a_veth_pair_is_one_record_both_ends_up_with_their_macs(tmp_path: Path) -> None:
    machine = FakeMachine("local")
    machine.netns |= {SWITCH_NS, G0}
    host = _host(tmp_path, machine)
    ends = host.net.add_veth(G0, G0, "vspab12p0", SWITCH_NS, mtu_bytes=2000, queues=2)
    assert ends == (LinkEnd(G0, G0, mac_of(G0)), LinkEnd("vspab12p0", SWITCH_NS, mac_of("vspab12p0")))
    # made in b's namespace, a moved into its own at once
    assert machine.ran("ip", "-n", SWITCH_NS, "link", "add") == [
        ("ip", "-n", SWITCH_NS, "link", "add", "vspab12p0", "mtu", "2000", "numtxqueues", "2", "numrxqueues", "2",
         "type", "veth", "peer", "name", G0, "mtu", "2000", "numtxqueues", "2", "numrxqueues", "2", "netns", G0)]
    assert machine.ran("ip", "-n", SWITCH_NS, "link", "set") + machine.ran("ip", "-n", G0, "link", "set") == [
        ("ip", "-n", SWITCH_NS, "link", "set", "dev", "vspab12p0", "up"), ("ip", "-n", G0, "link", "set", "dev", G0,
                                                                          "up")]
    assert _recorded(host) == [("link", "vspab12p0", SWITCH_NS)]
    assert machine.links == {"vspab12p0": SWITCH_NS, G0: G0}
    assert host.net.del_link("vspab12p0", SWITCH_NS) is True  # either end deletes both
    assert machine.links == {} and _recorded(host) == []
    assert host.net.del_link("vspab12p0", SWITCH_NS) is False


@pytest.mark.parametrize("a_ns, b_ns, peer", [
    (None, None, ()),  # both in the host's namespace
    (SWITCH_NS, SWITCH_NS, ()),  # both in one namespace
    (SWITCH_NS, None, ("netns", SWITCH_NS)),  # made in the host's own namespace, a moved into its own
    (None, G0, ()),  # refused: a cannot be moved into the host's own namespace by name
])
def test_the_peer_is_created_where_it_belongs(tmp_path: Path, a_ns: str | None, b_ns: str | None,
                                              peer: tuple[str, ...]) -> None:
    """The pair is made in b's namespace (`ip -n B_NS`, or the host's own); a goes to its named
    namespace with `netns A_NS`. A pair whose a end belongs in the host's own namespace while b is
    in another is refused: "the host's own namespace" has no name to move a into (an SSH host may
    itself live in a namespace), so callers put that end second."""
    machine = FakeMachine("local")
    machine.netns |= {SWITCH_NS, G0}
    host = _host(tmp_path, machine)
    if a_ns is None and b_ns is not None:
        with pytest.raises(DeploymentError, match="host's own namespace"):
            host.net.add_veth("vspab12p0", a_ns, "vspab12p1", b_ns, mtu_bytes=1500)
        return
    host.net.add_veth("vspab12p0", a_ns, "vspab12p1", b_ns, mtu_bytes=1500)
    add = next(argv for argv, _ns in machine.commands if "add" in argv)
    assert add[-len(peer) - 4:] == ("peer", "name", "vspab12p0", "mtu", "1500", *peer)[-len(peer) - 4:]
    assert ("numtxqueues" in add) is False  # one queue: the kernel's default, not asked for
    assert machine.links == {"vspab12p0": a_ns, "vspab12p1": b_ns}


def test_a_veth_that_cannot_be_made_is_forgotten(tmp_path: Path) -> None:
    machine = FakeMachine("local")
    machine.links["vspab12p1"] = None
    host = _host(tmp_path, machine)
    with pytest.raises(DeploymentError, match=r"^cannot create veth vspab12p0 <-> vspab12p1: .*File exists"):
        host.net.add_veth("vspab12p0", None, "vspab12p1", None, mtu_bytes=1500)
    assert _recorded(host) == []


def test_a_bridge_with_members_and_vlans(tmp_path: Path) -> None:
    machine = FakeMachine("local", answers={
        ("bridge", "-n", SWITCH_NS, "vlan", "add", "dev", "vspab12p0", "vid", "100", "pvid", "untagged"): ""})
    machine.netns.add(SWITCH_NS)
    machine.links.update({"vspab12p0": SWITCH_NS, "vspab12p1": SWITCH_NS})
    host = _host(tmp_path, machine)
    host.net.add_bridge("vspab12b0", SWITCH_NS, ("vspab12p0", "vspab12p1"), vlan_filtering=True)
    host.net.bridge_vlan("vspab12p0", SWITCH_NS, 100, pvid=True, untagged=True)
    assert [argv for argv, _ns in machine.commands] == [
        ("ip", "-n", SWITCH_NS, "link", "add", "name", "vspab12b0", "type", "bridge", "stp_state", "0",
         "forward_delay", "0", "vlan_filtering", "1"),
        ("ip", "-n", SWITCH_NS, "link", "set", "dev", "vspab12p0", "master", "vspab12b0"),
        ("ip", "-n", SWITCH_NS, "link", "set", "dev", "vspab12p1", "master", "vspab12b0"),
        ("ip", "-n", SWITCH_NS, "link", "set", "dev", "vspab12b0", "up"),
        ("bridge", "-n", SWITCH_NS, "vlan", "del", "dev", "vspab12p0", "vid", "1"),  # the default VLAN: may fail
        ("bridge", "-n", SWITCH_NS, "vlan", "add", "dev", "vspab12p0", "vid", "100", "pvid", "untagged")]
    assert _recorded(host) == [("link", "vspab12b0", SWITCH_NS)]


def test_a_kernel_without_bridge_vlans_is_named_in_the_error(tmp_path: Path) -> None:
    machine = FakeMachine("local")
    machine.failing[("ip", "link", "add")] = "Error: vlan_filtering: not supported"
    host = _host(tmp_path, machine)
    with pytest.raises(DeploymentError, match=r"^this kernel cannot tag frames in a Linux bridge "
                                              r"\(CONFIG_BRIDGE_VLAN_FILTERING is off\)$"):
        host.net.add_bridge("vspab12b0", None, vlan_filtering=True)
    machine.failing[("ip", "link", "add")] = "RTNETLINK answers: Operation not permitted"
    with pytest.raises(DeploymentError, match=r"^cannot create bridge vspab12b0: .*Operation not permitted"):
        host.net.add_bridge("vspab12b0", None)
    assert _recorded(host) == []


def test_a_tap_is_recorded_and_brought_up_with_its_mtu(tmp_path: Path) -> None:
    machine = FakeMachine("local")
    host = _host(tmp_path, machine)
    host.net.add_tap("vspab12v0s0", None, mtu_bytes=9000)
    assert [argv for argv, _ns in machine.commands] == [
        ("ip", "tuntap", "add", "dev", "vspab12v0s0", "mode", "tap"),
        ("ip", "link", "set", "dev", "vspab12v0s0", "mtu", "9000", "up")]
    assert _recorded(host) == [("link", "vspab12v0s0", None)]



def test_a_failed_second_attempt_keeps_the_record_of_the_first(tmp_path: Path) -> None:
    machine = FakeMachine("local")
    host = _host(tmp_path, machine)
    host.net.add_netns(SWITCH_NS)
    host.net.add_tap("vspab12v0s0", None, mtu_bytes=9000)
    host.net.add_bridge("vspab12b0", None)
    host.net.add_veth("vspab12p0", None, G0, None, mtu_bytes=1500)
    recorded = _recorded(host)
    with pytest.raises(DeploymentError, match=f"^cannot create network namespace {SWITCH_NS}: "):
        host.net.add_netns(SWITCH_NS)
    with pytest.raises(DeploymentError, match=r"^cannot create tap vspab12v0s0: "):
        host.net.add_tap("vspab12v0s0", None, mtu_bytes=9000)
    with pytest.raises(DeploymentError, match=r"^cannot create bridge vspab12b0: "):
        host.net.add_bridge("vspab12b0", None)
    with pytest.raises(DeploymentError, match=f"^cannot create veth vspab12p0 <-> {G0}: "):
        host.net.add_veth("vspab12p0", None, G0, None, mtu_bytes=1500)
    assert _recorded(host) == recorded  # what the run made is still removed at teardown
    assert host.journal is not None
    assert len(release(host.journal, {"local": machine}).done) == 4 and machine.links == {} and not machine.netns


def test_links_made_by_someone_else_are_recorded_for_teardown(tmp_path: Path) -> None:
    machine = FakeMachine("local")
    machine.netns.add(SWITCH_NS)
    host = _host(tmp_path, machine)
    host.net.record_link("vspab12b0", SWITCH_NS)  # an OVS bridge, about to be made by ovs-vsctl
    machine.links["vspab12b0"] = SWITCH_NS
    assert host.journal is not None
    assert release(host.journal, {"local": machine}).done == [f"link vspab12b0 in {SWITCH_NS} deleted"]
    host.net.record_link("vspab12b1", None)
    host.net.forget_link("vspab12b1", None)  # its maker deleted it
    assert _recorded(host) == []


def test_addresses_and_facts(tmp_path: Path) -> None:
    machine = FakeMachine("local")
    machine.netns.add(G0)
    machine.links[G0] = G0
    host = _host(tmp_path, machine)
    assert host.net.mac(G0, G0) == mac_of(G0)
    assert host.net.link(G0, G0) == {"ifname": G0, "address": mac_of(G0)}
    with pytest.raises(DeploymentError, match="does not exist"):
        host.net.link("vspab12g9", G0)
    host.net.set_mtu(G0, G0, 1600)
    host.net.configure_port(G0, G0, "198.18.0.1", 30, "198.18.0.2", "02:00:00:00:00:02")
    host.net.configure_port(G0, G0, "198.18.0.5", 30, "", "")
    assert [argv for argv, _ns in machine.commands][3:] == [
        ("ip", "-n", G0, "link", "set", "dev", G0, "mtu", "1600"),
        ("ip", "-n", G0, "link", "set", "dev", G0, "arp", "off"),
        ("ip", "-n", G0, "addr", "add", "198.18.0.1/30", "dev", G0),
        ("ip", "-n", G0, "neigh", "replace", "198.18.0.2", "lladdr", "02:00:00:00:00:02", "dev", G0, "nud",
         "permanent"),
        ("ip", "-n", G0, "link", "set", "dev", G0, "arp", "off"),
        ("ip", "-n", G0, "addr", "add", "198.18.0.5/30", "dev", G0)]  # no peer: no neighbour entry


def test_removal_tolerates_what_is_gone_and_reports_other_failures() -> None:
    machine = FakeMachine("dut")
    assert delete_link(machine, "vspab12g0", None) is False
    assert delete_link(machine, "vspab12g0", "vspab12g0") is False  # its namespace is gone too
    assert delete_netns(machine, SWITCH_NS) is False
    machine.links["vspab12b0"] = None
    machine.failing[("ip", "link", "del")] = "RTNETLINK answers: Operation not permitted"
    with pytest.raises(CommandError, match="Operation not permitted"):
        delete_link(machine, "vspab12b0", None)
    machine.netns.add(SWITCH_NS)
    machine.failing[("ip", "netns", "del")] = "Device or resource busy"
    with pytest.raises(CommandError, match="busy"):
        delete_netns(machine, SWITCH_NS)
