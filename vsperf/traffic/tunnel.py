"""Tunnels of VSPERF's overlay tests (op2p, ptunp): what a test builds (`TunnelSpec`, from its
settings: vsperf.deploy.overlay), the outer headers a generator port puts around the test frames it
sends when the switch under test is to strip them (Tunnel Operation decapsulation), and the sizes
every tunnel type adds."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Literal

TunnelKind = Literal["vxlan", "gre", "geneve"]
TUNNEL_KINDS: tuple[TunnelKind, ...] = ("vxlan", "gre", "geneve")
UDP_PORTS = {"vxlan": 4789, "geneve": 6081}  # IANA's
SOURCE_UDP_PORT = 49152  # the source port of the generator's VXLAN/GENEVE frames
_OUTER_BYTES = 14 + 20  # outer Ethernet + IPv4
_TUNNEL_HEADER_BYTES = {"vxlan": 8 + 8, "geneve": 8 + 8, "gre": 8}  # UDP + its header; GRE with a key


def overhead_bytes(kind: str) -> int:
    """What a tunnel of `kind` adds to a frame: outer Ethernet, IPv4 and the tunnel's header
    (VXLAN and GENEVE without options: 50; GRE with a key: 42)."""
    return _OUTER_BYTES + _TUNNEL_HEADER_BYTES[kind]


@dataclass(frozen=True)
class Encapsulation:
    """The outer headers of the frames a generator port sends into a tunnel endpoint."""

    kind: TunnelKind
    key: int  # VXLAN/GENEVE VNI (24 bits), GRE key (32 bits)
    src_mac: str  # the generator port's
    dst_mac: str  # the switch's tunnel endpoint (its bridge)
    src_ip: str  # the far tunnel endpoint the generator stands for (VTEP_IP2)
    dst_ip: str  # the switch's tunnel endpoint

    def __post_init__(self) -> None:
        if self.kind not in TUNNEL_KINDS:
            raise ValueError(f"tunnel type {self.kind!r} is not one of {', '.join(TUNNEL_KINDS)}")
        bits = 32 if self.kind == "gre" else 24
        if not 0 <= self.key < 1 << bits:
            raise ValueError(f"{self.kind} key {self.key} does not fit {bits} bits")

    @property
    def overhead_bytes(self) -> int:
        return overhead_bytes(self.kind)


@dataclass(frozen=True)
class TunnelSpec:
    """What an overlay test builds: its tunnel, its endpoints and bridges (from the settings)."""

    deployment: str  # op2p | ptunp
    kind: TunnelKind
    operation: str  # encapsulation | decapsulation (ptunp: both, inside the switch)
    key: int  # VXLAN_VNI
    vtep_ip1: str  # VTEP_IP1 (address/prefix, on the integration bridge)
    local: str  # TUNNEL_EXTERNAL_BRIDGE_IP (address/prefix): the switch's endpoint
    remote: str  # VTEP_IP2: the far endpoint, behind generator port 1
    remote_subnet: str  # VTEP_IP2_SUBNET
    int_bridge: str
    ext_bridge: str
    phy_bridges: tuple[str, str]  # ptunp
    mod_bridges: tuple[str, str]
    mod_macs: tuple[str, str]
    mod_ips: tuple[str, str]  # address/prefix

    @property
    def local_ip(self) -> str:
        return str(ipaddress.IPv4Interface(self.local).ip)

    def addresses(self) -> list[tuple[str, str]]:
        """(setting, address) of every tunnel address the switch or the generator sends from or to."""
        if self.deployment == "ptunp":
            found = []
            for i, name in ((0, "TUNNEL_MODIFY_BRIDGE_IP1"), (1, "TUNNEL_MODIFY_BRIDGE_IP2")):
                ip = ipaddress.IPv4Interface(self.mod_ips[i]).ip
                found += [(name, str(ip)), (f"{name} + 1 (its far end)", str(ip + 1))]
            return found
        return [("VTEP_IP1", self.vtep_ip1), ("VTEP_IP2", self.remote), ("VTEP_IP2_SUBNET", self.remote_subnet),
                ("TUNNEL_EXTERNAL_BRIDGE_IP", self.local)]
