"""Headers of captured frames: VLAN, MPLS, IPv4 (checksum checked), UDP; tunnels in their own test
(test_vsgen_encap)."""

from __future__ import annotations

import struct

from vsperf.capture.dissect import dissect
from vsperf.trafficgen.vsgen.frames import FrameSpec, build_frame


def frame(vlan: int | None = None) -> bytes:
    return build_frame(FrameSpec(src_mac="02:00:00:00:00:01", dst_mac="02:00:00:00:00:02", src_ip="198.18.0.1",
                                 dst_ip="198.18.1.1", src_udp=3000, dst_udp=3001, frame_size_bytes=64, run_tag=1,
                                 vlan_id=vlan))


def test_plain_and_tagged_frames() -> None:
    seen = dissect(frame())
    assert seen is not None
    assert (seen.src_mac, seen.dst_mac, seen.vlan_id, seen.src_ip, seen.dst_ip) == (
        "02:00:00:00:00:01", "02:00:00:00:00:02", None, "198.18.0.1", "198.18.1.1")
    assert (seen.ttl, seen.dscp, seen.src_port, seen.dst_port, seen.ip_checksum_ok) == (64, 0, 3000, 3001, True)
    tagged = dissect(frame(vlan=100))
    assert tagged is not None and tagged.vlan_id == 100 and tagged.dst_port == 3001


def test_an_mpls_label_pushed_before_the_ipv4() -> None:
    plain = frame()
    label = struct.pack(">I", (16 << 12) | 0x100 | 63)  # label 16, bottom of stack, TTL 63
    mpls = plain[:12] + b"\x88\x47" + label + plain[14:]
    seen = dissect(mpls)
    assert seen is not None and seen.mpls_labels == (16,) and seen.src_ip == "198.18.0.1"


def test_too_short_or_not_ipv4() -> None:
    assert dissect(b"\x00" * 10) is None
    arp = dissect(b"\xff" * 12 + b"\x08\x06" + bytes(28))
    assert arp is not None and arp.src_ip is None
