"""vsperf.vswitch.base: the forwarding plan a switch executes, and what a switch that implements
only the required methods answers to the optional DUT actions (RFC 2544 reset, RFC 2889) and to
PCI ports."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_machine import RUN_ID, FakeMachine

from vsperf.dpdk.eal import HugepageMemory
from vsperf.errors import DeploymentError
from vsperf.host.host import Host
from vsperf.host.names import RunNames
from vsperf.vswitch.base import ForwardingPlan, ForwardRule, SwitchPort, VSwitch

PHY = (SwitchPort("phy0", "veth", "phy", ifname="p0"), SwitchPort("phy1", "veth", "phy", ifname="p1"))


class PlainSwitch(VSwitch):
    """A switch that implements only what every switch must."""

    NAME = "plain"

    def version(self) -> str:
        return "1"

    def start(self, netns: str | None) -> None:
        pass

    def configure(self, plan: ForwardingPlan) -> None:
        pass

    def stop(self) -> None:
        pass


def test_a_switch_without_the_hooks_says_it_cannot(tmp_path: Path) -> None:
    switch = PlainSwitch({}, Host("local", FakeMachine("local"), RunNames(RUN_ID), None))
    with pytest.raises(DeploymentError, match=r"^vswitch plain cannot be restarted by vsperf"):
        switch.restart()
    with pytest.raises(DeploymentError, match=r"^vswitch plain does not learn MAC addresses"):
        switch.forget_addresses()
    with pytest.raises(DeploymentError, match=r"^vswitch plain cannot attach PCI ports bound to DPDK \(use ovs-dpdk\)"):
        switch.use_hugepages(HugepageMemory((1024,), "/dev/hugepages", ("0000:3b:00.0",)))
    assert switch.bridges() == () and switch.pids() == {}
    assert [(c.role, c.name, c.version) for c in switch.components()] == [("vswitch", "plain", "1")]


def test_plans_refuse_rules_on_unknown_ports_and_duplicates() -> None:
    with pytest.raises(ValueError, match="unknown port"):
        ForwardingPlan(PHY, (ForwardRule("phy0", "vnf0.0"),))
    with pytest.raises(ValueError, match="duplicate port names"):
        ForwardingPlan((PHY[0], PHY[0]), ())
    with pytest.raises(ValueError, match="VLAN id"):
        ForwardRule("phy0", "phy1", push_vlan_id=4096)


def test_ports_are_numbered_as_vsperf_numbers_them() -> None:
    plan = ForwardingPlan(PHY, (ForwardRule("phy0", "phy1"),))
    assert [plan.port_number(n) for n in ("phy0", "phy1")] == [1, 2]
    assert plan.port("phy1").ifname == "p1"
    with pytest.raises(KeyError):
        plan.port("vnf0.0")


@pytest.mark.parametrize(("kind", "fields", "message"), [
    ("veth", {}, "needs an ifname"),
    ("vhostuser", {}, "needs a socket_path"),
    ("pci", {}, "needs a pci address"),
])
def test_a_port_without_its_address_is_refused(kind: str, fields: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SwitchPort("phy0", kind, "phy", **fields)  # type: ignore[arg-type]
