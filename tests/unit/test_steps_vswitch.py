"""The vswitch object of TestSteps on Open vSwitch: the ovs-vsctl/ovs-ofctl commands VSPERF's
actions become, and VSPERF's checks of their effect (a fake OVS answers)."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any, cast

import pytest

from vsperf.steps.macros import StepError
from vsperf.steps.vswitch import StepVswitch, flow_text
from vsperf.vswitch.base import SwitchPort
from vsperf.vswitch.ovs import OvsVSwitch


class FakeOvs:
    """Records vsctl/ofctl/appctl calls; answers ofport and dump-flows."""

    NAME = "ovs"

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []
        self.flows = ""
        self.ofports: dict[str, str] = {}
        self.rundir = PurePosixPath("/tmp/x")

    def vsctl(self, *args: str, timeout_s: float = 30.0) -> str:
        self.calls.append(("vsctl", *args))
        if args[:2] == ("get", "Interface") and args[-1] == "ofport":
            return self.ofports.get(args[2], "-1") + "\n"
        if args[:1] == ("show",):
            return 'Bridge int_br0\n    Port "p0"\n        Interface "p0"\n'
        if args[:1] == ("list-ifaces",):
            return "\n".join(self.ofports) + "\n"
        return ""

    def ofctl(self, *args: str) -> str:
        self.calls.append(("ofctl", *args))
        return self.flows if args[0] == "dump-flows" else ""

    def appctl(self, target: str, *args: str, timeout_s: float = 10.0) -> str:
        self.calls.append(("appctl", target, *args))
        return ""

    def interface_config(self, port: SwitchPort, index: int) -> tuple[str, dict[str, str]]:
        return "afxdp", {"xdp-mode": "native"}


def step_switch(ovs: FakeOvs) -> StepVswitch:
    phy = [SwitchPort(f"phy{i}", "veth", "phy", ifname=f"p{i}") for i in (0, 1)]
    return StepVswitch(cast(OvsVSwitch, ovs), cast(Any, None), "ns", phy, lambda i: cast(Any, None))


def test_flow_text_is_vsperfs_flow_key() -> None:
    flow = {"in_port": "1", "dl_type": "0x800", "nw_dst": "198.19.0.1/8", "actions": ["output:2"], "idle_timeout": "0"}
    assert flow_text(flow) == "in_port=1,dl_type=0x800,nw_dst=198.19.0.1/8,idle_timeout=0,actions=output:2"
    assert flow_text({"in_port": "1"}) == "in_port=1"  # no actions: a match (del-flows)
    assert flow_text({"ip": "", "actions": "NORMAL"}) == "ip,actions=NORMAL"


def test_bridges_ports_and_flows_become_ovs_commands() -> None:
    ovs = FakeOvs()
    ovs.ofports = {"p0": "1", "p1": "2"}
    switch = step_switch(ovs)
    switch.add_switch("int_br0", ["protocols=OpenFlow13"])
    assert switch.add_phy_port("int_br0") == ("p0", 1)
    assert switch.add_phy_port("int_br0") == ("p1", 2)
    switch.add_connection("int_br0", "p0", "p1")
    switch.del_flow("int_br0", {"in_port": "1", "idle_timeout": "0"})
    switch.del_flow("int_br0")
    assert ("vsctl", "add-br", "int_br0", "--", "set", "bridge", "int_br0", "datapath_type=netdev", "--", "set",
            "bridge", "int_br0", "protocols=OpenFlow13") in ovs.calls
    assert ("vsctl", "add-port", "int_br0", "p0", "--", "set", "Interface", "p0", "type=afxdp", "mtu_request=1500",
            "options:xdp-mode=native") in ovs.calls
    assert ("ofctl", "add-flow", "int_br0", "in_port=1,actions=output:2,idle_timeout=0") not in ovs.calls
    assert ("ofctl", "add-flow", "int_br0", "in_port=1,idle_timeout=0,actions=output:2") in ovs.calls
    assert ("ofctl", "del-flows", "int_br0", "in_port=1") in ovs.calls
    assert ovs.calls[-1] == ("ofctl", "del-flows", "int_br0")
    with pytest.raises(StepError, match="no physical port left: the deployment has 2 generator ports"):
        switch.add_phy_port("int_br0")
    with pytest.raises(StepError, match="bridge name 'a bad name'"):
        switch.add_switch("a bad name")


def test_vsperfs_checks() -> None:
    ovs = FakeOvs()
    ovs.ofports = {"p0": "1", "p1": "2"}
    switch = step_switch(ovs)
    ovs.flows = " cookie=0x0, duration=1s, table=0, n_packets=0, in_port=1 actions=output:2\n"
    assert switch.check("add_flow", None, ["int_br0", {"in_port": "1", "actions": ["output:2"]}])
    assert not switch.check("add_flow", None, ["int_br0", {"in_port": "1", "actions": ["output:3"]}])
    assert switch.check("add_switch", None, ["int_br0"])
    assert not switch.check("add_switch", None, ["int_br1"])
    assert switch.check("add_phy_port", ("p0", 1), ["int_br0"])
    assert not switch.check("del_port", None, ["int_br0", "p0"])
    ovs.flows = ""
    assert switch.check("del_flow", None, ["int_br0", {"in_port": "1"}])


def test_port_by_name_or_number() -> None:
    ovs = FakeOvs()
    ovs.ofports = {"p0": "1"}
    switch = step_switch(ovs)
    assert switch.port_number("int_br0", "p0") == "1" and switch.port_number("int_br0", "7") == "7"
    with pytest.raises(StepError, match="bridge int_br0 has no port 'p9' \\(it has p0\\)"):
        switch.port_number("int_br0", "p9")


class FakeOvsDpdk(FakeOvs):
    """OVS-DPDK: phy ports are type dpdk; `find Interface type=dpdk` answers the ones added."""

    def vsctl(self, *args: str, timeout_s: float = 30.0) -> str:
        if args[:3] == ("--bare", "--columns=name", "find"):
            kind = args[-1].removeprefix("type=")
            return "\n".join(c[3] for c in self.calls if c[:2] == ("vsctl", "add-port") and f"type={kind}" in c)
        return super().vsctl(*args, timeout_s=timeout_s)

    def interface_config(self, port: SwitchPort, index: int) -> tuple[str, dict[str, str]]:
        return "dpdk", {"dpdk-devargs": f"net_af_xdp{index},iface={port.ifname}"}


def test_ovs_dpdk_ports_take_vsperfs_names() -> None:
    ovs = FakeOvsDpdk()
    ovs.ofports = {"dpdk0": "1", "dpdk1": "2"}
    switch = step_switch(ovs)
    assert switch.add_phy_port("int_br0") == ("dpdk0", 1)  # upstream's tests ask OVS for 'dpdk0'
    assert switch.add_phy_port("int_br0") == ("dpdk1", 2)
    assert ("vsctl", "add-port", "int_br0", "dpdk1", "--", "set", "Interface", "dpdk1", "type=dpdk", "mtu_request=1500",
            "options:dpdk-devargs=net_af_xdp1,iface=p1") in ovs.calls


def test_jumbo_frames_mtu_reaches_the_ports_steps_add() -> None:
    # VSWITCH_JUMBO_FRAMES_SIZE 9000 (the plan's MTU): VSPERF's OvsDpdkVhost asked it of every port it added
    ovs = FakeOvsDpdk()
    ovs.ofports = {"dpdk0": "1"}
    phy = [SwitchPort("phy0", "veth", "phy", ifname="p0")]
    switch = StepVswitch(cast(OvsVSwitch, ovs), cast(Any, None), "ns", phy, lambda i: cast(Any, None), 9000)
    switch.add_phy_port("int_br0")
    assert ("vsctl", "add-port", "int_br0", "dpdk0", "--", "set", "Interface", "dpdk0", "type=dpdk", "mtu_request=9000",
            "options:dpdk-devargs=net_af_xdp0,iface=p0") in ovs.calls
