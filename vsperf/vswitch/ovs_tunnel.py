"""VSPERF's overlay deployments on Open vSwitch (ovs and ovs-dpdk: both use OVS's userspace
datapath, whose native tunnelling pushes and pops VXLAN, GRE and GENEVE headers itself).

op2p: the integration bridge holds generator port 0's switch port (OpenFlow 1) and the tunnel
port (2, remote VTEP_IP2, key VXLAN_VNI); flows 1 -> 2 and 2 -> 1. The external bridge holds
generator port 1's switch port and, on its internal port, the switch's tunnel endpoint
(TUNNEL_EXTERNAL_BRIDGE_IP): OVS routes the encapsulated frames through it (its route to
VTEP_IP2_SUBNET, its neighbour entry VTEP_IP2 -> generator port 1's MAC) and terminates the
tunnel frames sent to that address (a NORMAL flow delivers them to the bridge's own port).

ptunp (VSPERF's layout): generator port 0's bridge tunnels its frames to the first modify bridge;
its flows rewrite the outer headers so that they come from the far end of the second tunnel and
hand them, through a patch port pair, to the second modify bridge, which terminates them on
generator port 1's bridge; and the same the other way.

The bridges keep VSPERF's names: they live in the run's switch namespace (the local lab; the
overlays do not deploy on a testbed), which the run's journal holds and its release deletes,
with everything inside it.
"""

from __future__ import annotations

import ipaddress
import time

from vsperf.errors import DeploymentError
from vsperf.traffic.tunnel import TunnelSpec
from vsperf.vswitch.base import SwitchPort
from vsperf.vswitch.ovs import OvsVSwitch

_ROUTE_WAIT_S = 10.0  # OVS learns an address given to a bridge's own port within a few polls


def _interface(spec: str) -> tuple[str, ipaddress.IPv4Network]:
    iface = ipaddress.IPv4Interface(spec)
    return str(iface.ip), iface.network


def _mac_plus_one(mac: str) -> str:
    value = (int(mac.replace(":", ""), 16) + 1) & 0xFFFFFFFFFFFF
    raw = f"{value:012x}"
    return ":".join(raw[i:i + 2] for i in range(0, 12, 2))


class OvsTunnels:
    """Builds op2p and ptunp on `switch` (started), in namespace `netns` of its host."""

    def __init__(self, switch: OvsVSwitch, netns: str | None) -> None:
        self.switch = switch
        self.netns = netns

    def _ip(self, *args: str) -> None:
        self.switch.host.run(["ip", *(("-n", self.netns) if self.netns else ()), *args])

    def _bridge(self, name: str, *ports: tuple[SwitchPort | None, str, list[str]], extra: tuple[str, ...] = ()) -> None:
        """Bridge `name` with `ports`: (generator port or None, interface, options), OpenFlow
        numbers from 1 in order; its own port up."""
        args = ["add-br", name, "--", "set", "bridge", name, "datapath_type=netdev", "fail_mode=secure", *extra]
        for number, (port, iface, options) in enumerate(ports, start=1):
            args += ["--", "add-port", name, iface, "--", "set", "Interface", iface, f"ofport_request={number}"]
            if port is not None:  # the index names a DPDK port's device: one per generator port
                port_type, port_options = self.switch.interface_config(port, int(port.name.removeprefix("phy")))
                options = [f"type={port_type}", *[f"options:{k}={v}" for k, v in port_options.items()], *options]
            args += options
        self.switch.vsctl(*args, timeout_s=60.0)
        self._ip("link", "set", "dev", name, "up")

    def _flows(self, bridge: str, *flows: str) -> None:
        self.switch.ofctl("del-flows", bridge)
        for flow in flows:
            self.switch.ofctl("add-flow", bridge, flow)

    def _wait_route(self, address: str) -> None:
        """Wait until OVS routes to `address` (it learns a bridge's new address by polling)."""
        deadline = time.monotonic() + _ROUTE_WAIT_S
        while True:
            try:  # an error until OVS has the route
                routes = self.switch.appctl("ovs-vswitchd", "ovs/route/lookup", address)
            except DeploymentError as exc:
                routes = str(exc)
            if "dev" in routes or "gateway" in routes:
                return
            if time.monotonic() > deadline:
                raise DeploymentError(f"{self.switch.NAME}: no route to tunnel endpoint {address}: {routes.strip()}")
            time.sleep(0.1)

    def build_op2p(self, tunnel: TunnelSpec, phy: tuple[SwitchPort, SwitchPort], mtu_bytes: int,
                   remote_mac: str) -> str:
        kind, key, remote = tunnel.kind, tunnel.key, tunnel.remote
        int_br, ext_br = tunnel.int_bridge, tunnel.ext_bridge
        mtu = [f"mtu_request={mtu_bytes}"]
        self._bridge(int_br, (phy[0], self.switch.iface_name(phy[0], 0), mtu),
                     (None, f"{kind}0", [f"type={kind}", f"options:remote_ip={remote}", f"options:key={key}"]))
        self._bridge(ext_br, (phy[1], self.switch.iface_name(phy[1], 1), mtu))
        self._ip("addr", "add", tunnel.vtep_ip1, "dev", int_br)
        self._ip("addr", "add", tunnel.local, "dev", ext_br)
        _, local_net = _interface(tunnel.local)
        if ipaddress.IPv4Address(remote) not in local_net:
            self.switch.appctl("ovs-vswitchd", "ovs/route/add", tunnel.remote_subnet, ext_br)
        self._wait_route(remote)
        self.switch.appctl("ovs-vswitchd", "tnl/neigh/set", ext_br, remote, remote_mac)
        self._flows(int_br, "idle_timeout=0,in_port=1,actions=output:2", "idle_timeout=0,in_port=2,actions=output:1")
        self._flows(ext_br, "idle_timeout=0,priority=0,actions=NORMAL")
        return self.switch.host.net.mac(ext_br, self.netns)

    def build_ptunp(self, tunnel: TunnelSpec, phy: tuple[SwitchPort, SwitchPort], mtu_bytes: int) -> None:
        key, phy_br, mod_br, macs = tunnel.key, tunnel.phy_bridges, tunnel.mod_bridges, tunnel.mod_macs
        ips = [_interface(i) for i in tunnel.mod_ips]
        local = [ip for ip, _ in ips]
        remote = [str(ipaddress.IPv4Address(ip) + 1) for ip in local]
        remote_macs = [_mac_plus_one(m) for m in macs]
        mtu = [f"mtu_request={mtu_bytes}"]
        for i in (0, 1):
            self._bridge(phy_br[i], (phy[i], self.switch.iface_name(phy[i], i), mtu),
                         (None, f"vxlan{i}", ["type=vxlan", f"options:remote_ip={remote[i]}", f"options:key={key}"]))
        for i in (0, 1):
            patch, peer = f"{mod_br[i]}-p", f"{mod_br[1 - i]}-p"
            self._bridge(mod_br[i], (None, patch, ["type=patch", f"options:peer={peer}"]),
                         extra=("--", "set", "bridge", mod_br[i], f"other_config:hwaddr={macs[i]}"))
            self._ip("addr", "add", tunnel.mod_ips[i], "dev", mod_br[i])
        for i in (0, 1):
            self._wait_route(remote[i])
            self.switch.appctl("ovs-vswitchd", "tnl/neigh/set", mod_br[i], remote[i], remote_macs[i])
            self._flows(phy_br[i], "idle_timeout=0,in_port=1,actions=output:2",
                        "idle_timeout=0,in_port=2,actions=output:1")
            other = 1 - i
            # Tunnel i's frames leave modify bridge i as if the far end of tunnel `other` sent them.
            self._flows(mod_br[i], "idle_timeout=0,in_port=1,actions=LOCAL",
                        f"idle_timeout=0,in_port=LOCAL,ip,actions=mod_dl_src:{remote_macs[other]},"
                        f"mod_dl_dst:{macs[other]},mod_nw_src:{remote[other]},mod_nw_dst:{local[other]},output:1")
