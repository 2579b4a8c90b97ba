"""vsperf.vswitch.linux_bridge: kernel bridges from forwarding rules (one per connected group of
ports), made on the switch's host through its executor (recorded before they exist), restarted,
flushed, and the host's kernel asked what it can do."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_machine import RUN_ID, FakeMachine
from settings_util import make_settings

from vsperf.errors import DeploymentError, PrerequisiteError
from vsperf.host.host import Host
from vsperf.host.journal import Journal
from vsperf.host.names import RunNames
from vsperf.vswitch.base import ForwardingPlan, ForwardRule, SwitchPort
from vsperf.vswitch.linux_bridge import LinuxBridgeVSwitch, bridge_groups

NS = f"vsp{RUN_ID}s"
B0, B1 = f"vsp{RUN_ID}b0", f"vsp{RUN_ID}b1"


def _ports(*names: str) -> tuple[SwitchPort, ...]:
    return tuple(SwitchPort(n, "veth", "phy" if n.startswith("phy") else "vnf", ifname=n) for n in names)


def _pvp(tunable: bool = True, vlan_id: int | None = None) -> ForwardingPlan:
    """pvp: phy0 <-> vnf0.0, vnf0.1 <-> phy1; `tunable`: the run made the generator ports."""
    ports = (SwitchPort("phy0", "veth", "phy", ifname="p0", tunable=tunable),
             SwitchPort("phy1", "veth", "phy", ifname="p1", tunable=tunable),
             SwitchPort("vnf0.0", "veth", "vnf", ifname="v0"), SwitchPort("vnf0.1", "veth", "vnf", ifname="v1"))
    rules = (ForwardRule("phy0", "vnf0.0"), ForwardRule("vnf0.1", "phy1", push_vlan_id=vlan_id),
             ForwardRule("phy1", "vnf0.1"), ForwardRule("vnf0.0", "phy0", push_vlan_id=vlan_id))
    return ForwardingPlan(ports, rules)


def _switch(tmp_path: Path, name: str = "local") -> tuple[LinuxBridgeVSwitch, FakeMachine, Journal]:
    machine = FakeMachine(name)
    journal = Journal(RUN_ID, root=tmp_path / "state")
    machine.watch(journal)
    return LinuxBridgeVSwitch(make_settings(), Host(name, machine, RunNames(RUN_ID), journal)), machine, journal


def _started(tmp_path: Path, plan: ForwardingPlan, name: str = "local") -> tuple[LinuxBridgeVSwitch, FakeMachine]:
    switch, machine, _journal = _switch(tmp_path, name)
    netns = NS if name == "local" else None
    for port in plan.ports:
        machine.add_phys(port.ifname, netns=netns)
    switch.start(netns)
    switch.configure(plan)
    machine.calls.clear()
    return switch, machine


def test_p2p_is_one_bridge() -> None:
    plan = ForwardingPlan(_ports("phy0", "phy1"), (ForwardRule("phy0", "phy1"), ForwardRule("phy1", "phy0")))
    assert bridge_groups(plan) == [["phy0", "phy1"]]


def test_pvp_is_one_bridge_per_hop() -> None:
    assert sorted(bridge_groups(_pvp())) == [["phy0", "vnf0.0"], ["phy1", "vnf0.1"]]


def test_splitting_one_port_between_two_is_refused() -> None:
    rules = (ForwardRule("phy0", "vnf0.0", (("nw_dst", "198.18.1.1"),)),
             ForwardRule("phy0", "vnf1.0", (("nw_dst", "198.18.1.2"),)))
    plan = ForwardingPlan(_ports("phy0", "phy1", "vnf0.0", "vnf0.1", "vnf1.0", "vnf1.1"), rules)
    with pytest.raises(DeploymentError, match="cannot split traffic from phy0"):
        bridge_groups(plan)


def test_bridges_are_recorded_before_they_exist_and_deleted_at_stop(tmp_path: Path) -> None:
    switch, machine, journal = _switch(tmp_path)
    for name in ("p0", "p1", "v0", "v1"):
        machine.add_phys(name, netns=NS)
    with pytest.raises(DeploymentError, match=r"configure\(\) called before start\(\)"):
        switch.configure(_pvp())
    switch.start(NS)
    switch.configure(_pvp())
    assert machine.recorded_before(f"ip -n {NS} link add name {B0} type bridge", "link", B0)
    assert machine.recorded_before(f"ip -n {NS} link add name {B1} type bridge", "link", B1)
    assert (machine.link("p0", NS).master, machine.link("v0", NS).master) == (B0, B0)
    assert (machine.link("p1", NS).master, machine.link("v1", NS).master) == (B1, B1)
    # GRO on the generator ports the run made (veth then takes XDP frames), nowhere else
    assert [c for c in machine.commands() if "ethtool" in c] == [f"[{NS}] ethtool -K p0 gro on",
                                                                 f"[{NS}] ethtool -K p1 gro on"]
    assert switch.bridges() == (B0, B1) and switch.details() == {"bridges": f"{B0} {B1}"}
    switch.stop()
    assert (NS, B0) not in machine.links and (NS, B1) not in machine.links
    assert machine.link("p0", NS).master is None and [e for e in journal if e.kind == "link"] == []
    calls = len(machine.calls)
    switch.stop()
    assert len(machine.calls) == calls


def test_a_testbeds_ports_are_not_tuned_and_vlan_push_tags_towards_the_generator(tmp_path: Path) -> None:
    switch, machine, _journal = _switch(tmp_path, "dut")
    for name in ("p0", "p1", "v0", "v1"):
        machine.add_phys(name)
    switch.start(None)
    switch.configure(_pvp(tunable=False, vlan_id=123))
    commands = machine.commands()
    assert not any("ethtool" in c for c in commands)  # a testbed's interfaces stay as they are
    assert f"ip link add name {B0} type bridge stp_state 0 forward_delay 0 vlan_filtering 1" in commands
    # untagged frames enter VLAN 123; they leave tagged towards the generator, untagged towards the VNF
    assert "bridge vlan add dev p0 vid 123 pvid" in commands and "bridge vlan add dev p1 vid 123 pvid" in commands
    assert "bridge vlan add dev v0 vid 123 pvid untagged" in commands
    assert commands.index("bridge vlan del dev p0 vid 1") < commands.index("bridge vlan add dev p0 vid 123 pvid")


def test_one_vlan_id_per_deployment(tmp_path: Path) -> None:
    switch, _machine, _journal = _switch(tmp_path)
    plan = ForwardingPlan(_ports("phy0", "phy1"), (ForwardRule("phy0", "phy1", push_vlan_id=1),
                                                    ForwardRule("phy1", "phy0", push_vlan_id=2)))
    switch.start(None)
    with pytest.raises(DeploymentError, match=r"one VLAN id per deployment, got \[1, 2\]"):
        switch.configure(plan)


def test_header_matches_are_noted_not_refused(tmp_path: Path) -> None:
    plan = ForwardingPlan(_ports("phy0", "phy1"), (ForwardRule("phy0", "phy1", (("dl_type", "0x0800"),)),
                                                    ForwardRule("phy1", "phy0", (("dl_type", "0x0800"),))))
    switch, _machine = _started(tmp_path, plan)
    assert "forwards by MAC learning" in switch.details()["note"]


def test_restart_takes_every_bridge_down_then_up(tmp_path: Path) -> None:
    switch, machine = _started(tmp_path, _pvp())
    switch.restart()
    assert machine.commands() == [f"[{NS}] ip link set dev {name} {state}" for state in ("down", "up")
                                  for name in (B0, B1)]
    assert machine.link(B0, NS).up and machine.link(B1, NS).up


def test_forget_flushes_each_fdb(tmp_path: Path) -> None:
    switch, machine = _started(tmp_path, _pvp())
    switch.forget_addresses()
    assert machine.commands() == [f"[{NS}] ip link set dev {name} type bridge fdb_flush" for name in (B0, B1)]


def test_errors_are_deployment_errors(tmp_path: Path) -> None:
    switch, machine = _started(tmp_path, _pvp())
    del machine.links[(NS, B1)]  # someone deleted a bridge
    with pytest.raises(DeploymentError, match=rf"^linux-bridge: .*ip link set dev {B1} down.*Cannot find device"):
        switch.restart()
    fresh, _machine, _journal = _switch(tmp_path / "b")
    with pytest.raises(DeploymentError, match=r"configure\(\) not called"):
        fresh.forget_addresses()
    with pytest.raises(DeploymentError, match=r"configure\(\) not called"):
        fresh.restart()


@pytest.mark.parametrize(("name", "kernel"), [("local", "this kernel"), ("dut", "the kernel of host dut")])
def test_the_switch_hosts_kernel_says_what_it_can_do(tmp_path: Path, name: str, kernel: str) -> None:
    switch, machine, _journal = _switch(tmp_path, name)
    config = "/boot/config-6.1.0-test"
    machine.files[config] = "#\nCONFIG_BRIDGE=m\nCONFIG_BRIDGE_VLAN_FILTERING=y\n"
    switch.check_prerequisites()
    switch.check_vlan_support()
    machine.files[config] = "#\nCONFIG_BRIDGE=m\n# CONFIG_BRIDGE_VLAN_FILTERING is not set\n"
    with pytest.raises(PrerequisiteError) as err:
        switch.check_vlan_support()
    assert str(err.value) == (f"linux-bridge cannot push VLAN tags on {kernel} (CONFIG_BRIDGE_VLAN_FILTERING is "
                              "off): use --vswitch ovs for Frame Modification vlan")
    machine.files[config] = "#\n"
    with pytest.raises(PrerequisiteError, match=rf"^{kernel} has no bridge support \(CONFIG_BRIDGE\)"):
        switch.check_prerequisites()
    del machine.files[config]  # neither /boot/config nor /proc/config.gz readable: not refused
    switch.check_prerequisites()
    assert switch.version() == "6.1.0-test"
    assert all(argv[0] in ("uname", "cat", "gzip") for argv, _ns in machine.calls)  # read only


def test_a_bridge_it_could_not_make_is_not_deleted(tmp_path: Path) -> None:
    switch, machine, journal = _switch(tmp_path)
    for name in ("p0", "p1", "v0", "v1"):
        machine.add_phys(name, netns=NS)
    machine.add_phys(B1, netns=NS)  # an interface of that name exists already: not the run's
    switch.start(NS)
    with pytest.raises(DeploymentError, match=rf"^cannot create bridge {B1}: .*File exists"):
        switch.configure(_pvp())
    switch.stop()
    assert (NS, B1) in machine.links and (NS, B0) not in machine.links
    assert [e.name for e in journal] == []  # neither is recorded any more
