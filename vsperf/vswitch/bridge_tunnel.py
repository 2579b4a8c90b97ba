"""VSPERF's op2p on the Linux bridge: the kernel's own tunnel devices (vxlan, geneve, gretap).

The integration bridge (TUNNEL_INTEGRATION_BRIDGE) joins generator port 0's switch port and the
tunnel device (key VXLAN_VNI, remote VTEP_IP2, local TUNNEL_EXTERNAL_BRIDGE_IP); the external
bridge joins generator port 1's switch port and holds the switch's endpoint address, with a
permanent neighbour entry VTEP_IP2 -> generator port 1's MAC. The kernel encapsulates what the
integration bridge sends into the device, routes it through the external bridge, and strips the
tunnel frames sent to its endpoint. Whether the DUT host's kernel has the device is checked
before anything is deployed (`kernel_tunnel_problem`). ptunp needs Open vSwitch.
"""

from __future__ import annotations

import ipaddress

from vsperf.errors import DeploymentError
from vsperf.executor import Executor
from vsperf.traffic.tunnel import UDP_PORTS, TunnelSpec
from vsperf.vswitch.base import SwitchPort
from vsperf.vswitch.linux_bridge import LinuxBridgeVSwitch

# tunnel type -> (the kernel module with its device, the `ip link add ... type` of the device)
KERNEL_DEVICES = {"vxlan": ("vxlan", "vxlan"), "geneve": ("geneve", "geneve"), "gre": ("ip_gre", "gretap")}


def kernel_tunnel_problem(executor: Executor, kind: str) -> str:
    """Why the kernel of `executor`'s host has no `kind` device ("" when it has: the driver is
    built in or loaded, or modprobe finds its module). Nothing is created."""
    module, device = KERNEL_DEVICES[kind]
    loaded = executor.run(["test", "-d", f"/sys/module/{module}"], check=False, timeout_s=10).returncode == 0
    if loaded:
        return ""
    probe = executor.run(["modprobe", "-n", "-q", module], check=False, timeout_s=10)
    if probe.returncode == 0:
        return ""
    return (f"Tunnel Type {kind}: the kernel of host {executor.host} has no {device} device (module {module}): the "
            f"Linux bridge cannot terminate {kind} tunnels there; use --vswitch ovs or ovs-dpdk")


class BridgeTunnels:
    """Builds op2p with the kernel's tunnel devices in namespace `netns` of the switch's host."""

    def __init__(self, switch: LinuxBridgeVSwitch, netns: str | None) -> None:
        self.switch = switch
        self.netns = netns

    def _ip(self, *args: str) -> None:
        self.switch.host.run(["ip", *(("-n", self.netns) if self.netns else ()), *args])

    def build_op2p(self, tunnel: TunnelSpec, phy: tuple[SwitchPort, SwitchPort], mtu_bytes: int,
                   remote_mac: str) -> str:
        host, net = self.switch.host, self.switch.host.net
        # VSPERF's names, in the run's switch namespace: its release deletes them with it.
        for bridge, port in ((tunnel.int_bridge, phy[0]), (tunnel.ext_bridge, phy[1])):
            self._ip("link", "add", "name", bridge, "type", "bridge", "stp_state", "0", "forward_delay", "0")
            self._ip("link", "set", "dev", port.ifname, "master", bridge)
            self._ip("link", "set", "dev", bridge, "up")
        self._ip("addr", "add", tunnel.vtep_ip1, "dev", tunnel.int_bridge)
        self._ip("addr", "add", tunnel.local, "dev", tunnel.ext_bridge)
        device = f"tun-{tunnel.kind}"
        _, kind = KERNEL_DEVICES[tunnel.kind]
        options = ["id", str(tunnel.key), "remote", tunnel.remote]
        if tunnel.kind == "vxlan":
            options += ["local", tunnel.local_ip, "dstport", str(UDP_PORTS["vxlan"]), "nolearning"]
        elif tunnel.kind == "gre":
            options = ["local", tunnel.local_ip, "remote", tunnel.remote, "key", str(tunnel.key)]
        try:
            self._ip("link", "add", device, "type", kind, *options)
        except DeploymentError as exc:
            raise DeploymentError(f"cannot create the {kind} device of the tunnel: {exc}") from exc
        # The inner frames keep their size: the device carries the ports' MTU, the underlay the tunnel's headers.
        self._ip("link", "set", "dev", device, "mtu", str(mtu_bytes - 64), "master", tunnel.int_bridge, "up")
        if ipaddress.IPv4Address(tunnel.remote) not in ipaddress.IPv4Interface(tunnel.local).network:
            self._ip("route", "add", tunnel.remote_subnet, "dev", tunnel.ext_bridge)
        self._ip("neigh", "replace", tunnel.remote, "lladdr", remote_mac, "dev", tunnel.ext_bridge, "nud", "permanent")
        host.run(["sysctl", "-q", "-w", "net.ipv4.conf.all.rp_filter=0"], netns=self.netns)
        return net.mac(tunnel.ext_bridge, self.netns)

    def build_ptunp(self, tunnel: TunnelSpec, phy: tuple[SwitchPort, SwitchPort], mtu_bytes: int) -> None:
        raise DeploymentError("ptunp joins two tunnels inside Open vSwitch: use --vswitch ovs or ovs-dpdk")
