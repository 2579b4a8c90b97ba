"""op2p and ptunp on Open vSwitch: the bridges, tunnel ports, routes, neighbours and flows (a fake
OVS records the commands)."""

from __future__ import annotations

from pathlib import PurePosixPath
from types import SimpleNamespace
from typing import Any, cast

from vsperf.config import load_settings
from vsperf.deploy.overlay import tunnel_of
from vsperf.vswitch.base import SwitchPort
from vsperf.vswitch.ovs import OvsVSwitch
from vsperf.vswitch.ovs_tunnel import OvsTunnels

PHY = (SwitchPort("phy0", "veth", "phy", ifname="p0"), SwitchPort("phy1", "veth", "phy", ifname="p1"))


def fake_ovs() -> tuple[Any, list[tuple[str, ...]]]:
    calls: list[tuple[str, ...]] = []

    def record(kind: str) -> Any:
        def call(*args: str, **_: Any) -> str:
            calls.append((kind, *args))
            return "gateway 0.0.0.0 dev br" if "ovs/route/lookup" in args else ""
        return call

    host = SimpleNamespace(run=lambda argv, netns=None, **_: calls.append(("ip", *argv[3:])) or "",
                           net=SimpleNamespace(mac=lambda ifname, netns: "0e:00:00:00:00:99"))
    ovs = SimpleNamespace(NAME="ovs", host=host, vsctl=record("vsctl"), ofctl=record("ofctl"), appctl=record("appctl"),
                          interface_config=lambda port, index: ("afxdp", {"xdp-mode": "native"}),
                          iface_name=lambda port, index: f"if-{port.ifname}",
                          rundir=PurePosixPath("/tmp/x"))
    return ovs, calls


def test_op2p() -> None:
    ovs, calls = fake_ovs()
    tunnel = tunnel_of("op2p", "gre", "encapsulation", load_settings(env={}))
    assert tunnel is not None
    mac = OvsTunnels(cast(OvsVSwitch, ovs), "ns").build_op2p(tunnel, PHY, 1564, "02:00:00:00:00:02")
    assert mac == "0e:00:00:00:00:99"
    add_int = next(c for c in calls if c[:3] == ("vsctl", "add-br", "vsperf-br0"))
    assert "type=gre" in add_int and "options:remote_ip=198.18.240.10" in add_int and "options:key=99" in add_int
    assert add_int.count("ofport_request=1") == 1 and "ofport_request=2" in add_int and "mtu_request=1564" in add_int
    assert "if-p0" in add_int  # the switch names its ports (OVS-DPDK: VSPERF's dpdk0, dpdk1)
    assert ("ip", "addr", "add", "198.18.240.1/24", "dev", "vsperf-br-ext") in calls
    assert ("appctl", "ovs-vswitchd", "tnl/neigh/set", "vsperf-br-ext", "198.18.240.10", "02:00:00:00:00:02") in calls
    assert ("ofctl", "add-flow", "vsperf-br0", "idle_timeout=0,in_port=1,actions=output:2") in calls
    assert ("ofctl", "add-flow", "vsperf-br-ext", "idle_timeout=0,priority=0,actions=NORMAL") in calls
    assert not any(c[:3] == ("appctl", "ovs-vswitchd", "ovs/route/add") for c in calls)  # VTEP_IP2 is on-link


def test_ptunp_joins_two_tunnels() -> None:
    ovs, calls = fake_ovs()
    tunnel = tunnel_of("ptunp", "vxlan", None, load_settings(env={}))
    assert tunnel is not None
    OvsTunnels(cast(OvsVSwitch, ovs), "ns").build_ptunp(tunnel, PHY, 1564)
    assert any(c[:3] == ("vsctl", "add-br", "br-mod1") and "other_config:hwaddr=00:00:10:00:00:01" in c for c in calls)
    assert ("ofctl", "add-flow", "br-mod1",
            "idle_timeout=0,in_port=LOCAL,ip,actions=mod_dl_src:00:00:20:00:00:02,mod_dl_dst:00:00:20:00:00:01,"
            "mod_nw_src:198.18.220.2,mod_nw_dst:198.18.220.1,output:1") in calls
    assert ("appctl", "ovs-vswitchd", "tnl/neigh/set", "br-mod2", "198.18.220.2", "00:00:20:00:00:02") in calls
