"""Kernel bridges from forwarding rules: one bridge per connected group of ports."""

import pytest

from vsperf.errors import DeploymentError
from vsperf.vswitch.base import ForwardingPlan, ForwardRule, SwitchPort
from vsperf.vswitch.linux_bridge import bridge_groups


def _ports(*names: str) -> tuple[SwitchPort, ...]:
    return tuple(SwitchPort(n, "veth", "phy" if n.startswith("phy") else "vnf", ifname=n) for n in names)


def test_p2p_is_one_bridge() -> None:
    plan = ForwardingPlan(_ports("phy0", "phy1"), (ForwardRule("phy0", "phy1"), ForwardRule("phy1", "phy0")))
    assert bridge_groups(plan) == [["phy0", "phy1"]]


def test_pvp_is_one_bridge_per_hop() -> None:
    rules = (ForwardRule("phy0", "vnf0.0"), ForwardRule("vnf0.0", "phy0"),
             ForwardRule("vnf0.1", "phy1"), ForwardRule("phy1", "vnf0.1"))
    plan = ForwardingPlan(_ports("phy0", "phy1", "vnf0.0", "vnf0.1"), rules)
    assert sorted(bridge_groups(plan)) == [["phy0", "vnf0.0"], ["phy1", "vnf0.1"]]


def test_splitting_one_port_between_two_is_refused() -> None:
    rules = (ForwardRule("phy0", "vnf0.0", (("nw_dst", "198.18.1.1"),)),
             ForwardRule("phy0", "vnf1.0", (("nw_dst", "198.18.1.2"),)))
    plan = ForwardingPlan(_ports("phy0", "phy1", "vnf0.0", "vnf0.1", "vnf1.0", "vnf1.1"), rules)
    with pytest.raises(DeploymentError, match="cannot split traffic from phy0"):
        bridge_groups(plan)
