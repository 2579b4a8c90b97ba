"""vsperf.vswitch.ovs: flows from forwarding rules, interface configuration, version parsing, and a
private OVS's life on its host (the local lab's switch namespace, or a testbed DUT host's own),
against a FakeMachine whose OVS does what it is told."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_machine import RUN_ID, FakeMachine, FakeOvs
from settings_util import make_settings

from vsperf.errors import DeploymentError, PrerequisiteError
from vsperf.host.host import Host
from vsperf.host.journal import Journal
from vsperf.host.names import RunNames
from vsperf.vswitch.base import ForwardingPlan, ForwardRule, SwitchPort
from vsperf.vswitch.ovs import NORMAL_FLOW, OvsVSwitch, parse_version, plan_flows, rule_to_flow

PHY = (SwitchPort("phy0", "veth", "phy", ifname="p0"), SwitchPort("phy1", "veth", "phy", ifname="p1"))
VNF = (SwitchPort("vnf0.0", "veth", "vnf", ifname="v0"), SwitchPort("vnf0.1", "veth", "vnf", ifname="v1"))
PLAN = ForwardingPlan(PHY, (ForwardRule("phy0", "phy1"), ForwardRule("phy1", "phy0")))
RUN_DIR = f"/tmp/vsperf-{RUN_ID}-ovs"
BRIDGE = f"vsp{RUN_ID}b0"


def _host(tmp_path: Path, machine: FakeMachine | None = None) -> Host:
    machine = machine or FakeMachine("local")
    journal = Journal(RUN_ID, root=tmp_path / "state")
    machine.watch(journal)
    return Host(machine.name, machine, RunNames(RUN_ID), journal)


def _ovs(tmp_path: Path = Path("/nonexistent"), machine: FakeMachine | None = None, **settings: object) -> OvsVSwitch:
    return OvsVSwitch(make_settings(settings), _host(tmp_path, machine))


def test_p2p_flows_are_vsperfs() -> None:
    assert plan_flows(PLAN) == [
        "idle_timeout=0,in_port=1,actions=output:2",
        "idle_timeout=0,in_port=2,actions=output:1",
    ]


def test_matches_vlan_push_and_priority() -> None:
    plan = ForwardingPlan(PHY + VNF, ())
    rule = ForwardRule("vnf0.1", "phy1", (("dl_type", "0x0800"), ("nw_dst", "198.18.1.7")), push_vlan_id=100,
                       priority=7)
    assert rule_to_flow(rule, plan) == (
        "idle_timeout=0,priority=7,in_port=4,dl_type=0x0800,nw_dst=198.18.1.7,"
        "actions=mod_vlan_vid:100,output:2"
    )


def test_frame_modification_actions_come_before_the_output() -> None:
    plan = ForwardingPlan(PHY, ())
    rule = ForwardRule("phy0", "phy1", (("dl_type", "0x0800"),), modify=("mod_nw_ttl:251",))
    assert rule_to_flow(rule, plan) == "idle_timeout=0,in_port=1,dl_type=0x0800,actions=mod_nw_ttl:251,output:2"


def test_a_pmd_mask_naming_a_cpu_the_host_lacks_is_refused_before_anything_runs() -> None:
    switch = _ovs(VSWITCH_PMD_CPU_MASK="10")
    switch.host._cpus = [0, 1]  # what /proc/self/status says on a 2-CPU machine
    with pytest.raises(PrerequisiteError, match="VSWITCH_PMD_CPU_MASK 10 names CPU 4, which this machine does not "
                                                "have \\(CPUs 0, 1\\)"):
        switch._check_pmd_mask()
    fine = _ovs(VSWITCH_PMD_CPU_MASK="0x2")
    fine.host._cpus = [0, 1]
    fine._check_pmd_mask()  # CPU 1: there


def test_interface_types_follow_the_settings() -> None:
    port = PHY[0]
    assert _ovs().interface_config(port, 0) == ("afxdp", {"xdp-mode": "native", "n_rxq": "1"})
    assert _ovs(VSWITCH_OVS_AFXDP_MODE="generic").interface_config(port, 0)[1]["xdp-mode"] == "generic"
    assert _ovs(VSWITCH_OVS_PORT_TYPE="system").interface_config(port, 0) == ("system", {})
    assert _ovs(LAB_PORT_QUEUES=2).interface_config(port, 0)[1]["n_rxq"] == "2"
    tap = SwitchPort("vnf0.0", "veth", "vnf", ifname="t0", tap=True)  # a guest's NIC: AF_XDP loses frames there
    assert _ovs().interface_config(tap, 2) == ("system", {})
    with pytest.raises(DeploymentError, match="vhostuser"):
        _ovs().interface_config(SwitchPort("vnf0.0", "vhostuser", "vnf", socket_path="/tmp/s"), 2)


def test_jumbo_frames_fall_back_to_af_packet_ports() -> None:
    ovs = _ovs()
    ovs._mtu = 9000
    assert ovs.interface_config(PHY[0], 0) == ("system", {})
    assert "AF_PACKET" in ovs.details()["note"]
    ovs._mtu = 1500
    assert "note" not in ovs.details()


def test_details_and_names() -> None:
    ovs = _ovs(VSWITCH_OVS_PORT_TYPE="system")
    assert ovs.details() == {"datapath": "netdev (userspace)", "port_type": "system"}
    assert ovs.iface_name(PHY[1], 1) == "p1"
    assert ovs.iface_name(SwitchPort("vnf0.0", "vhostuser", "vnf", socket_path="/s"), 2) == "brx2"
    assert _ovs().other_config() == {"pmd-cpu-mask": make_settings()["VSWITCH_PMD_CPU_MASK"]}
    assert _ovs(VSWITCH_PMD_CPU_MASK="0x2").other_config() == {"pmd-cpu-mask": "0x2"}


def test_version_parsing() -> None:
    assert parse_version("ovs-vswitchd (Open vSwitch) 3.1.0\nDPDK 22.11.1\n") == "3.1.0"
    assert parse_version("something else") == "something else"


def test_version_is_asked_of_the_switch_host(tmp_path: Path) -> None:
    machine = FakeMachine("dut")
    FakeOvs(machine, "ovs-vswitchd (Open vSwitch) 3.1.7\n")
    assert _ovs(tmp_path, machine).version() == "3.1.7"
    assert machine.commands() == ["ovs-vswitchd --version"]


def test_stop_before_start_is_harmless() -> None:
    machine = FakeMachine("local")
    ovs = _ovs(machine=machine)
    ovs.stop()
    ovs.check_alive()
    assert ovs.pids() == {} and machine.calls == []


@pytest.mark.parametrize(("name", "message"), [
    ("local", "Open vSwitch is missing (ovs-vsctl): apt-get install openvswitch-switch"),
    ("dut", "host dut: Open vSwitch is missing (ovs-vsctl): apt-get install openvswitch-switch there"),
])
def test_missing_programs_are_named_with_the_host_that_lacks_them(tmp_path: Path, name: str, message: str) -> None:
    machine = FakeMachine(name)
    machine.files["/usr/share/openvswitch/vswitch.ovsschema"] = "{}"
    _ovs(tmp_path, machine).check_prerequisites()
    machine.absent.add("ovs-vsctl")
    with pytest.raises(PrerequisiteError) as err:
        _ovs(tmp_path, machine).check_prerequisites()
    assert str(err.value) == message


@pytest.mark.parametrize(("mode", "expected"), [
    ("ports", ["idle_timeout=0,in_port=1,actions=output:2", "idle_timeout=0,in_port=2,actions=output:1"]),
    ("normal", [NORMAL_FLOW]),
])
def test_flow_mode_flows_are_written_on_the_switch_host(tmp_path: Path, mode: str, expected: list[str]) -> None:
    machine = FakeMachine("dut")
    FakeOvs(machine)
    switch = _ovs(tmp_path, machine, VSWITCH_FLOW_MODE=mode)
    switch.start(None)
    machine.calls.clear()
    switch.configure(PLAN)
    flows = f"{RUN_DIR}/flows.txt"
    assert machine.files[flows].splitlines() == expected and machine.modes[flows] == 0o600
    commands = machine.commands()
    assert commands[-3:] == [f"put {flows}", f"ovs-ofctl del-flows {BRIDGE}", f"ovs-ofctl add-flows {BRIDGE} {flows}"]


def test_forget_flushes_the_bridge_fdb_and_needs_a_bridge(tmp_path: Path) -> None:
    machine = FakeMachine("local")
    FakeOvs(machine)
    switch = _ovs(tmp_path, machine)
    with pytest.raises(DeploymentError, match="configure"):
        switch.forget_addresses()
    with pytest.raises(DeploymentError):
        switch.restart()
    switch.start(f"vsp{RUN_ID}s")
    switch.configure(PLAN)
    machine.calls.clear()
    switch.forget_addresses()
    [argv] = [argv for argv, _ns in machine.calls]
    assert argv[0] == "ovs-appctl" and argv[-2:] == ("fdb/flush", BRIDGE)
    assert f"{RUN_DIR}/ovs-vswitchd.ctl" in argv


@pytest.mark.parametrize(("name", "netns"), [("local", f"vsp{RUN_ID}s"), ("dut", None)])
def test_a_private_ovs_lives_in_the_runs_directory_and_is_journaled_by_pid(
        tmp_path: Path, name: str, netns: str | None) -> None:
    # the local lab runs it in the switch namespace; a testbed DUT host in its own namespace
    machine = FakeMachine(name)
    ovs = FakeOvs(machine)
    switch = _ovs(tmp_path, machine)
    journal = switch.host.journal
    assert journal is not None
    switch.start(netns)
    assert RUN_DIR in machine.dirs and machine.recorded_before(f"mkdir -p -m 700 -- {RUN_DIR}", "dir", RUN_DIR)
    server = "[" + netns + "] ovsdb-server" if netns else "ovsdb-server"
    assert machine.index(f"ovsdb-tool create {RUN_DIR}/conf.db") < machine.index(server)
    assert ovs.netns == netns  # ovs-vswitchd runs where its ports are
    processes = [(e.host, e.name, e.pid, e.start_ticks) for e in journal if e.kind == "process"]
    assert processes == [(name, "ovsdb-server", 4101, 5001), (name, "ovs-vswitchd", 4102, 5002)]
    assert switch.pids() == {"ovs-vswitchd": 4102, "ovsdb-server": 4101}
    if netns is None:  # the userspace datapath's own interface, which a killed ovs-vswitchd leaves
        assert machine.recorded_before("ovs-vswitchd unix:", "link", "ovs-netdev")
    switch.configure(PLAN)
    add_br = next(c for c in machine.commands() if " add-br " in c)
    assert machine.recorded_before(add_br, "link", BRIDGE)  # a killed ovs-vswitchd leaves the bridge
    assert "datapath_type=netdev" in add_br and "type=afxdp ofport_request=1 mtu_request=1500" in add_br
    assert switch.bridges() == (BRIDGE,)
    switch.check_alive()
    switch.stop()
    assert ovs.running() == set() and switch.pids() == {}
    exits = [c for c in machine.commands() if c.startswith("ovs-appctl") and " exit" in c]
    assert exits == [f"ovs-appctl --timeout=10 -t {RUN_DIR}/ovs-vswitchd.ctl exit --cleanup",
                     f"ovs-appctl --timeout=10 -t {RUN_DIR}/ovsdb-server.ctl exit"]
    assert [e for e in journal if e.kind == "process"] == []  # forgotten once gone
    switch.stop()  # twice: nothing more


def test_another_userspace_ovs_on_a_testbed_host_is_refused_before_anything_starts(tmp_path: Path) -> None:
    machine = FakeMachine("dut")
    FakeOvs(machine)
    machine.add_phys("ovs-netdev", "02:00:00:00:00:09")
    switch = _ovs(tmp_path, machine)
    with pytest.raises(DeploymentError) as err:
        switch.start(None)
    assert str(err.value) == ("host dut: another Open vSwitch runs a userspace datapath there (ovs-netdev exists); "
                              "stop it or use --vswitch linux-bridge")
    assert machine.commands() == ["ip link show dev ovs-netdev"]  # no OVS command, nothing recorded
    assert switch.host.journal is not None and len(switch.host.journal) == 0


def test_a_daemon_whose_pid_was_reused_is_not_signalled(tmp_path: Path) -> None:
    machine = FakeMachine("dut")
    FakeOvs(machine)
    switch = _ovs(tmp_path, machine)
    switch.start(None)
    machine.procs[4102].start_ticks = 1  # ovs-vswitchd is gone and its PID belongs to another process
    with pytest.raises(DeploymentError, match=r"^ovs-vswitchd \(pid 4102\) died"):
        switch.check_alive()
    machine.calls.clear()
    switch.stop()
    assert not any("kill -" in c and "4102" in c for c in machine.commands())
    assert not any("ovs-vswitchd.ctl exit" in c for c in machine.commands())
    assert machine.procs[4102].running  # the other process still runs
    assert [e.name for e in switch.host.journal or [] if e.kind == "process"] == []


def test_restart_starts_a_new_vswitchd_and_programs_the_flows_again(tmp_path: Path) -> None:
    machine = FakeMachine("local")
    ovs = FakeOvs(machine)
    switch = _ovs(tmp_path, machine)
    switch.start(f"vsp{RUN_ID}s")
    switch.configure(PLAN)
    machine.calls.clear()
    switch.restart()
    commands = machine.commands()
    assert commands[0].startswith(f"ovs-appctl --timeout=10 -t {RUN_DIR}/ovs-vswitchd.ctl exit")
    assert any(c.startswith(f"[vsp{RUN_ID}s] ovs-vswitchd unix:") for c in commands)
    assert commands[-2:] == [f"ovs-ofctl del-flows {BRIDGE}", f"ovs-ofctl add-flows {BRIDGE} {RUN_DIR}/flows.txt"]
    assert switch.pids()["ovs-vswitchd"] == 4112 and ovs.restarts == 1
    journal = switch.host.journal or []
    assert [(e.name, e.pid) for e in journal if e.kind == "process"] == [("ovsdb-server", 4101),
                                                                         ("ovs-vswitchd", 4112)]
    switch.stop()


def test_a_daemon_that_ignores_exit_is_signalled_by_pid_with_its_start_time_checked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("vsperf.vswitch.ovs._STOP_TIMEOUT_S", 0.05)
    machine = FakeMachine("dut")
    ovs = FakeOvs(machine)
    switch = _ovs(tmp_path, machine)
    switch.start(None)
    answer = ovs.answer
    machine.handlers["ovs-appctl"] = lambda argv: (0, "") if "exit" in argv else answer(argv)  # hangs on
    machine.calls.clear()
    switch.stop()
    signals = [argv[2] for argv, _ns in machine.calls if argv[:2] == ("sh", "-c") and "kill -" in argv[2]]
    # SIGTERM to its group, only while PID 4102 is still the process that started at tick 5002
    assert signals and "kill -15 -4102" in signals[0] and '[ "$1" = 5002 ]' in signals[0]
    assert ovs.running() == set()
    assert [e for e in switch.host.journal or [] if e.kind == "process"] == []
