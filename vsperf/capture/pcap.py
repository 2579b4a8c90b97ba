"""Read a classic pcap file (what `tcpdump -w` writes): its link type and frames, nothing else.

Both byte orders and both timestamp resolutions (microseconds, nanoseconds) are read; a pcapng
file or a damaged one is a CaptureError naming the file.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from vsperf.errors import VsperfError

LINKTYPE_ETHERNET = 1
_MAGICS = {b"\xd4\xc3\xb2\xa1": "<", b"\xa1\xb2\xc3\xd4": ">", b"\x4d\x3c\xb2\xa1": "<", b"\xa1\xb2\x3c\x4d": ">"}
MAX_FRAMES = 1_000_000
MAX_SNAPLEN = 262144


class CaptureError(VsperfError):
    """A capture could not be made or read."""


@dataclass(frozen=True)
class Capture:
    """A pcap file's frames (as captured: no FCS), in order."""

    linktype: int
    frames: tuple[bytes, ...]


def parse_pcap(data: bytes, where: str = "capture") -> Capture:
    """The frames of pcap file contents `data`."""
    if len(data) < 24 or data[:4] not in _MAGICS:
        raise CaptureError(f"{where}: not a pcap file (pcapng is not read: capture with tcpdump -w)")
    order = _MAGICS[data[:4]]
    linktype = struct.unpack_from(order + "I", data, 20)[0]
    frames: list[bytes] = []
    offset = 24
    while offset < len(data):
        if offset + 16 > len(data):
            raise CaptureError(f"{where}: truncated record header at byte {offset}")
        _, _, captured, _ = struct.unpack_from(order + "IIII", data, offset)
        offset += 16
        if captured > MAX_SNAPLEN or offset + captured > len(data):
            raise CaptureError(f"{where}: truncated frame at byte {offset}")
        frames.append(data[offset:offset + captured])
        offset += captured
        if len(frames) > MAX_FRAMES:
            raise CaptureError(f"{where}: more than {MAX_FRAMES:,} frames")
    return Capture(linktype, tuple(frames))


def read_pcap(path: Path) -> Capture:
    """The frames of pcap file `path`."""
    try:
        return parse_pcap(path.read_bytes(), str(path))
    except OSError as exc:
        raise CaptureError(f"{path}: {exc.strerror or exc}") from None
