"""vsperf.vswitch.none: testpmd as the switch (port pairs from the plan, command line, lifecycle)."""

from __future__ import annotations

from pathlib import Path

import pytest
from dpdk_fixtures import dpdk_settings, make_host
from fake_machine import FakeMachine
from test_dpdk_testpmd import FORWARD_STATS

from vsperf.errors import ConfigError, DeploymentError, PrerequisiteError
from vsperf.vswitch.base import ForwardingPlan, ForwardRule, SwitchPort
from vsperf.vswitch.none import NoVSwitch, forwarding_pairs

PHY0 = SwitchPort("phy0", "veth", "phy", ifname="vspab12p0")
PHY1 = SwitchPort("phy1", "veth", "phy", ifname="vspab12p1")
V00 = SwitchPort("vnf0.0", "veth", "vnf", ifname="vspab12v0s0")
V01 = SwitchPort("vnf0.1", "veth", "vnf", ifname="vspab12v0s1")


def both(a: str, b: str) -> tuple[ForwardRule, ForwardRule]:
    return ForwardRule(a, b), ForwardRule(b, a)


def names(pairs: list[tuple[SwitchPort, SwitchPort]]) -> list[tuple[str, str]]:
    return [(a.name, b.name) for a, b in pairs]


def test_p2p_is_one_pair() -> None:
    plan = ForwardingPlan((PHY0, PHY1), both("phy0", "phy1"))
    assert names(forwarding_pairs(plan)) == [("phy0", "phy1")]
    one_way = ForwardingPlan((PHY0, PHY1), (ForwardRule("phy1", "phy0"),))
    assert names(forwarding_pairs(one_way)) == [("phy0", "phy1")]  # plan order within a pair


def test_pvp_is_two_pairs_in_rule_order() -> None:
    plan = ForwardingPlan(
        (PHY0, PHY1, V00, V01),
        (ForwardRule("phy0", "vnf0.0"), ForwardRule("vnf0.1", "phy1"),
         ForwardRule("phy1", "vnf0.1"), ForwardRule("vnf0.0", "phy0")),
    )
    assert names(forwarding_pairs(plan)) == [("phy0", "vnf0.0"), ("phy1", "vnf0.1")]


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ((ForwardRule("phy0", "phy1", match=(("nw_dst", "198.18.1.0/25"),)),), "cannot match header fields"),
        ((ForwardRule("phy0", "phy1", push_vlan_id=100),), "cannot push VLAN tags"),
        ((ForwardRule("phy0", "phy0"),), "back to itself"),
        ((ForwardRule("phy0", "phy1"), ForwardRule("phy0", "vnf0.0")), "two pairs"),
    ],
)
def test_rules_testpmd_cannot_express(rules: tuple[ForwardRule, ...], message: str) -> None:
    with pytest.raises(DeploymentError, match=message):
        forwarding_pairs(ForwardingPlan((PHY0, PHY1, V00), rules))


def test_testpmd_command_line_from_plan_and_settings(tmp_path: Path) -> None:
    switch = NoVSwitch(dpdk_settings(VSWITCH_PMD_CPU_MASK="0x6", TESTPMD_FWD_MODE="mac",
                                     DPDK_PORT_DRIVER="af_packet", TESTPMD_ARGS=["--burst=64"]), make_host(tmp_path))
    plan = ForwardingPlan((PHY0, PHY1, V00, V01),
                          (*both("phy0", "vnf0.0"), *both("vnf0.1", "phy1")))
    cfg = switch.testpmd_config(plan)
    assert cfg.eal.file_prefix == "vspab12n"
    assert cfg.eal.lcores == "0@1,1@1"  # first CPU of the PMD mask
    assert cfg.eal.vdevs == (
        "net_af_packet0,iface=vspab12p0", "net_af_packet1,iface=vspab12v0s0",
        "net_af_packet2,iface=vspab12p1", "net_af_packet3,iface=vspab12v0s1",
    )
    assert (cfg.fwd_mode, cfg.extra_args) == ("mac", ("--burst=64",))
    assert (cfg.descriptors, cfg.nb_mbufs) == (1024, 16384)


def test_lifecycle_without_ports_starts_nothing(tmp_path: Path) -> None:
    machine = FakeMachine("local")
    switch = NoVSwitch(dpdk_settings(), make_host(tmp_path, machine))
    with pytest.raises(DeploymentError, match="before start"):
        switch.configure(ForwardingPlan((), ()))
    switch.start("vspab12s")
    switch.configure(ForwardingPlan((), ()))  # deployment "clean"
    assert switch.pids() == {}
    switch.check_alive()
    switch.stop()
    switch.stop()
    assert machine.spawned == [] and machine.calls == []


@pytest.mark.parametrize(("host", "netns"), [("local", "vspab12s"), ("dut", None)])
def test_testpmd_forwards_in_the_switch_namespace_of_its_host_and_stops_with_sigint(
        tmp_path: Path, host: str, netns: str | None) -> None:
    # the local lab's switch namespace, or a testbed DUT host's own namespace
    machine = FakeMachine(host)
    machine.outputs["dpdk-testpmd"] = "io packet forwarding - ports=2 - cores=1 - streams=2\n"
    machine.final_outputs["dpdk-testpmd"] = FORWARD_STATS
    switch = NoVSwitch(dpdk_settings(), make_host(tmp_path, machine, name=host))
    journal = switch.host.journal
    assert journal is not None
    machine.watch(journal)
    switch.start(netns)
    switch.configure(ForwardingPlan((PHY0, PHY1), both("phy0", "phy1")))
    [(argv, ns)] = machine.spawned
    assert ns == netns and argv[0] == "dpdk-testpmd" and "--file-prefix=vspab12n" in argv
    assert argv[argv.index("--vdev") + 1] == "net_af_xdp0,iface=vspab12p0"
    # its DPDK runtime directory recorded before it started, the process by PID once it runs
    spawn = "[spawn] " + (f"[{netns}] " if netns else "") + "dpdk-testpmd"
    assert machine.recorded_before(spawn, "dir", "/var/run/dpdk/vspab12n")
    assert machine.recorded_before(spawn, "dir", "/tmp/vsperf-ab12-logs")  # its log's directory
    assert [(e.host, e.name) for e in journal if e.kind == "process"] == [(host, "testpmd")]
    pid = switch.pids()["testpmd"]
    switch.check_alive()
    switch.stop()
    assert not machine.procs[pid].running and switch.final_counters[1].tx_packets == 149990
    # the process forgotten; the release removes the directories
    assert sorted((e.kind, e.name) for e in journal) == [("dir", "/tmp/vsperf-ab12-logs"),
                                                         ("dir", "/var/run/dpdk/vspab12n")]
    assert "rm -rf -- /var/run/dpdk/vspab12n" in machine.commands() and switch.pids() == {}


def test_refuses_vlan_modification_and_vhost_ports(tmp_path: Path) -> None:
    switch = NoVSwitch(dpdk_settings(), make_host(tmp_path, FakeMachine("local")))
    with pytest.raises(ConfigError, match="cannot push VLAN tags"):
        switch.check_vlan_support()
    assert sorted(switch.PORT_KINDS) == ["veth"]
    assert switch.SUPPORTS_MATCH is False
    switch.start("vspab12s")
    vhost = SwitchPort("vnf0.0", "vhostuser", "vnf", socket_path="/tmp/s")
    with pytest.raises(DeploymentError, match=r"cannot attach vhostuser port vnf0\.0"):
        switch.configure(ForwardingPlan((PHY0, vhost), both("phy0", "vnf0.0")))


def test_refuses_jumbo_frames(tmp_path: Path) -> None:
    switch = NoVSwitch(dpdk_settings(), make_host(tmp_path, FakeMachine("local")))
    switch.start("vspab12s")
    with pytest.raises(DeploymentError, match="frames larger than 1518 bytes"):
        switch.configure(ForwardingPlan((PHY0, PHY1), both("phy0", "phy1"), mtu_bytes=3000))
    assert switch.pids() == {}


def test_details_name_the_forwarder(tmp_path: Path) -> None:
    details = NoVSwitch(dpdk_settings(), make_host(tmp_path)).details()
    assert details["forwarder"] == "dpdk-testpmd"
    assert details["port_driver"] == "net_af_xdp" and details["cpu"] == "1"


@pytest.mark.parametrize(("driver", "refused"), [("af_xdp", True), ("af_packet", False)])
def test_several_veth_queues_need_af_packet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            driver: str, refused: bool) -> None:
    # testpmd opens one queue per port: with net_af_xdp, frames on the veth's second queue are lost
    monkeypatch.setattr("vsperf.vswitch.none.require_port_driver", lambda _driver: None)
    switch = NoVSwitch(dpdk_settings(DPDK_PORT_DRIVER=driver, LAB_PORT_QUEUES=2),
                       make_host(tmp_path, FakeMachine("local")))
    if refused:
        with pytest.raises(ConfigError, match=r"vswitch none: LAB_PORT_QUEUES=2: 2 queues need DPDK_PORT_DRIVER"):
            switch.check_prerequisites()
    else:
        switch.check_prerequisites()


def test_prerequisites_are_the_switch_hosts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a testbed DUT host: testpmd is looked for there; this machine's DPDK PMDs are not its
    monkeypatch.setattr("vsperf.vswitch.none.require_port_driver",
                        lambda _driver: pytest.fail("this machine's PMDs checked for a testbed host"))
    machine = FakeMachine("dut")
    switch = NoVSwitch(dpdk_settings(), make_host(tmp_path, machine, name="dut"))
    switch.check_prerequisites()
    machine.absent.add("dpdk-testpmd")
    with pytest.raises(PrerequisiteError, match=r"^host dut: dpdk-testpmd is missing: apt-get install dpdk-dev there$"):
        switch.check_prerequisites()
