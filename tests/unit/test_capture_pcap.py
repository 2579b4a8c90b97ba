"""pcap files read back: both byte orders, frames in order, damaged files named."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from vsperf.capture.pcap import CaptureError, parse_pcap, read_pcap


def pcap(frames: list[bytes], order: str = "<", magic: int = 0xA1B2C3D4) -> bytes:
    out = struct.pack(order + "IHHiIII", magic, 2, 4, 0, 0, 65535, 1)
    for frame in frames:
        out += struct.pack(order + "IIII", 1, 2, len(frame), len(frame)) + frame
    return out


def test_frames_in_order_both_byte_orders_and_resolutions(tmp_path: Path) -> None:
    for order, magic in (("<", 0xA1B2C3D4), (">", 0xA1B2C3D4), ("<", 0xA1B23C4D)):
        capture = parse_pcap(pcap([b"a" * 60, b"b" * 70], order, magic))
        assert capture.linktype == 1 and capture.frames == (b"a" * 60, b"b" * 70)
    path = tmp_path / "x.pcap"
    path.write_bytes(pcap([]))
    assert read_pcap(path).frames == ()


def test_damaged_or_other_files_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(CaptureError, match="x: not a pcap file \\(pcapng is not read"):
        parse_pcap(b"\x0a\x0d\x0d\x0a" + bytes(40), "x")
    with pytest.raises(CaptureError, match="truncated frame at byte 40"):
        parse_pcap(pcap([b"a" * 60])[:-1], "x")
    with pytest.raises(CaptureError, match="No such file"):
        read_pcap(tmp_path / "missing.pcap")
