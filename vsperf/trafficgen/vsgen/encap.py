"""vsgen's test frames inside a tunnel: the outer headers a port adds when the switch under test
is to strip them (op2p decapsulation), and the offsets the engine stamps and parses at.

    outer Ethernet | outer IPv4 (DF, TTL 64, checksum) | UDP (checksum 0) + VXLAN/GENEVE header
                                                       | or GRE (key present) | the test frame

The engine's receive program finds a test frame inside VXLAN, GENEVE (no options) and GRE (with
or without a key) by itself (csrc/vsgen.bpf.c: tunnel_l3), so the port receiving encapsulated
frames (op2p encapsulation) needs nothing of this module.
"""

from __future__ import annotations

import ipaddress
import struct

from vsperf.traffic.tunnel import SOURCE_UDP_PORT, UDP_PORTS, Encapsulation
from vsperf.trafficgen.vsgen.frames import ETHERTYPE_IPV4, IPPROTO_UDP, ipv4_checksum, mac_bytes

IPPROTO_GRE = 47
ETHERTYPE_TEB = 0x6558  # Transparent Ethernet Bridging: an Ethernet frame inside GRE or GENEVE
GRE_KEY_PRESENT = 0x2000
VXLAN_VNI_VALID = 0x08000000
# The engine's IPv4 offsets (csrc/vsgen_shared.h VSG_L3_*), without and with an 802.1Q tag inside.
L3_OFFSETS = {("vxlan", False): 64, ("vxlan", True): 68, ("geneve", False): 64, ("geneve", True): 68,
              ("gre", False): 56, ("gre", True): 60}
ALL_L3_OFFSETS = frozenset({14, 18, 52, *L3_OFFSETS.values()})


def outer_headers(encap: Encapsulation, inner_bytes: int) -> bytes:
    """The outer Ethernet, IPv4 and tunnel headers of an `inner_bytes`-long frame (no FCS)."""
    if encap.kind == "gre":
        tunnel = struct.pack(">HHI", GRE_KEY_PRESENT, ETHERTYPE_TEB, encap.key)
        proto = IPPROTO_GRE
    else:
        if encap.kind == "vxlan":
            header = struct.pack(">II", VXLAN_VNI_VALID, encap.key << 8)
        else:  # GENEVE: version 0, no options, protocol TEB, VNI
            header = struct.pack(">BBHI", 0, 0, ETHERTYPE_TEB, encap.key << 8)
        tunnel = struct.pack(">HHHH", SOURCE_UDP_PORT, UDP_PORTS[encap.kind], 8 + len(header) + inner_bytes, 0)
        tunnel += header
        proto = IPPROTO_UDP
    total = 20 + len(tunnel) + inner_bytes
    src = ipaddress.IPv4Address(encap.src_ip).packed
    dst = ipaddress.IPv4Address(encap.dst_ip).packed
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, total, 0, 0x4000, 64, proto, 0, src, dst)
    ip = ip[:10] + struct.pack(">H", ipv4_checksum(ip)) + ip[12:]
    eth = mac_bytes(encap.dst_mac) + mac_bytes(encap.src_mac) + struct.pack(">H", ETHERTYPE_IPV4)
    return eth + ip + tunnel


def encapsulate(inner: bytes, inner_l3: int, encap: Encapsulation) -> tuple[bytes, int]:
    """`inner` (a template without FCS, its IPv4 header at `inner_l3`) inside `encap`'s headers,
    and the offset of the inner IPv4 header in the result (what the engine stamps at)."""
    outer = outer_headers(encap, len(inner))
    l3 = len(outer) + inner_l3
    if l3 != L3_OFFSETS[(encap.kind, inner_l3 == 18)]:
        raise ValueError(f"{encap.kind}: inner IPv4 header at {l3}, the engine stamps at "
                         f"{L3_OFFSETS[(encap.kind, inner_l3 == 18)]}")
    return outer + inner, l3


def into_tunnel(frame: bytes, l3: int, sizes: tuple[int, ...], encap: Encapsulation,
                vary: str) -> tuple[bytes, int, tuple[int, ...]]:
    """A direction's template `frame` (IPv4 header at `l3`) and its frame mix's lengths `sizes`
    (without FCS; () for one size) for a port that sends into `encap`'s tunnel: the frame inside
    the outer headers, the inner IPv4 header's offset, and the mix's lengths plus the outer headers
    (the engine cuts the whole frame; its receivers count the inner frame's length)."""
    if vary in ("mac", "smac"):
        raise ValueError("frames sent into a tunnel vary their IPv4 or UDP destination "
                         "(stream_type L3 or L4), not their MAC")
    outer, outer_l3 = encapsulate(frame, l3, encap)
    return outer, outer_l3, tuple(n + len(outer) - len(frame) for n in sizes)
