"""vsgen test frames: the template a direction sends, the per-stream variation, the signature.

A test frame is Ethernet, an optional 802.1Q tag, IPv4 (no options, identification = the
engine session's run tag), UDP (checksum 0, allowed over IPv4) and right after the UDP header
a 14-byte signature the engine writes into every frame (see csrc/vsgen_shared.h):

    trial tag u16 | direction u8 | stream u24 | sequence u32 | transmit time u32 (ns, low bits)

all big endian, then zero padding up to the frame size. Frame sizes count the FCS (RFC 2544),
which the kernel adds: a template is `frame_size_bytes - 4` bytes long.

`stamp` is a Python copy of the engine's `vsg_stamp`; the unit tests pin both to the same
bytes, and the integration tests compare frames captured on the wire with it.
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass
from typing import Literal

from vsperf.traffic import Traffic
from vsperf.traffic.streams import Direction, Headers, mac_to_int

FCS_BYTES = 4
MIN_FRAME_BYTES = 64
MAX_FRAME_BYTES = 9018
ETH_HEADER_BYTES = 14
VLAN_TAG_BYTES = 4
IPV4_HEADER_BYTES = 20
UDP_HEADER_BYTES = 8
SIGNATURE_BYTES = 14
ETHERTYPE_IPV4 = 0x0800
ETHERTYPE_VLAN = 0x8100
IPPROTO_UDP = 17
DEFAULT_TTL = 64
MAX_STREAMS = 1 << 24  # the signature's stream field is 24 bits wide
MAX_DIRECTIONS = 8

# mac: destination MAC (low 32 bits); smac: source MAC (low 32 bits; RFC 2889 learning frames)
Vary = Literal["none", "mac", "ip", "udp", "smac"]
_VARY_BY_FIELD: dict[str, Vary] = {"none": "none", "dl_dst": "mac", "nw_dst": "ip", "tp_dst": "udp"}
_SIGNATURE = struct.Struct(">HB3sII")


@dataclass(frozen=True)
class FrameSpec(Headers):
    """Header values of one direction's template frame (stream 0), its size and its VLAN tag."""

    frame_size_bytes: int  # including the 4-byte FCS the kernel adds
    run_tag: int  # IPv4 identification of every frame of the engine session (16 bits)
    vlan_id: int | None = None  # None: untagged
    vlan_priority: int = 0
    vlan_cfi: int = 0

    def __post_init__(self) -> None:
        if not MIN_FRAME_BYTES <= self.frame_size_bytes <= MAX_FRAME_BYTES:
            raise ValueError(
                f"frame size {self.frame_size_bytes} outside {MIN_FRAME_BYTES}..{MAX_FRAME_BYTES} bytes"
            )
        if not 0 <= self.run_tag <= 0xFFFF:
            raise ValueError(f"run tag {self.run_tag} is not a 16-bit number")
        for port in (self.src_udp, self.dst_udp):
            if not 0 <= port <= 0xFFFF:
                raise ValueError(f"UDP port {port} outside 0..65535")
        if self.vlan_id is not None and not (0 <= self.vlan_id <= 4095 and 0 <= self.vlan_priority <= 7):
            raise ValueError(f"VLAN id {self.vlan_id} / priority {self.vlan_priority} out of range")

    @property
    def l3_offset(self) -> int:
        """Offset of the IPv4 header: 14, or 18 behind a VLAN tag."""
        return ETH_HEADER_BYTES + (VLAN_TAG_BYTES if self.vlan_id is not None else 0)


def mac_bytes(mac: str) -> bytes:
    """A MAC address in its 6 wire bytes."""
    return mac_to_int(mac).to_bytes(6, "big")


def ipv4_checksum(header: bytes) -> int:
    """RFC 791 header checksum of `header` (its checksum field counted as it is)."""
    total = sum(int(word) for word in struct.unpack(f">{len(header) // 2}H", header))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def build_frame(spec: FrameSpec) -> bytes:
    """The template frame (without FCS) of stream 0, with a zero signature."""
    length = spec.frame_size_bytes - FCS_BYTES
    l2 = mac_bytes(spec.dst_mac) + mac_bytes(spec.src_mac)
    if spec.vlan_id is not None:
        tci = (spec.vlan_priority << 13) | ((spec.vlan_cfi & 1) << 12) | spec.vlan_id
        l2 += struct.pack(">HH", ETHERTYPE_VLAN, tci)
    l2 += struct.pack(">H", ETHERTYPE_IPV4)
    ip_len = length - len(l2)
    src = ipaddress.IPv4Address(spec.src_ip).packed
    dst = ipaddress.IPv4Address(spec.dst_ip).packed
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, ip_len, spec.run_tag, 0, DEFAULT_TTL, IPPROTO_UDP, 0, src, dst)
    ip = ip[:10] + struct.pack(">H", ipv4_checksum(ip)) + ip[12:]
    udp = struct.pack(">HHHH", spec.src_udp, spec.dst_udp, ip_len - IPV4_HEADER_BYTES, 0)
    payload = bytes(length - len(l2) - len(ip) - len(udp))
    return l2 + ip + udp + payload


def mix_lengths(traffic: Traffic) -> tuple[int, ...]:
    """A frame mix's sending pattern as the engine's frame lengths (without FCS); () for one size."""
    return tuple(size - FCS_BYTES for size in traffic.mix.pattern) if traffic.mix is not None else ()


def vary_of(direction: Direction) -> tuple[Vary, int]:
    """What the engine varies per stream for `direction`, and the base value it adds to."""
    vary = _VARY_BY_FIELD[direction.vary]
    if vary == "mac":
        return vary, mac_to_int(direction.dst_mac) & 0xFFFFFFFF
    if vary == "ip":
        return vary, int(ipaddress.IPv4Address(direction.dst_ip))
    if vary == "udp":
        return vary, direction.dst_udp
    return vary, 0


def stamp(frame: bytes, l3: int, vary: Vary, base: int, direction: int, stream: int, trial_tag: int,
          seq: int, tx_ns: int) -> bytes:
    """Frame `frame` as the engine sends it for `stream` (Python copy of vsg_stamp)."""
    out = bytearray(frame)
    value = (base + stream) & 0xFFFFFFFF
    if vary == "mac":
        out[2:6] = value.to_bytes(4, "big")
    elif vary == "ip":
        out[l3 + 16 : l3 + 20] = value.to_bytes(4, "big")
        out[l3 + 10 : l3 + 12] = b"\0\0"
        out[l3 + 10 : l3 + 12] = ipv4_checksum(bytes(out[l3 : l3 + IPV4_HEADER_BYTES])).to_bytes(2, "big")
    elif vary == "smac":
        out[8:12] = value.to_bytes(4, "big")
    elif vary == "udp":
        out[l3 + 22 : l3 + 24] = (value & 0xFFFF).to_bytes(2, "big")
    sig = l3 + IPV4_HEADER_BYTES + UDP_HEADER_BYTES
    out[sig : sig + SIGNATURE_BYTES] = _SIGNATURE.pack(
        trial_tag & 0xFFFF, direction, stream.to_bytes(3, "big"), seq & 0xFFFFFFFF, tx_ns & 0xFFFFFFFF
    )
    return bytes(out)


@dataclass(frozen=True)
class Signature:
    """What a received frame carries (see the module docstring)."""

    run_tag: int  # the IPv4 identification
    trial_tag: int
    direction: int
    stream: int
    seq: int
    tx_ns: int  # low 32 bits of the transmit time
    vlan_id: int | None  # the tag found in the frame data, if any


def parse_signature(frame: bytes) -> Signature | None:
    """The signature of `frame` (from its first byte, FCS optional), or None when it is not an
    IPv4/UDP frame to 198.18.0.0/15 long enough to carry one."""
    if len(frame) < ETH_HEADER_BYTES + IPV4_HEADER_BYTES + UDP_HEADER_BYTES + SIGNATURE_BYTES:
        return None
    ethertype = struct.unpack_from(">H", frame, 12)[0]
    vlan_id = None
    l3 = ETH_HEADER_BYTES
    if ethertype == ETHERTYPE_VLAN:
        vlan_id = struct.unpack_from(">H", frame, 14)[0] & 0x0FFF
        ethertype = struct.unpack_from(">H", frame, 16)[0]
        l3 += VLAN_TAG_BYTES
    sig = l3 + IPV4_HEADER_BYTES + UDP_HEADER_BYTES
    if ethertype != ETHERTYPE_IPV4 or len(frame) < sig + SIGNATURE_BYTES:
        return None
    if frame[l3] != 0x45 or frame[l3 + 9] != IPPROTO_UDP:
        return None
    if frame[l3 + 16] != 198 or frame[l3 + 17] & 0xFE != 18:
        return None
    run_tag = struct.unpack_from(">H", frame, l3 + 4)[0]
    trial_tag, direction, stream, seq, tx_ns = _SIGNATURE.unpack_from(frame, sig)
    return Signature(run_tag, trial_tag, direction, int.from_bytes(stream, "big"), seq, tx_ns, vlan_id)


def frame_spec(traffic: Traffic, direction: Direction, run_tag: int) -> FrameSpec:
    """The template frame of `direction` (stream 0) for `traffic` (a frame mix: its largest frame,
    which the engine cuts to each frame's length, see `mix_lengths`)."""
    vlan = traffic.vlan
    return FrameSpec(
        src_mac=direction.src_mac, dst_mac=direction.dst_mac, src_ip=direction.src_ip,
        dst_ip=direction.dst_ip, src_udp=direction.src_udp, dst_udp=direction.dst_udp,
        frame_size_bytes=traffic.largest_frame_bytes, run_tag=run_tag,
        vlan_id=vlan.id if vlan.enabled else None, vlan_priority=vlan.priority, vlan_cfi=vlan.cfi,
    )
