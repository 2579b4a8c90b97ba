"""VSPERF's frame modifications: what the switch changes in every frame it sends to a generator
port, as OpenFlow actions (VSPERF's values, addresses moved into 198.18.0.0/15), and what a
received frame then looks like (the generator's capture checks it: vsperf.capture.frame_check).

`vlan` is the tag the switch pushes (VSWITCH_VLAN_ID, vsperf.deploy.topology); the others are
one action each towards generator port 1 (`phy1`) and towards port 0 (`phy0`):

=========  =====================================================  ===============================
mpls       push_mpls:0x8847 (label 0, bottom of stack)             an MPLS label before the IPv4
mac        source MAC 22:22:22:22:22:22 (to port 1), 11:11:...      that source MAC
dscp       TOS 184 (DSCP 46, Expedited Forwarding)                 DSCP 46
ttl        TTL 251 (to port 1), 241 (to port 0)                    that TTL
ip_addr    198.18.10.10 -> 198.19.20.20 (to port 1), the reverse   those addresses
ip_port    UDP ports 44444 -> 44444                                those ports
=========  =====================================================  ===============================
"""

from __future__ import annotations

from dataclasses import dataclass

FRAME_MODIFICATIONS = ("vlan", "mpls", "mac", "dscp", "ttl", "ip_addr", "ip_port")
IP_MATCH = (("dl_type", "0x0800"),)
UDP_MATCH = (("dl_type", "0x0800"), ("nw_proto", "17"))
MAC_TO = {"phy1": "22:22:22:22:22:22", "phy0": "11:11:11:11:11:11"}
TTL_TO = {"phy1": 251, "phy0": 241}  # VSPERF's: the highest primes below 255
IP_TO = {"phy1": ("198.18.10.10", "198.19.20.20"), "phy0": ("198.19.20.20", "198.18.10.10")}
DSCP = 46  # Expedited Forwarding: TOS 184
UDP_PORT = 44444
MPLS_ETHERTYPE = "0x8847"


@dataclass(frozen=True)
class Modification:
    """What the switch does to frames leaving by one generator port's switch port."""

    match: tuple[tuple[str, str], ...]  # what a flow must match for the actions to be valid
    actions: tuple[str, ...]  # OpenFlow actions (ovs-ofctl syntax), before the output
    expected: str  # what a received frame shows, in words


def modification(name: str, egress: str) -> Modification:
    """The modification `name` (not vlan) of frames leaving by switch port `egress` (phy0, phy1)."""
    if name == "mpls":
        return Modification((), (f"push_mpls:{MPLS_ETHERTYPE}",), "an MPLS label")
    if name == "mac":
        return Modification((), (f"mod_dl_src:{MAC_TO[egress]}",), f"source MAC {MAC_TO[egress]}")
    if name == "dscp":
        return Modification(IP_MATCH, (f"mod_nw_tos:{DSCP << 2}",), f"DSCP {DSCP}")
    if name == "ttl":
        return Modification(IP_MATCH, (f"mod_nw_ttl:{TTL_TO[egress]}",), f"TTL {TTL_TO[egress]}")
    if name == "ip_addr":
        src, dst = IP_TO[egress]
        return Modification(IP_MATCH, (f"mod_nw_src:{src}", f"mod_nw_dst:{dst}"), f"addresses {src} -> {dst}")
    if name == "ip_port":
        return Modification(UDP_MATCH, (f"mod_tp_src:{UDP_PORT}", f"mod_tp_dst:{UDP_PORT}"),
                            f"UDP ports {UDP_PORT} -> {UDP_PORT}")
    raise ValueError(f"no frame modification {name!r} (vlan is the switch's VLAN push)")
