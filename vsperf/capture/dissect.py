"""The headers of a captured frame, as far as vsperf's checks need them: Ethernet, 802.1Q, one or
more MPLS labels, IPv4 (with its checksum checked), UDP, and inside a tunnel (VXLAN, GENEVE, GRE
of Ethernet) the inner frame, dissected the same way."""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass

ETHERTYPE_IPV4, ETHERTYPE_VLAN, ETHERTYPE_MPLS, ETHERTYPE_TEB = 0x0800, 0x8100, 0x8847, 0x6558
IPPROTO_UDP, IPPROTO_GRE = 17, 47
VXLAN_PORT, GENEVE_PORT = 4789, 6081
MAX_DEPTH = 2  # a tunnel inside a tunnel is dissected; deeper ones are not


def _mac(raw: bytes) -> str:
    return ":".join(f"{b:02x}" for b in raw)


def _checksum_ok(header: bytes) -> bool:
    total = sum(struct.unpack(f">{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return bool(total == 0xFFFF)


@dataclass(frozen=True)
class Frame:
    """One frame's headers (None: the frame has no such header)."""

    dst_mac: str
    src_mac: str
    vlan_id: int | None = None
    mpls_labels: tuple[int, ...] = ()
    src_ip: str | None = None
    dst_ip: str | None = None
    tos: int | None = None  # the IPv4 TOS byte (DSCP << 2 | ECN)
    ttl: int | None = None
    ip_checksum_ok: bool | None = None
    ip_proto: int | None = None
    src_port: int | None = None  # UDP
    dst_port: int | None = None
    tunnel: str | None = None  # vxlan | geneve | gre
    tunnel_key: int | None = None  # VNI, or GRE key (None: GRE without one)
    inner: Frame | None = None  # the frame inside the tunnel

    @property
    def dscp(self) -> int | None:
        return None if self.tos is None else self.tos >> 2


def dissect(data: bytes, depth: int = 0) -> Frame | None:
    """The headers of Ethernet frame `data` (None: shorter than an Ethernet header)."""
    if len(data) < 14:
        return None
    dst, src = _mac(data[0:6]), _mac(data[6:12])
    ethertype = struct.unpack_from(">H", data, 12)[0]
    offset = 14
    vlan = None
    if ethertype == ETHERTYPE_VLAN and len(data) >= 18:
        vlan = struct.unpack_from(">H", data, 14)[0] & 0x0FFF
        ethertype = struct.unpack_from(">H", data, 16)[0]
        offset = 18
    labels: list[int] = []
    if ethertype == ETHERTYPE_MPLS:
        while offset + 4 <= len(data):
            entry = struct.unpack_from(">I", data, offset)[0]
            labels.append(entry >> 12)
            offset += 4
            if entry & 0x100:  # bottom of stack
                break
        ethertype = ETHERTYPE_IPV4 if offset < len(data) and data[offset] >> 4 == 4 else 0
    frame = Frame(dst, src, vlan, tuple(labels))
    if ethertype != ETHERTYPE_IPV4 or offset + 20 > len(data) or data[offset] >> 4 != 4:
        return frame
    ihl = (data[offset] & 0x0F) * 4
    header = data[offset:offset + ihl]
    ip = dict(src_ip=str(ipaddress.IPv4Address(data[offset + 12:offset + 16])),
              dst_ip=str(ipaddress.IPv4Address(data[offset + 16:offset + 20])), tos=data[offset + 1],
              ttl=data[offset + 8], ip_checksum_ok=len(header) == ihl and _checksum_ok(header),
              ip_proto=data[offset + 9])
    l4 = offset + ihl
    if ip["ip_proto"] == IPPROTO_UDP and l4 + 8 <= len(data):
        sport, dport = struct.unpack_from(">HH", data, l4)
        tunnel, key, inner_at = None, None, 0
        if dport == VXLAN_PORT and l4 + 16 <= len(data) and data[l4 + 8] & 0x08:
            tunnel, key, inner_at = "vxlan", struct.unpack_from(">I", data, l4 + 12)[0] >> 8, l4 + 16
        elif dport == GENEVE_PORT and l4 + 16 <= len(data):
            options = (data[l4 + 8] & 0x3F) * 4
            proto = struct.unpack_from(">H", data, l4 + 10)[0]
            if proto == ETHERTYPE_TEB:
                tunnel, key, inner_at = "geneve", struct.unpack_from(">I", data, l4 + 12)[0] >> 8, l4 + 16 + options
        inner = dissect(data[inner_at:], depth + 1) if tunnel and depth < MAX_DEPTH else None
        return Frame(dst, src, vlan, tuple(labels), **ip, src_port=sport, dst_port=dport,  # type: ignore[arg-type]
                     tunnel=tunnel, tunnel_key=key, inner=inner)
    if ip["ip_proto"] == IPPROTO_GRE and l4 + 4 <= len(data):
        flags, proto = struct.unpack_from(">HH", data, l4)
        at = l4 + 4 + (4 if flags & 0x8000 else 0)
        key = None
        if flags & 0x2000:
            key = struct.unpack_from(">I", data, at)[0] if at + 4 <= len(data) else None
            at += 4
        at += 4 if flags & 0x1000 else 0
        if proto == ETHERTYPE_TEB:
            inner = dissect(data[at:], depth + 1) if depth < MAX_DEPTH else None
            return Frame(dst, src, vlan, tuple(labels), **ip, tunnel="gre", tunnel_key=key,  # type: ignore[arg-type]
                         inner=inner)
    return Frame(dst, src, vlan, tuple(labels), **ip)  # type: ignore[arg-type]
