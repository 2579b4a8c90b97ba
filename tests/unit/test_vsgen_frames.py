"""vsgen test frames: template, per-stream variation (flow enumeration), signature."""

from __future__ import annotations

import ipaddress
import struct

import pytest

from vsperf.traffic import L2, Traffic, Vlan
from vsperf.traffic.ports import GenPort
from vsperf.traffic.streams import directions
from vsperf.trafficgen.vsgen.frames import (
    FCS_BYTES,
    FrameSpec,
    build_frame,
    frame_spec,
    ipv4_checksum,
    parse_signature,
    stamp,
    vary_of,
)

PORTS = (
    GenPort("ns0", "g0", "02:00:00:00:00:01", "198.18.0.1"),
    GenPort("ns1", "g1", "02:00:00:00:00:02", "198.18.1.1"),
)


def spec(size: int = 64, vlan: int | None = None, **kw: object) -> FrameSpec:
    values: dict[str, object] = dict(
        src_mac="02:00:00:00:00:01", dst_mac="02:00:00:00:00:02", src_ip="198.18.0.1", dst_ip="198.18.1.1",
        src_udp=3000, dst_udp=3001, frame_size_bytes=size, run_tag=0xBEEF, vlan_id=vlan,
    )
    values.update(kw)
    return FrameSpec(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize("size", [64, 65, 128, 1518, 9018])
@pytest.mark.parametrize("vlan", [None, 100])
def test_template_has_the_frame_size_without_fcs_and_valid_headers(size: int, vlan: int | None) -> None:
    frame = build_frame(spec(size, vlan))
    assert len(frame) == size - FCS_BYTES
    l3 = 18 if vlan is not None else 14
    if vlan is not None:
        assert frame[12:14] == b"\x81\x00"
        assert struct.unpack(">H", frame[14:16])[0] & 0xFFF == 100
    assert frame[l3 - 2 : l3] == b"\x08\x00"
    ip = frame[l3 : l3 + 20]
    assert ipv4_checksum(ip) == 0  # a valid header sums to 0xffff
    assert struct.unpack(">H", ip[2:4])[0] == len(frame) - l3  # IPv4 total length
    assert struct.unpack(">H", ip[4:6])[0] == 0xBEEF  # identification = run tag
    udp = frame[l3 + 20 : l3 + 28]
    assert struct.unpack(">HHHH", udp) == (3000, 3001, len(frame) - l3 - 20, 0)


def test_a_64_byte_tagged_frame_still_fits_the_signature() -> None:
    frame = stamp(build_frame(spec(64, 7)), 18, "none", 0, 1, 5, 0x1234, 9, 123)
    sig = parse_signature(frame)
    assert sig is not None and (sig.stream, sig.seq, sig.vlan_id) == (5, 9, 7)


@pytest.mark.parametrize("size", [63, 9019, 0])
def test_frame_sizes_outside_64_9018_are_refused(size: int) -> None:
    with pytest.raises(ValueError, match="frame size"):
        spec(size)


def test_out_of_range_fields_are_refused() -> None:
    with pytest.raises(ValueError, match="run tag"):
        spec(run_tag=70000)
    with pytest.raises(ValueError, match="UDP port"):
        spec(dst_udp=65536)
    with pytest.raises(ValueError, match="VLAN"):
        spec(vlan=4096)


def test_stamp_writes_the_signature_fields_big_endian() -> None:
    frame = stamp(build_frame(spec()), 14, "none", 0, 3, 0x0A0B0C, 0x1122, 0xDEADBEEF, 0x1_2345_6789)
    assert frame[42:56] == bytes.fromhex("1122 03 0a0b0c deadbeef 23456789".replace(" ", ""))
    assert frame[:42] == build_frame(spec())[:42]  # nothing else changes


def test_signature_round_trip() -> None:
    frame = stamp(build_frame(spec(128)), 14, "udp", 3001, 1, 77, 0xABCD, 4_000_000_000, 987654321)
    sig = parse_signature(frame + b"\0" * FCS_BYTES)
    assert sig is not None
    assert (sig.run_tag, sig.trial_tag, sig.direction, sig.stream, sig.seq, sig.tx_ns, sig.vlan_id) == (
        0xBEEF, 0xABCD, 1, 77, 4_000_000_000, 987654321, None,
    )


def test_noise_is_not_a_test_frame() -> None:
    arp = bytes.fromhex("ffffffffffff020000000001 0806".replace(" ", "")) + bytes(46)
    assert parse_signature(arp) is None
    elsewhere = bytearray(build_frame(spec()))
    elsewhere[14 + 16 : 14 + 20] = ipaddress.IPv4Address("10.0.0.1").packed
    assert parse_signature(bytes(elsewhere)) is None
    tcp = bytearray(build_frame(spec()))
    tcp[14 + 9] = 6
    assert parse_signature(bytes(tcp)) is None
    assert parse_signature(b"\0" * 20) is None


def test_l3_streams_vary_the_destination_address_and_keep_the_checksum_valid() -> None:
    frame = build_frame(spec())
    for stream in (0, 1, 255, 256, 65535):
        out = stamp(frame, 14, "ip", int(ipaddress.IPv4Address("198.18.1.1")), 0, stream, 1, 0, 0)
        assert ipaddress.IPv4Address(out[30:34]) == ipaddress.IPv4Address("198.18.1.1") + stream
        assert ipv4_checksum(out[14:34]) == 0


def test_l2_streams_vary_the_destination_mac_low_32_bits() -> None:
    out = stamp(build_frame(spec()), 14, "mac", 0x00000002, 0, 999_999, 1, 0, 0)
    assert out[0:6] == bytes.fromhex("0200") + (2 + 999_999).to_bytes(4, "big")
    assert out[6:12] == bytes.fromhex("020000000001")


def test_l4_streams_vary_the_destination_port() -> None:
    out = stamp(build_frame(spec()), 14, "udp", 3001, 0, 10, 1, 0, 0)
    assert struct.unpack(">H", out[36:38])[0] == 3011


@pytest.mark.parametrize(
    ("stream_type", "vary", "base"),
    [("L2", "mac", 0x00000002), ("L3", "ip", int(ipaddress.IPv4Address("198.18.1.1"))), ("L4", "udp", 3001)],
)
def test_vary_of_matches_the_switch_flows_of_every_stream(stream_type: str, vary: str, base: int) -> None:
    traffic = Traffic(multistream=1000, stream_type=stream_type)  # type: ignore[arg-type]
    forward = directions(traffic, PORTS)[0]
    assert vary_of(forward) == (vary, base)
    frame = build_frame(spec())
    for stream in (0, 1, 999):
        out = stamp(frame, 14, vary_of(forward)[0], base, 0, stream, 1, 0, 0)
        # The engine's variation gives exactly the value the switch's per-stream flow matches.
        value = forward.value(stream)
        if vary == "mac":
            assert out[0:6] == bytes.fromhex(value.replace(":", ""))
        elif vary == "ip":
            assert str(ipaddress.IPv4Address(out[30:34])) == value
        else:
            assert str(struct.unpack(">H", out[36:38])[0]) == value


def test_a_single_stream_varies_nothing() -> None:
    forward = directions(Traffic(multistream=0, l2=L2()), PORTS)[0]
    assert vary_of(forward) == ("none", 0)
    frame = build_frame(spec())
    assert stamp(frame, 14, "none", 0, 0, 0, 1, 0, 0)[:42] == frame[:42]


def test_frame_spec_takes_the_vlan_and_the_direction() -> None:
    traffic = Traffic(frame_size_bytes=128, vlan=Vlan(enabled=True, id=10, priority=3))
    reverse = directions(traffic, PORTS)[1]
    spec = frame_spec(traffic, reverse, 7)
    assert (spec.src_mac, spec.dst_ip, spec.src_udp, spec.vlan_id, spec.vlan_priority, spec.run_tag) == (
        "02:00:00:00:00:02", "198.18.0.1", 3001, 10, 3, 7,
    )
    assert spec.l3_offset == 18


def test_a_mix_sends_its_largest_template_cut_to_its_pattern() -> None:
    from vsperf.traffic.mix import parse_mix
    from vsperf.trafficgen.vsgen.frames import mix_lengths

    mix = parse_mix("aaaaaaaddddg")
    traffic = Traffic().with_frame_size(mix)
    assert mix_lengths(traffic) == tuple(s - 4 for s in mix.pattern) and mix_lengths(Traffic()) == ()
