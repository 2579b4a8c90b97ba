"""op2p on the Linux bridge: whether the kernel has the tunnel device (asked, nothing created) and
the devices, addresses and neighbour it sets up."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import pytest
from recorded_host import RecordedHost

from vsperf.config import load_settings
from vsperf.deploy.overlay import tunnel_of
from vsperf.errors import DeploymentError
from vsperf.vswitch.base import SwitchPort
from vsperf.vswitch.bridge_tunnel import BridgeTunnels, kernel_tunnel_problem
from vsperf.vswitch.linux_bridge import LinuxBridgeVSwitch


def test_the_kernels_tunnel_devices() -> None:
    host = RecordedHost("dut", {("test", "-d", "/sys/module/vxlan"): [""], ("modprobe", "-n", "-q", "geneve"): [""]})
    assert kernel_tunnel_problem(host, "vxlan") == ""  # built in or loaded
    assert kernel_tunnel_problem(host, "geneve") == ""  # a module modprobe finds
    assert kernel_tunnel_problem(host, "gre") == (
        "Tunnel Type gre: the kernel of host dut has no gretap device (module ip_gre): the Linux bridge cannot "
        "terminate gre tunnels there; use --vswitch ovs or ovs-dpdk")
    assert all(argv[0] in ("test", "modprobe") for argv, _ in host.commands)  # asked, nothing created


def test_op2p_with_the_kernels_vxlan() -> None:
    calls: list[tuple[str, ...]] = []
    host = SimpleNamespace(run=lambda argv, netns=None, **_: calls.append(tuple(argv)) or "",
                           net=SimpleNamespace(mac=lambda ifname, netns: "0e:00:00:00:00:99"))
    bridge = cast(LinuxBridgeVSwitch, SimpleNamespace(host=host))
    tunnel = tunnel_of("op2p", "vxlan", "decapsulation", load_settings(env={}))
    assert tunnel is not None
    phy = (SwitchPort("phy0", "veth", "phy", ifname="p0"), SwitchPort("phy1", "veth", "phy", ifname="p1"))
    assert BridgeTunnels(bridge, "ns").build_op2p(tunnel, phy, 1564, "02:00:00:00:00:02") == "0e:00:00:00:00:99"
    assert ("ip", "-n", "ns", "link", "add", "tun-vxlan", "type", "vxlan", "id", "99", "remote", "198.18.240.10",
            "local", "198.18.240.1", "dstport", "4789", "nolearning") in calls
    assert ("ip", "-n", "ns", "link", "set", "dev", "tun-vxlan", "mtu", "1500", "master", "vsperf-br0", "up") in calls
    assert ("ip", "-n", "ns", "neigh", "replace", "198.18.240.10", "lladdr", "02:00:00:00:00:02", "dev",
            "vsperf-br-ext", "nud", "permanent") in calls
    with pytest.raises(DeploymentError, match="ptunp joins two tunnels inside Open vSwitch"):
        BridgeTunnels(bridge, "ns").build_ptunp(tunnel, phy, 1564)

