"""RFC 2544 recovery and reset, RFC 2889 address trials with TRex: the streams, and what their
counters say (recovery slices, the silence of the receive counters, flooded frames)."""

from __future__ import annotations

import pytest

from vsperf.traffic import Traffic
from vsperf.traffic.mix import parse_size_list
from vsperf.traffic.ports import GenPort
from vsperf.traffic.streams import directions
from vsperf.trafficgen.trex.protocol import RateFit, RxSamples, StreamCounts, TrialCounts
from vsperf.trafficgen.trex.rfc import (
    address_plans,
    address_result,
    longest_silence,
    recovery_plan,
    recovery_result,
)

PORTS = (GenPort(None, "a", "02:00:00:00:00:01", "198.18.0.1"), GenPort(None, "b", "02:00:00:00:00:02", "198.18.1.1"))
TRAFFIC = Traffic(frame_size_bytes=64)


def test_recovery_streams_chain_the_overload_into_counted_slices() -> None:
    rp = recovery_plan(TRAFFIC, directions(TRAFFIC, PORTS), (0, 1), 20_000.0, 2.0, 10_000.0, 1.0)
    assert rp.slice_s == pytest.approx(0.1) and rp.overload_ids == (1, 12)
    assert rp.slice_ids == (tuple(range(2, 12)), tuple(range(13, 23)))
    by_id = {s.pg_id: s for s in rp.plan.streams}
    first = by_id[1]
    assert (first.frames, first.pps, first.self_start, first.next_pg_id) == (20_000, 10_000.0, True, 2)
    chain = [by_id[i] for i in rp.slice_ids[0]]
    assert all((s.frames, s.pps, s.self_start) == (500, 5000.0, False) for s in chain)
    assert [s.next_pg_id for s in chain] == [*range(3, 12), None]
    assert by_id[12].port == 1 and rp.plan.planned_s == pytest.approx(3.0)


def test_long_recoveries_get_longer_slices() -> None:
    rp = recovery_plan(TRAFFIC, directions(TRAFFIC, PORTS), (0, 1), 2000.0, 1.0, 1000.0, 60.0)
    assert len(rp.slice_ids[0]) == 200 and rp.slice_s == pytest.approx(0.3)


def test_a_mix_recovers_every_size_at_its_share_of_the_lower_rate() -> None:
    mix = Traffic().with_frame_size(parse_size_list("64:3,1518:1"))
    rp = recovery_plan(mix, directions(mix, PORTS), (0, 1), 20_000.0, 2.0, 10_000.0, 1.0)
    assert len(rp.overload_ids) == 4 and all(len(ids) == 10 for ids in rp.slice_ids)  # 2 sizes x 2 directions
    by_id = {s.pg_id: s for s in rp.plan.streams}
    firsts = [by_id[i] for i in rp.overload_ids]
    assert [(s.port, s.frame_size_bytes, s.frames, s.pps) for s in firsts] == [
        (0, 64, 15_000, 7500.0), (0, 1518, 5000, 2500.0), (1, 64, 15_000, 7500.0), (1, 1518, 5000, 2500.0)]
    assert [(by_id[ids[0]].frames, by_id[ids[0]].pps) for ids in rp.slice_ids] == [(375, 3750.0), (125, 1250.0),
                                                                                   (375, 3750.0), (125, 1250.0)]
    assert rp.plan.planned_s == pytest.approx(3.0)
    long = recovery_plan(mix, directions(mix, PORTS), (0, 1), 2000.0, 1.0, 1000.0, 60.0)
    assert sum(len(ids) + 1 for ids in long.slice_ids) <= 1000  # TRex's packet groups


def _counts(rp: object, lost: dict[int, int]) -> TrialCounts:
    streams = rp.plan.streams  # type: ignore[attr-defined]
    return TrialCounts(streams=tuple(StreamCounts(s.pg_id, s.frames, s.frames - lost.get(s.pg_id, 0))
                                     for s in streams), fits=(RateFit(0, 0.0, 0, 2.9), RateFit(1, 0.0, 0, 2.9)))


def test_the_last_slice_that_lost_frames_dates_the_recovery() -> None:
    rp = recovery_plan(TRAFFIC, directions(TRAFFIC, PORTS), (0, 1), 20_000.0, 2.0, 10_000.0, 1.0)
    # overload lost 900 and 800; after the drop, direction 0 lost in its 1st and 3rd slices, direction 1 in its 2nd
    result = recovery_result(TRAFFIC, rp, _counts(rp, {1: 900, 12: 800, 2: 50, 4: 5, 14: 7}), 20_000.0, 2.0,
                             10_000.0, 1.0)
    assert result.last_loss_after_drop_s == pytest.approx(0.3) and result.resolution_s == pytest.approx(0.1)
    assert (result.overload.tx_frames, result.overload.rx_frames) == (40_000, 38_300)
    assert (result.recovery.tx_frames, result.recovery.loss_frames) == (10_000, 62)
    assert result.overload.actual_tx_rate_fps == pytest.approx(20_000.0)


def test_no_loss_after_the_drop_is_no_recovery_time() -> None:
    rp = recovery_plan(TRAFFIC, directions(TRAFFIC, PORTS), (0, 1), 20_000.0, 2.0, 10_000.0, 1.0)
    assert recovery_result(TRAFFIC, rp, _counts(rp, {1: 900}), 20_000.0, 2.0, 10_000.0, 1.0).last_loss_after_drop_s == 0


def samples(port: int, frames: list[int], every_s: float = 0.02) -> RxSamples:
    return RxSamples(port, tuple(round(i * every_s, 3) for i in range(len(frames))), tuple(frames))


def test_the_longest_silence_between_samples_that_saw_frames() -> None:
    # frames every sample, then nothing for 25 samples (0.5 s), then frames again
    counts = [0, 10, 20, 30, *([40] * 26), 50, 60, 70]
    silence = longest_silence([samples(1, counts), samples(0, [0, 5, 10, 15, 20, 25])])
    # new frames at samples 4 and 30: no frame between 0.08 s and 0.58 s, at most 0.06 .. 0.60
    assert silence.gap_s == pytest.approx((0.50 + 0.54) / 2) and silence.resolution_s == pytest.approx(0.02)
    assert silence.recovered


def test_frames_that_never_came_back() -> None:
    silence = longest_silence([samples(1, [0, 10, 20, *([30] * 20)])])
    # the last new frames at sample 3 (0.06 s): silent to the last sample (0.44 s) at least, from 0.04 .. 0.06 s
    assert not silence.recovered and silence.gap_s == pytest.approx((0.38 + 0.40) / 2)


def test_the_end_of_the_traffic_is_no_silence() -> None:
    silence = longest_silence([samples(1, [0, 10, 20, 30, 40, 40])])  # the last sample came after the last frame
    assert silence.recovered and silence.gap_s == pytest.approx(0.02)


def test_address_phases_learn_flood_check_and_test_fresh_addresses() -> None:
    learning, flood, test = address_plans(TRAFFIC, PORTS, (0, 1), 1000, 1, 500.0, 2000.0)
    (learn,), (check,), (probe,) = learning.streams, flood.streams, test.streams
    # learning: port 1 sends from 1,000 source MACs (02:76:01:00:00:00 on) to port 0
    assert (learn.port, learn.src_mac, learn.dst_mac, learn.vary, learn.flows, learn.frames, learn.pps) == \
        (1, "02:76:01:00:00:00", "02:00:00:00:00:01", "dl_src", 1000, 1000, 500.0)
    # flood check: from the last learned address to each of them, from port 1 (learned there: filtered)
    assert (check.port, check.src_mac, check.dst_mac, check.vary) == (1, "02:76:01:00:03:e7", "02:76:01:00:00:00",
                                                                      "dl_dst")
    assert (probe.port, probe.src_mac, probe.dst_mac, probe.vary) == (0, "02:00:00:00:00:01", "02:76:01:00:00:00",
                                                                      "dl_dst")
    assert learning.planned_s == 2.0 and test.planned_s == 0.5
    second = address_plans(TRAFFIC, PORTS, (0, 1), 1000, 2, 500.0, 2000.0)[0].streams[0]
    assert second.src_mac == "02:76:02:00:00:00"  # every trial takes addresses never used before


def test_flooded_frames_are_the_flood_checks_frames_that_arrived() -> None:
    plans = address_plans(TRAFFIC, PORTS, (0, 1), 100, 1, 100.0, 100.0)
    fit = (RateFit(0, 100.0, 40, 0.98), RateFit(1, 100.0, 40, 0.98))
    got = (TrialCounts(streams=(StreamCounts(1, 100, 100),), fits=fit),
           TrialCounts(streams=(StreamCounts(2, 100, 7),), fits=fit),
           TrialCounts(streams=(StreamCounts(3, 100, 99),), fits=fit))
    result = address_result(TRAFFIC, 100, plans, got, 100.0, 100.0)
    assert (result.addresses, result.flooded_frames) == (100, 7)
    assert (result.learning.rx_frames, result.test.loss_frames) == (100, 1)
