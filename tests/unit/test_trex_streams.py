"""A trial's TRex streams from the test's traffic: counts, rates, headers, latency streams."""

from __future__ import annotations

from dataclasses import replace

import pytest

from vsperf.traffic import Traffic, Vlan
from vsperf.traffic.mix import parse_size_list
from vsperf.traffic.ports import GenPort
from vsperf.traffic.streams import directions
from vsperf.trafficgen.trex.streams import burst_plan, latency_fits, rate_plan

PORTS = (
    GenPort("ns", "g0", "02:00:00:00:00:01", "198.18.0.1", peer_mac="02:00:00:00:00:02", peer_ipv4="198.18.1.1"),
    GenPort("ns", "g1", "02:00:00:00:00:02", "198.18.1.1", peer_mac="02:00:00:00:00:01", peer_ipv4="198.18.0.1"),
)


def test_a_bidirectional_rate_trial_is_one_stream_per_direction_and_a_latency_stream_each() -> None:
    traffic = Traffic(frame_size_bytes=128)
    plan = rate_plan(traffic, directions(traffic, PORTS), (0, 1), 6000.0, 2.0, latency_pps=100)
    assert [(s.port, s.pg_id, s.latency) for s in plan.streams] == [(0, 1, False), (0, 2, True), (1, 3, False),
                                                                     (1, 4, True)]
    # each direction sends 3,000 frames/s for 2 s: 200 of them timestamped, in all exactly 6,000
    assert [(s.frames, s.pps) for s in plan.streams] == [(5800, 2900.0), (200, 100.0)] * 2
    assert plan.frames == 12000 and plan.planned_s == pytest.approx(2.0)
    forward, reverse = plan.streams[0], plan.streams[2]
    assert (forward.src_mac, forward.dst_mac, forward.src_ip, forward.dst_ip) == (
        "02:00:00:00:00:01", "02:00:00:00:00:02", "198.18.0.1", "198.18.1.1")
    assert (reverse.src_ip, reverse.dst_ip, reverse.src_udp, reverse.dst_udp) == ("198.18.1.1", "198.18.0.1",
                                                                                  3001, 3000)
    assert all(s.frame_size_bytes == 128 and s.vlan_id is None and s.vary == "none" for s in plan.streams)
    assert plan.latency_pg_ids == (2, 4) and plan.tx_ports == (0, 1)


def test_the_latency_stream_takes_at_most_a_tenth_of_a_direction() -> None:
    traffic = Traffic(bidir=False)
    plan = rate_plan(traffic, directions(traffic, PORTS), (0, 1), 1000.0, 1.0, latency_pps=1000)
    assert [(s.frames, s.pps, s.latency) for s in plan.streams] == [(900, 900.0, False), (100, 100.0, True)]


@pytest.mark.parametrize("latency_pps, rate_fps, duration_s", [(0, 6000.0, 1.0), (1000, 5.0, 1.0)])
def test_no_latency_stream_when_off_or_too_slow_to_spare_a_frame(latency_pps: int, rate_fps: float,
                                                                 duration_s: float) -> None:
    traffic = Traffic()
    plan = rate_plan(traffic, directions(traffic, PORTS), (0, 1), rate_fps, duration_s, latency_pps)
    assert not any(s.latency for s in plan.streams) and len(plan.streams) == 2


def test_vlan_and_multistream_reach_every_stream() -> None:
    traffic = Traffic(frame_size_bytes=128, multistream=64, stream_type="L4", vlan=Vlan(True, 100, 3, 0))
    plan = rate_plan(traffic, directions(traffic, PORTS), (0, 1), 2000.0, 1.0, latency_pps=10)
    assert all((s.vlan_id, s.vlan_priority, s.vary, s.flows) == (100, 3, "tp_dst", 64) for s in plan.streams)


def test_64_byte_frames_with_a_vlan_tag_have_no_room_for_latency() -> None:
    tagged = Traffic(frame_size_bytes=64, vlan=Vlan(True, 5))
    assert not latency_fits(tagged) and latency_fits(replace(tagged, frame_size_bytes=68))
    plan = rate_plan(tagged, directions(tagged, PORTS), (0, 1), 2000.0, 1.0, latency_pps=100)
    assert not any(s.latency for s in plan.streams)


def test_a_burst_splits_its_frames_at_the_ports_line_rate() -> None:
    traffic = Traffic(frame_size_bytes=64)
    plan = burst_plan(traffic, directions(traffic, PORTS), (0, 1), [501, 500])
    assert [(s.port, s.frames, s.latency) for s in plan.streams] == [(0, 501, False), (1, 500, False)]
    assert plan.streams[0].pps == pytest.approx(14_880_952.38, rel=1e-6)  # 10 GbE at 64 B
    assert plan.planned_s == pytest.approx(501 / 14_880_952.38)


def test_generator_ports_map_to_trex_ports() -> None:
    traffic = Traffic(bidir=False)
    plan = rate_plan(traffic, directions(traffic, PORTS), (1, 0), 100.0, 1.0, latency_pps=0)
    assert [s.port for s in plan.streams] == [1]


def test_a_mix_is_one_stream_per_size_and_direction_at_its_share_of_the_rate() -> None:
    """IMIX 64:7,570:4,1518:1 at 12,000 frames/s for 1 s over two directions: each direction's
    6,000 frames are 3,500 / 2,000 / 500 of the sizes, at 3,500 / 2,000 / 500 frames/s, so that
    the three streams of a direction end together; each size takes its share of the direction's
    60 latency frames/s."""
    mix = parse_size_list("IMIX")
    traffic = Traffic().with_frame_size(mix)
    plan = rate_plan(traffic, directions(traffic, PORTS), (0, 1), 12_000.0, 1.0, latency_pps=60)
    data = [(s.port, s.pg_id, s.frame_size_bytes, s.frames, s.pps) for s in plan.streams if not s.latency]
    assert data == [
        (0, 1, 64, 3465, 3465.0), (0, 5, 570, 1980, 1980.0), (0, 9, 1518, 495, 495.0),
        (1, 3, 64, 3465, 3465.0), (1, 7, 570, 1980, 1980.0), (1, 11, 1518, 495, 495.0),
    ]
    latency = [(s.port, s.pg_id, s.frame_size_bytes, s.frames) for s in plan.streams if s.latency]
    assert latency == [(0, 2, 64, 35), (0, 6, 570, 20), (0, 10, 1518, 5), (1, 4, 64, 35), (1, 8, 570, 20),
                       (1, 12, 1518, 5)]
    assert plan.frames == 12_000 and plan.planned_s == pytest.approx(1.0)
    assert len({s.pg_id for s in plan.streams}) == len(plan.streams)
    for port in (0, 1):  # every stream of a port lasts the trial
        assert {round(s.frames / s.pps, 6) for s in plan.streams if s.port == port} == {1.0}


def test_a_mix_leaves_out_a_size_with_no_frame_and_a_latency_stream_without_room() -> None:
    mix = parse_size_list("64:7,570:4,1518:1")
    tagged = Traffic(bidir=False, vlan=Vlan(True, 5)).with_frame_size(mix)
    plan = rate_plan(tagged, directions(tagged, PORTS), (0, 1), 5.0, 1.0, latency_pps=1000)
    assert [(s.frame_size_bytes, s.frames) for s in plan.streams] == [(64, 3), (570, 2)]  # no 1518 B frame in 5
    plan = rate_plan(tagged, directions(tagged, PORTS), (0, 1), 12_000.0, 1.0, latency_pps=1000)
    assert {s.frame_size_bytes for s in plan.streams if s.latency} == {570, 1518}  # 64 B + VLAN: no room


def test_a_mix_burst_splits_each_directions_frames_by_size() -> None:
    mix = parse_size_list("64:3,1518:1")
    traffic = Traffic().with_frame_size(mix)
    plan = burst_plan(traffic, directions(traffic, PORTS), (0, 1), [400, 400])
    assert [(s.port, s.frame_size_bytes, s.frames) for s in plan.streams] == [(0, 64, 300), (0, 1518, 100),
                                                                              (1, 64, 300), (1, 1518, 100)]
    port_line = traffic.line_rate_fps / 2
    assert [s.pps for s in plan.streams[:2]] == pytest.approx([port_line * 0.75, port_line * 0.25])
