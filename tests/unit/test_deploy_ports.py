"""vsperf.deploy.ports: where the generator ports come from, veth pairs the run makes on the local
lab (`VethPorts`) or a testbed file's cables (`CabledPorts`): which cables serve, what is made or
changed on which host (recorded first), and the one-line refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_machine import RUN_ID, FakeMachine, cabled_hosts, fake_hosts, lab_hosts
from settings_util import make_settings

from vsperf.config import traffic_from_settings
from vsperf.deploy.ports import LOCATION_MACS, CabledPorts, VethPorts, generator_cables, used_cables
from vsperf.errors import DeploymentError
from vsperf.testbed.model import Cable, DutPort, GenPortSpec, Testbed, TestbedHost
from vsperf.traffic import Traffic

TAG = f"vsp{RUN_ID}"
LOCATIONS = ("192.0.2.50;1;1", "192.0.2.50;1;2")
TRAFFIC = traffic_from_settings(make_settings(), 64)


def _location_cables(mixed: bool = False) -> tuple[Cable, ...]:
    """ens1/ens2 cabled to chassis ports; `mixed`: a third cable, ens3 to the generator host's p0."""
    cables = [Cable(DutPort(d, None, "kernel"), GenPortSpec(None, loc))
              for d, loc in zip(("ens1", "ens2"), LOCATIONS, strict=True)]
    if mixed:
        cables.append(Cable(DutPort("ens3", None, "kernel"), GenPortSpec("p0", None)))
    return tuple(cables)


def test_the_cables_a_deployment_uses() -> None:
    located = _location_cables()
    assert used_cables(located) == []  # a hardware port's location is no interface
    assert used_cables(located, locations=True) == list(located)
    # interface cables first: one location cable and one interface cable are not two interfaces
    mixed = _location_cables(mixed=True)
    assert [c.dut.interface for c in used_cables(mixed)] == ["ens3"]
    assert [c.dut.interface for c in used_cables(mixed, locations=True)] == ["ens1", "ens2"]
    pci = Cable(DutPort(None, "0000:3b:00.0", "vfio-pci"), GenPortSpec("p1", None))
    unbound = Cable(DutPort(None, None, "kernel"), GenPortSpec("p2", None))  # no interface: unusable
    assert used_cables((unbound, mixed[2], pci)) == [mixed[2], pci]
    # traffic only: the generator host's interfaces, whatever their DUT ends
    assert generator_cables((located[0], mixed[2], unbound, pci)) == [mixed[2], unbound]


def test_veth_ports_make_the_generator_namespaces_and_veths_into_the_switchs(tmp_path: Path) -> None:
    hosts, machine = lab_hosts(tmp_path)
    ports = VethPorts(hosts, wire=False, queues=2)
    assert ports.switch_netns == f"{TAG}s"
    phy = ports.create(Traffic(frame_size_bytes=9018), 9000, 101)
    assert [(p.name, p.ifname, p.tunable) for p in phy] == [("phy0", f"{TAG}p0", True), ("phy1", f"{TAG}p1", True)]
    add = next(c for c in machine.commands() if f"link add {TAG}p0" in c)
    assert add == (f"ip -n {TAG}s link add {TAG}p0 mtu 9000 numtxqueues 2 numrxqueues 2 type veth peer name "
                   f"{TAG}g0 mtu 9000 numtxqueues 2 numrxqueues 2 netns {TAG}g0")  # LAB_PORT_QUEUES
    assert [(p.netns, p.ifname, p.rx_vlan_id) for p in ports.ports] == [(f"{TAG}g0", f"{TAG}g0", 101),
                                                                         (f"{TAG}g1", f"{TAG}g1", 101)]
    assert ports.components() == [] and ports.dut_ports() == ((f"{TAG}s", f"{TAG}p0"), (f"{TAG}s", f"{TAG}p1"))


def test_a_generator_owning_both_ports_gets_them_in_one_namespace(tmp_path: Path) -> None:
    hosts, machine = lab_hosts(tmp_path)
    ports = VethPorts(hosts, wire=False, one_netns=True)  # TRex: one server owns both ports
    ports.create(Traffic(frame_size_bytes=64), 1500, None)
    assert [(p.netns, p.ifname) for p in ports.ports] == [(f"{TAG}g0", f"{TAG}g0"), (f"{TAG}g0", f"{TAG}g1")]
    assert not [c for c in machine.commands() if f"netns add {TAG}g1" in c]
    wire_hosts, wire_machine = lab_hosts(tmp_path / "wire")
    wire = VethPorts(wire_hosts, wire=True, one_netns=True)
    wire.create(Traffic(frame_size_bytes=64), 1500, None)
    assert {p.netns for p in wire.ports} == {f"{TAG}g0"}
    assert len([c for c in wire_machine.commands() if "netns add" in c]) == 1


def test_veth_ports_need_one_host_for_switch_and_generator(tmp_path: Path) -> None:
    hosts, _dut, _gen = cabled_hosts(tmp_path)
    with pytest.raises(DeploymentError, match=r"^veth ports need the switch and the generator on one host$"):
        VethPorts(hosts, wire=False)


def test_cabled_ports_are_recorded_brought_up_with_the_mtu_and_put_back(tmp_path: Path) -> None:
    hosts, dut, gen = cabled_hosts(tmp_path)
    ports = CabledPorts(hosts, wire=False)
    assert ports.switch_netns is None and ports.labels() == ["ens1", "ens2"]
    phy = ports.create(Traffic(frame_size_bytes=9018), 9000, None)
    assert [(p.name, p.kind, p.ifname, p.tunable) for p in phy] == [("phy0", "veth", "ens1", False),
                                                                     ("phy1", "veth", "ens2", False)]
    for machine, ifname in ((dut, "ens1"), (dut, "ens2"), (gen, "p0"), (gen, "p1")):
        assert machine.recorded_before(f"ip link set dev {ifname} mtu 9000 up", "port", ifname)
        assert machine.link(ifname).mtu == 9000 and machine.link(ifname).up
    assert not any(" add " in c or "netns" in c for c in [*dut.commands(), *gen.commands()])  # nothing created
    hosts.release()
    assert [(m.link(i).mtu, m.link(i).up) for m, i in ((dut, "ens1"), (gen, "p0"), (gen, "p1"))] == [
        (1500, False), (1500, True), (1500, False)]  # as they were
    assert not hosts.journal.path.exists()


def test_too_few_cables_are_one_line(tmp_path: Path) -> None:
    hosts, _dut, _gen = cabled_hosts(tmp_path, _location_cables())
    with pytest.raises(DeploymentError) as err:
        CabledPorts(hosts, wire=False)
    assert str(err.value) == ("testbed lab.yaml: this deployment needs two DUT ports cabled to interfaces of the "
                              "generator host, the file has 0")
    hosts, _dut, _gen = cabled_hosts(tmp_path, (_location_cables(mixed=True)[2],))
    with pytest.raises(DeploymentError, match=r"^testbed lab\.yaml: --mode trafficgen needs two cables with an "
                                              r"interface on the generator host, the file has 1$"):
        CabledPorts(hosts, wire=True)


def test_location_cables_leave_the_generators_ports_alone(tmp_path: Path) -> None:
    # a hardware generator's ports (otg): vsperf reads no MAC there and touches nothing of the chassis
    dut, gen = FakeMachine("dut"), FakeMachine("gen")
    dut.add_phys("ens1")
    dut.add_phys("ens2")
    testbed = Testbed("lab.yaml", (TestbedHost("dut"), TestbedHost("gen")), "dut", "gen", _location_cables())
    hosts = fake_hosts({"dut": dut, "gen": gen}, testbed, tmp_path)
    ports = CabledPorts(hosts, wire=False, locations=True)
    ports.create(TRAFFIC, 1500, None)
    assert [(p.ifname, p.location, p.mac, p.peer_mac) for p in ports.ports] == [
        ("", LOCATIONS[0], LOCATION_MACS[0], LOCATION_MACS[1]),
        ("", LOCATIONS[1], LOCATION_MACS[1], LOCATION_MACS[0])]
    assert dut.link("ens1").up and gen.calls == []
    cabled = {c.name: (c.details["host"], c.details["cabled to"]) for c in ports.components()}
    assert cabled == {"port 0": ("dut", LOCATIONS[0]), "port 1": ("dut", LOCATIONS[1])}
    hosts.release()
    assert not dut.link("ens1").up and gen.calls == []


def test_a_pci_port_is_left_to_the_switch(tmp_path: Path) -> None:
    cables = (Cable(DutPort(None, "0000:3b:00.0", "vfio-pci"), GenPortSpec("p0", None)),
              Cable(DutPort("ens2", None, "kernel"), GenPortSpec("p1", None)))
    hosts, dut, _gen = cabled_hosts(tmp_path, cables)
    ports = CabledPorts(hosts, wire=False)
    assert ports.labels() == ["PCI 0000:3b:00.0", "ens2"]
    phy = ports.create(TRAFFIC, 1500, None)
    assert [(p.name, p.kind, p.pci, p.ifname) for p in phy] == [("phy0", "pci", "0000:3b:00.0", ""),
                                                                ("phy1", "veth", "", "ens2")]
    assert [e.name for e in hosts.journal if e.host == "dut"] == ["ens2"]  # the PCI device is the switch's
    port0 = ports.components()[0]
    assert (port0.version, port0.details["bus-info"], port0.details["interface"]) == ("vfio-pci", "0000:3b:00.0", "")
    assert not any("0000:3b:00.0" in c for c in dut.commands())
