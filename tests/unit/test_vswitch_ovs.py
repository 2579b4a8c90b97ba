"""OVS flows from forwarding rules, interface configuration, version parsing (no OVS started)."""

from pathlib import Path

import pytest
from settings_util import make_settings

from vsperf.host.workdir import RunContext
from vsperf.errors import DeploymentError
from vsperf.executor import LocalExecutor
from vsperf.vswitch.base import ForwardingPlan, ForwardRule, SwitchPort
from vsperf.vswitch.ovs import OvsVSwitch, parse_version, plan_flows, rule_to_flow

PHY = (SwitchPort("phy0", "veth", "phy", ifname="p0"), SwitchPort("phy1", "veth", "phy", ifname="p1"))
VNF = (SwitchPort("vnf0.0", "veth", "vnf", ifname="v0"), SwitchPort("vnf0.1", "veth", "vnf", ifname="v1"))


def _ovs(**settings: object) -> OvsVSwitch:
    return OvsVSwitch(make_settings(settings), RunContext("abc123", Path("/tmp"), Path("/tmp"), LocalExecutor()))


def test_p2p_flows_are_vsperfs() -> None:
    plan = ForwardingPlan(PHY, (ForwardRule("phy0", "phy1"), ForwardRule("phy1", "phy0")))
    assert plan_flows(plan) == [
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


def test_plans_refuse_rules_on_unknown_ports() -> None:
    with pytest.raises(ValueError, match="unknown port"):
        ForwardingPlan(PHY, (ForwardRule("phy0", "vnf0.0"),))
    with pytest.raises(ValueError, match="VLAN id"):
        ForwardRule("phy0", "phy1", push_vlan_id=4096)


def test_interface_types_follow_the_settings() -> None:
    port = PHY[0]
    assert _ovs().interface_config(port, 0) == ("afxdp", {"xdp-mode": "native", "n_rxq": "1"})
    assert _ovs(VSWITCH_OVS_AFXDP_MODE="generic").interface_config(port, 0)[1]["xdp-mode"] == "generic"
    assert _ovs(VSWITCH_OVS_PORT_TYPE="system").interface_config(port, 0) == ("system", {})
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


def test_stop_before_start_is_harmless() -> None:
    ovs = _ovs()
    ovs.stop()
    ovs.check_alive()
    assert ovs.pids() == {}
