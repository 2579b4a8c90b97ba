"""Frames arrive modified: what each Frame Modification looks like on the receiving side."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from vsperf.capture.dissect import dissect
from vsperf.capture.frame_check import check_capture, expected, is_modified, summary
from vsperf.trafficgen.vsgen.frames import FrameSpec, build_frame


def frame(**fields: object) -> bytes:
    values: dict[str, object] = dict(src_mac="02:00:00:00:00:01", dst_mac="02:00:00:00:00:02", src_ip="198.18.0.1",
                                     dst_ip="198.18.1.1", src_udp=3000, dst_udp=3001, frame_size_bytes=64, run_tag=1)
    values.update(fields)
    return build_frame(FrameSpec(**values))  # type: ignore[arg-type]


def with_ttl_tos(raw: bytes, ttl: int, tos: int) -> bytes:
    out = bytearray(raw)
    out[22], out[15] = ttl, tos
    return bytes(out)


@pytest.mark.parametrize(
    ("modification", "egress", "raw", "modified"),
    [
        ("mac", "phy1", frame(src_mac="22:22:22:22:22:22"), True),
        ("mac", "phy0", frame(src_mac="22:22:22:22:22:22"), False),
        ("ttl", "phy1", with_ttl_tos(frame(), 251, 0), True),
        ("ttl", "phy0", with_ttl_tos(frame(), 251, 0), False),
        ("dscp", "phy0", with_ttl_tos(frame(), 64, 184), True),
        ("ip_addr", "phy1", frame(src_ip="198.18.10.10", dst_ip="198.19.20.20"), True),
        ("ip_addr", "phy0", frame(src_ip="198.18.10.10", dst_ip="198.19.20.20"), False),
        ("ip_port", "phy1", frame(src_udp=44444, dst_udp=44444), True),
        ("ip_port", "phy1", frame(), False),
        ("vlan", "phy1", frame(vlan_id=100), True),
        ("mpls", "phy1", frame(), False),
    ],
)
def test_is_modified(modification: str, egress: str, raw: bytes, modified: bool) -> None:
    seen = dissect(raw)
    assert seen is not None and is_modified(seen, modification, egress, 100) is modified


def test_a_capture_checked(tmp_path: Path) -> None:
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    for raw in (with_ttl_tos(frame(), 251, 0), with_ttl_tos(frame(), 64, 0), b"\xff" * 12 + b"\x08\x06" + bytes(28)):
        out += struct.pack("<IIII", 0, 0, len(raw), len(raw)) + raw
    (tmp_path / "c.pcap").write_bytes(out)
    check = check_capture(tmp_path / "c.pcap", 1, "ttl", None)
    assert (check.captured, check.modified, check.passed) == (2, 1, False)  # the ARP frame is not a test frame
    assert summary([check]) == {"port 1": "1 of 2 frames captured show TTL 251"}
    assert expected("vlan", "phy0", 7) == "VLAN 7" and expected("ttl", "phy0", None) == "TTL 241"
