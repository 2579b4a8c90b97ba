"""A result's frame size: bytes (an int), or a frame mix named by its genome or size list (a
string, see vsperf.traffic.mix). How they read, sort and load wherever results are shown."""

from __future__ import annotations

from typing import Any

from vsperf.traffic.model import PacketSize

__all__ = ["PacketSize", "packet_size_from", "size_label", "size_slug", "size_sort_key"]


def packet_size_from(value: Any) -> PacketSize:
    """A packet size as a results file holds it: a whole number of bytes (64 or 64.0), or a mix's
    name; ValueError for anything else."""
    if isinstance(value, bool):
        raise ValueError(f"packet size {value!r} is neither bytes nor a frame mix's name")
    if isinstance(value, int | float):
        if value != int(value) or value <= 0:
            raise ValueError(f"packet size must be a positive whole number of bytes, got {value}")
        return int(value)
    if isinstance(value, str) and value.strip():
        text = value.strip()
        return int(text) if text.isdigit() else text
    raise ValueError(f"packet size {value!r} is neither bytes nor a frame mix's name")


def size_label(size: PacketSize | None) -> str:
    """How a person reads it: "64 B", or "IMIX aaaaaaaddddg" for a mix ("" for None)."""
    if size is None:
        return ""
    return f"{size} B" if isinstance(size, int) else f"IMIX {size}"


def size_sort_key(size: PacketSize) -> tuple[int, int, str]:
    """Sizes first, increasing, then mixes by name."""
    return (0, size, "") if isinstance(size, int) else (1, 0, size)


def size_slug(size: PacketSize) -> str:
    """The size in a file name: "64", or "imix_64-7_570-4_1518-1" for a mix."""
    if isinstance(size, int):
        return str(size)
    return "imix_" + "".join(c if c.isalnum() else {":": "-", ",": "_"}.get(c, "_") for c in size)
