"""Packet sizes of results: bytes or a frame mix's name, read, sorted and named."""

from __future__ import annotations

import pytest

from vsperf.results.sizes import packet_size_from, size_label, size_slug, size_sort_key


def test_sizes_and_mixes() -> None:
    assert packet_size_from(64) == packet_size_from(64.0) == packet_size_from("64") == 64
    assert packet_size_from("aaaaaaaddddg") == "aaaaaaaddddg"
    for bad in (0, -64, 64.5, True, "", None):
        with pytest.raises(ValueError):
            packet_size_from(bad)
    assert (size_label(64), size_label("64:7,570:4,1518:1"), size_label(None)) == ("64 B", "IMIX 64:7,570:4,1518:1", "")
    assert sorted(["b", 1518, "a", 64], key=size_sort_key) == [64, 1518, "a", "b"]
    assert size_slug(64) == "64" and size_slug("64:7,570:4,1518:1") == "imix_64-7_570-4_1518-1"
