"""Frame mixes: RFC 6985 genomes and size lists, their proportions, interleaving and mean size."""

from __future__ import annotations

import itertools

import pytest

from vsperf.traffic.mix import SIMPLE_IMIX, FrameMix, MixError, parse_genome, parse_mix, parse_size_list


def test_vsperf_default_genome_is_7_4_1_of_64_512_1518() -> None:
    mix = parse_genome("aaaaaaaddddg")
    assert (mix.name, mix.sizes_bytes, mix.weights) == ("aaaaaaaddddg", (64, 512, 1518), (7, 4, 1))
    assert mix.mean_bytes == pytest.approx((7 * 64 + 4 * 512 + 1518) / 12)
    assert parse_genome("gddddaaaaaaa").weights == (7, 4, 1)  # the order of the letters does not matter


def test_every_letter_of_the_table() -> None:
    assert parse_genome("abcdefgh").sizes_bytes == (64, 128, 256, 512, 1024, 1280, 1518, 2112)


def test_size_lists_and_the_simple_imix() -> None:
    mix = parse_size_list("1518:1, 64:7,570:4")
    assert (mix.name, mix.sizes_bytes, mix.weights) == (SIMPLE_IMIX, (64, 570, 1518), (7, 4, 1))
    assert parse_mix("IMIX") == parse_mix("imix") == mix
    assert parse_mix("64:1,64:2").weights == (3,)


def test_frames_interleave_never_in_blocks() -> None:
    pattern = parse_mix("aaaaaaaddddg").pattern
    assert len(pattern) == 12 and pattern.count(64) == 7 and pattern.count(512) == 4
    assert all(a != 512 or b != 512 for a, b in itertools.pairwise(pattern))  # no two 512 together
    assert max(len(run) for run in "".join("a" if s == 64 else "x" for s in pattern).split("x")) <= 2


def test_counts_of_a_number_of_frames_follow_the_pattern() -> None:
    mix = parse_mix("IMIX")
    assert mix.frames_of_size(24) == {64: 14, 570: 8, 1518: 2}
    assert sum(mix.frames_of_size(1001).values()) == 1001
    assert mix.shares == pytest.approx({64: 7 / 12, 570: 4 / 12, 1518: 1 / 12})


@pytest.mark.parametrize(("text", "message"), [
    ("aaxg", "letter 'x' does not exist"),
    ("aaz", "z, the path's MTU, is not supported"),
    ("64:0", "weight 0 of size 64 must be a positive whole number"),
    ("64:-2,512:1", "weight -2 of size 64"),
    ("64:1.5", "weight 1.5"),
    ("32:1", "size 32 B is outside 64..9000"),
    ("9001:1", "size 9001 B is outside 64..9000"),
    ("64:7;512:4", "expected SIZE:WEIGHT pairs"),
    ("64;7", "expected letters of RFC 6985"),
    ("64:1000,128:100", "more than 1024 frames in a group"),
])
def test_bad_mixes_are_one_line(text: str, message: str) -> None:
    with pytest.raises(MixError, match=message) as info:
        parse_mix(text)
    assert "\n" not in str(info.value)


def test_a_mix_checks_itself() -> None:
    with pytest.raises(MixError):
        FrameMix("x", (512, 64), (1, 1))
