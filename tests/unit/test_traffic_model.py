"""The Traffic of a frame mix: line rate from its mean size, its largest frame, its name."""

from __future__ import annotations

import pytest

from vsperf.traffic import Traffic
from vsperf.traffic.mix import parse_mix


def test_a_mix_is_one_more_frame_size() -> None:
    mix = parse_mix("aaaaaaaddddg")
    traffic = Traffic(bidir=True, link_speed_bps=10e9).with_frame_size(mix)
    assert traffic.packet_size == "aaaaaaaddddg" and traffic.frame_sizes == (64, 512, 1518)
    assert traffic.mean_frame_bytes == 334.5 and traffic.frame_size_bytes == 334
    assert traffic.largest_frame_bytes == 1518
    # line rate follows from the mean size with the 20 bytes of per-frame overhead
    assert traffic.line_rate_fps == pytest.approx(2 * 10e9 / ((334.5 + 20) * 8))
    single = traffic.with_frame_size(64)
    assert single.mix is None and single.packet_size == 64 and single.line_rate_fps == pytest.approx(2 * 14_880_952.38)
