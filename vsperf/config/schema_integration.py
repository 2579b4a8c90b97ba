"""Settings of VSPERF's integration tests: the overlay deployments (op2p, ptunp: tunnel endpoints
and bridges, VSPERF's names), the generator's addresses for them, and how the local lab treats a
test's addresses. Defaults: conf/13_integration.yaml (inside 198.18.0.0/15: the local lab sends
only there, and refuses other tunnel endpoints before anything is deployed)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from vsperf.config.types import Bool, MacAddress, Setting, Str


@dataclass(frozen=True)
class IPv4Interface(Str):
    """An IPv4 address with its prefix length, 'a.b.c.d/n' (VSPERF's VTEP_IP1)."""

    def kind(self) -> str:
        return "an IPv4 address with a prefix length, like 198.18.200.1/24"

    def describe(self) -> str:
        return self.kind()

    def convert(self, text: str) -> str:
        if "/" not in text:
            raise ValueError(text)
        return str(ipaddress.IPv4Interface(text))


@dataclass(frozen=True)
class IPv4Network(Str):
    """An IPv4 network 'a.b.c.0/n'."""

    def kind(self) -> str:
        return "an IPv4 network, like 198.18.240.0/24"

    def describe(self) -> str:
        return self.kind()

    def convert(self, text: str) -> str:
        return str(ipaddress.IPv4Network(text))


@dataclass(frozen=True)
class IPv4Host(Str):
    """An IPv4 address, or '' (not set)."""

    def kind(self) -> str:
        return "an IPv4 address (or '': not set)"

    def describe(self) -> str:
        return self.kind()

    def convert(self, text: str) -> str:
        return str(ipaddress.IPv4Address(text)) if text else ""


@dataclass(frozen=True)
class OptionalMac(MacAddress):
    """A MAC address, or '' (not set)."""

    def convert(self, text: str) -> str:
        return super().convert(text) if text else ""


_BRIDGE = Str(min_len=1, max_len=15)  # an interface name on the DUT host (IFNAMSIZ - 1)

SETTINGS: dict[str, Setting] = {
    "TUNNEL_TYPE": Setting(
        Str(choices=("vxlan", "gre", "geneve"), ignore_case=True),
        "Tunnel of op2p and ptunp tests without a Tunnel Type; given with --test-params, it overrides "
        "the test's Tunnel Type (VSPERF's rule)."),
    "VXLAN_VNI": Setting(
        Str(min_len=1, max_len=8),
        "Tunnel key of every tunnel type: VXLAN's and GENEVE's VNI, GRE's key (VSPERF: '99')."),
    "VTEP_IP1": Setting(
        IPv4Interface(),
        "op2p: address of the integration bridge (VSPERF assigns it; the tunnel's own source is "
        "TUNNEL_EXTERNAL_BRIDGE_IP)."),
    "VTEP_IP2": Setting(
        IPv4Host(min_len=1),
        "op2p: the far tunnel endpoint, behind generator port 1 (encapsulated frames go to it, "
        "decapsulated ones come from it)."),
    "VTEP_IP2_SUBNET": Setting(
        IPv4Network(),
        "op2p: the network of VTEP_IP2, routed through the external bridge."),
    "TUNNEL_INTEGRATION_BRIDGE": Setting(
        _BRIDGE, "op2p: the bridge with generator port 0's switch port and the tunnel port."),
    "TUNNEL_EXTERNAL_BRIDGE": Setting(
        _BRIDGE, "op2p: the bridge with generator port 1's switch port; it holds the switch's tunnel endpoint."),
    "TUNNEL_EXTERNAL_BRIDGE_IP": Setting(
        IPv4Interface(),
        "op2p: the switch's tunnel endpoint (local VTEP), on the external bridge; VTEP_IP2 must be reachable "
        "from it."),
    "TUNNEL_EXTERNAL_BRIDGE1": Setting(_BRIDGE, "ptunp: the bridge of generator port 0's switch port."),
    "TUNNEL_EXTERNAL_BRIDGE2": Setting(_BRIDGE, "ptunp: the bridge of generator port 1's switch port."),
    "TUNNEL_MODIFY_BRIDGE1": Setting(_BRIDGE, "ptunp: the bridge that turns tunnel 1's frames into tunnel 2's."),
    "TUNNEL_MODIFY_BRIDGE2": Setting(_BRIDGE, "ptunp: the bridge that turns tunnel 2's frames into tunnel 1's."),
    "TUNNEL_MODIFY_BRIDGE_MAC1": Setting(MacAddress(), "ptunp: MAC address of TUNNEL_MODIFY_BRIDGE1."),
    "TUNNEL_MODIFY_BRIDGE_MAC2": Setting(MacAddress(), "ptunp: MAC address of TUNNEL_MODIFY_BRIDGE2."),
    "TUNNEL_MODIFY_BRIDGE_IP1": Setting(
        IPv4Interface(), "ptunp: tunnel 1's endpoint, on TUNNEL_MODIFY_BRIDGE1 (its far end: the next address)."),
    "TUNNEL_MODIFY_BRIDGE_IP2": Setting(
        IPv4Interface(), "ptunp: tunnel 2's endpoint, on TUNNEL_MODIFY_BRIDGE2 (its far end: the next address)."),
    "TRAFFICGEN_PORT1_MAC": Setting(
        OptionalMac(), "op2p: source MAC of the test frames ('': generator port 0's own)."),
    "TRAFFICGEN_PORT2_MAC": Setting(
        OptionalMac(), "op2p: destination MAC of the test frames ('': generator port 1's own)."),
    "TRAFFICGEN_PORT1_IP": Setting(
        IPv4Host(), "op2p: source address of the test frames ('': TRAFFIC's l3 srcip)."),
    "TRAFFICGEN_PORT2_IP": Setting(
        IPv4Host(), "op2p: destination address of the test frames ('': TRAFFIC's l3 dstip)."),
    "LAB_ADDRESS_TRANSLATION": Setting(
        Bool(),
        "On the local lab, send a test's addresses outside 198.18.0.0/15 (TRAFFIC l3, TRAFFICGEN_PORT*_IP) "
        "as addresses inside it, keeping their last 16 bits (source: 198.18.x.y, destination: "
        "198.19.x.y); off: such a test is refused. Upstream's L3/L4 tests send to 6.0.0.1."),
}
