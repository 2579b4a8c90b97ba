"""VSPERF's overlay deployments: op2p (a tunnel between the generator ports, the switch adds or
strips it) and ptunp (the switch adds and strips the tunnel itself, in each direction).

op2p, Tunnel Operation `encapsulation`: generator port 0 sends plain frames into the integration
bridge (TUNNEL_INTEGRATION_BRIDGE), whose flow sends them into a tunnel port (TUNNEL_TYPE, key
VXLAN_VNI, remote VTEP_IP2); the switch routes the encapsulated frames through the external
bridge (TUNNEL_EXTERNAL_BRIDGE, holding the switch's endpoint TUNNEL_EXTERNAL_BRIDGE_IP) to
generator port 1, which stands for VTEP_IP2 and counts the test frames inside the tunnel.
`decapsulation`: the other way: generator port 1 (now the sending port 0 of the traffic) sends
encapsulated frames from VTEP_IP2 to the switch's endpoint; the switch strips them and forwards
the inner frames to the other generator port. VSPERF's op2p is one-way (TRAFFIC bidir False).

The switch does the work (vsperf.vswitch.ovs_tunnel on Open vSwitch, vsperf.vswitch.bridge_tunnel
on the Linux bridge with the kernel's tunnel devices); this module says what to build, checks it
before anything is deployed, and orders the generator ports.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Protocol

from vsperf.config.schema_core import BENCHMARK_NETWORK
from vsperf.deploy.deployment import HostDeployment, mtu_for
from vsperf.errors import ConfigError, DeploymentError
from vsperf.host.host import Host
from vsperf.traffic import Traffic
from vsperf.traffic.tunnel import Encapsulation, TunnelSpec, overhead_bytes
from vsperf.vswitch.base import SwitchPort, VSwitch
from vsperf.vswitch.bridge_tunnel import BridgeTunnels, kernel_tunnel_problem
from vsperf.vswitch.linux_bridge import LinuxBridgeVSwitch
from vsperf.vswitch.ovs import OvsVSwitch
from vsperf.vswitch.ovs_tunnel import OvsTunnels

TUNNEL_MTU_EXTRA = 64  # bytes the generator ports carry beyond the test frames' MTU (the tunnel's)


def _vni(settings: Mapping[str, Any]) -> int:
    text = str(settings["VXLAN_VNI"]).strip()
    if not text.isdigit() or int(text) >= 1 << 24:
        raise ConfigError(f"VXLAN_VNI {text!r}: a tunnel key is a number 0..16777215")
    return int(text)


def tunnel_of(deployment: str, tunnel_type: str | None, operation: str | None,
              settings: Mapping[str, Any]) -> TunnelSpec | None:
    """The tunnel of an op2p or ptunp test (None for the others): the test's Tunnel Type, unless
    --test-params gives TUNNEL_TYPE (VSPERF's rule), else the TUNNEL_TYPE setting."""
    if deployment not in ("op2p", "ptunp"):
        return None
    source = settings.source("TUNNEL_TYPE") if hasattr(settings, "source") else ""
    kind = str(settings["TUNNEL_TYPE"]).lower()
    if tunnel_type and source != "--test-params":
        kind = tunnel_type
    return TunnelSpec(
        deployment=deployment, kind=kind,  # type: ignore[arg-type]  # checked by the catalog and the schema
        operation=(operation or "encapsulation") if deployment == "op2p" else "both",
        key=_vni(settings), vtep_ip1=str(settings["VTEP_IP1"]), local=str(settings["TUNNEL_EXTERNAL_BRIDGE_IP"]),
        remote=str(settings["VTEP_IP2"]), remote_subnet=str(settings["VTEP_IP2_SUBNET"]),
        int_bridge=str(settings["TUNNEL_INTEGRATION_BRIDGE"]), ext_bridge=str(settings["TUNNEL_EXTERNAL_BRIDGE"]),
        phy_bridges=(str(settings["TUNNEL_EXTERNAL_BRIDGE1"]), str(settings["TUNNEL_EXTERNAL_BRIDGE2"])),
        mod_bridges=(str(settings["TUNNEL_MODIFY_BRIDGE1"]), str(settings["TUNNEL_MODIFY_BRIDGE2"])),
        mod_macs=(str(settings["TUNNEL_MODIFY_BRIDGE_MAC1"]), str(settings["TUNNEL_MODIFY_BRIDGE_MAC2"])),
        mod_ips=(str(settings["TUNNEL_MODIFY_BRIDGE_IP1"]), str(settings["TUNNEL_MODIFY_BRIDGE_IP2"])),
    )


def tunnel_problem(tunnel: TunnelSpec, traffic: Traffic, *, lab: bool, switch: type[VSwitch],
                   tunnel_frames: bool) -> str:
    """Why `tunnel` cannot be deployed ("" when it can): an address outside what the local lab
    sends to, a tunnel the switch cannot do, a generator that cannot build tunnel frames for
    decapsulation, traffic both ways."""
    if lab:
        network = ipaddress.IPv4Network(BENCHMARK_NETWORK)
        for name, address in tunnel.addresses():
            value = ipaddress.ip_network(address, strict=False) if "/" in address else ipaddress.ip_network(address)
            if not value.subnet_of(network):  # type: ignore[arg-type]
                return (f"{name} {address} is outside {network}: the local lab sends only there; set the tunnel "
                        f"endpoints inside it (defaults: conf/13_integration.yaml) or use a testbed")
    kinds = getattr(switch, "TUNNEL_TYPES", ())
    if tunnel.kind not in kinds:
        can = f"it does {', '.join(kinds)}" if kinds else "it has no tunnels"
        return (f"Tunnel Type {tunnel.kind}: vswitch {switch.NAME} cannot terminate it ({can}); "
                f"use --vswitch ovs or ovs-dpdk")
    if tunnel.deployment == "ptunp" and tunnel.kind != "vxlan":
        return f"Tunnel Type {tunnel.kind}: ptunp joins VXLAN tunnels only (VSPERF's)"
    if tunnel.operation == "decapsulation" and not tunnel_frames:
        return (f"Tunnel Type {tunnel.kind}, Tunnel Operation decapsulation: needs a generator that builds "
                "tunnel frames: --trafficgen vsgen or otg")
    if tunnel.deployment == "op2p" and traffic.bidir:
        return "op2p sends one way (its Tunnel Operation): set TRAFFIC bidir to False, as VSPERF's tests do"
    return ""


def overlay_problem(tunnel: TunnelSpec, traffic: Traffic, generator: type, vswitch: type[VSwitch], dut: Host, *,
                    lab: bool) -> str:
    """`tunnel_problem` for the test's generator and switch, then whether the DUT host's kernel
    has the Linux bridge's tunnel device (on a probe of that host)."""
    why = tunnel_problem(tunnel, traffic, lab=lab, switch=vswitch,
                         tunnel_frames=bool(getattr(generator, "TUNNEL_FRAMES", False)))
    if not why and issubclass(vswitch, LinuxBridgeVSwitch):
        why = kernel_tunnel_problem(dut.executor, tunnel.kind)
    return why


class TunnelSwitch(Protocol):
    """What a switch does for the overlay deployments (see vsperf.vswitch.ovs_tunnel)."""

    def build_op2p(self, tunnel: TunnelSpec, phy: tuple[SwitchPort, SwitchPort], mtu_bytes: int,
                   remote_mac: str) -> str:
        """Build op2p between `phy` (generator ports 0 and 1); the MAC address of the switch's
        tunnel endpoint (where decapsulation frames go)."""

    def build_ptunp(self, tunnel: TunnelSpec, phy: tuple[SwitchPort, SwitchPort], mtu_bytes: int) -> None:
        """Build ptunp between `phy`."""


def tunnel_builder(vswitch: VSwitch, netns: str | None) -> TunnelSwitch:
    """What builds the overlay on `vswitch` (DeploymentError for a switch without tunnels)."""
    if isinstance(vswitch, OvsVSwitch):
        return OvsTunnels(vswitch, netns)
    if isinstance(vswitch, LinuxBridgeVSwitch):
        return BridgeTunnels(vswitch, netns)
    raise DeploymentError(f"vswitch {vswitch.NAME} has no tunnels: op2p and ptunp need ovs, ovs-dpdk or linux-bridge")


class OverlayDeployment(HostDeployment):
    """An op2p or ptunp deployment on the run's hosts (see the module docstring)."""

    def __init__(self, tunnel: TunnelSpec, builder: TunnelSwitch, *, topology: Any, **kwargs: Any) -> None:
        super().__init__(topology, **kwargs)
        self.tunnel = tunnel
        self.builder = builder
        self.phy_ports: tuple[SwitchPort, ...] = ()

    def _deploy(self) -> None:
        mtu = mtu_for(self.traffic, self.jumbo_mtu_bytes)
        port_mtu = mtu + TUNNEL_MTU_EXTRA
        phy = self.ports.create(self.traffic, port_mtu, None)
        vswitch = self.vswitch
        if vswitch is None or len(phy) != 2:
            raise DeploymentError(f"deployment {self.name} needs a switch and two generator ports")
        self.phy_ports = tuple(phy)
        self._vswitch_started = True
        vswitch.start(self.ports.switch_netns)
        pair = (phy[0], phy[1])
        if self.tunnel.deployment == "ptunp":
            self.builder.build_ptunp(self.tunnel, pair, port_mtu)
            return
        gen = self.ports.ports
        endpoint_mac = self.builder.build_op2p(self.tunnel, pair, port_mtu, gen[1].mac)
        if self.tunnel.operation == "decapsulation":
            # The tunnel side sends: it is port 0 of the traffic, its frames carry the tunnel's headers.
            encap = Encapsulation(self.tunnel.kind, self.tunnel.key, gen[1].mac, endpoint_mac,
                                  self.tunnel.remote, self.tunnel.local_ip)
            self.ports.ports = (replace(gen[1], encap=encap), gen[0])


def overlay_overhead(tunnel: TunnelSpec | None) -> int:
    """Bytes the tunnel adds to each frame on the tunnel side (0 without one)."""
    return overhead_bytes(tunnel.kind) if tunnel is not None else 0
