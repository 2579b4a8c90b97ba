"""TRex's counters as a TrialResult: exact frames, the achieved rate, latency from the histogram."""

from __future__ import annotations

import pytest

from vsperf.search.measurer import FLAG_UNDER_DELIVERY
from vsperf.traffic import Traffic
from vsperf.traffic.mix import parse_size_list
from vsperf.traffic.ports import GenPort
from vsperf.traffic.streams import directions
from vsperf.trafficgen.trex.protocol import LatencyCounts, RateFit, StreamCounts, TrialCounts
from vsperf.trafficgen.trex.results import (
    FLAG_LATENCY_SAMPLED,
    bucket_width_us,
    latency_stats,
    trial_result,
)
from vsperf.trafficgen.trex.streams import burst_plan, rate_plan

PORTS = (GenPort(None, "a", "02:00:00:00:00:01", "198.18.0.1"), GenPort(None, "b", "02:00:00:00:00:02", "198.18.1.1"))
TRAFFIC = Traffic(frame_size_bytes=64)
PLAN = rate_plan(TRAFFIC, directions(TRAFFIC, PORTS), (0, 1), 2000.0, 1.0, latency_pps=100)


def counts(fits: tuple[RateFit, ...], lost: int = 0, latency: tuple[LatencyCounts, ...] = ()) -> TrialCounts:
    return TrialCounts(streams=tuple(StreamCounts(s.pg_id, s.frames, s.frames - (lost if s.pg_id == 1 else 0))
                                     for s in PLAN.streams), latency=latency, fits=fits, wall_s=1.03)


def test_frames_are_the_streams_counters_and_a_rate_reached_passes() -> None:
    fits = (RateFit(0, 999.0, 45, 0.98), RateFit(1, 999.5, 45, 0.98))
    result = trial_result("rate", TRAFFIC, PLAN, counts(fits, lost=7), 2000.0, 1.0)
    assert (result.tx_frames, result.rx_frames, result.loss_frames) == (2000, 1993, 7)
    assert result.actual_tx_rate_fps == pytest.approx(1998.5)
    assert FLAG_UNDER_DELIVERY not in result.flags and result.duration_s == 1.0


def test_a_port_that_sent_slower_is_under_delivery() -> None:
    fits = (RateFit(0, 900.0, 45, 1.1), RateFit(1, 1000.0, 45, 0.98))  # TRex stretched port 0's burst
    result = trial_result("rate", TRAFFIC, PLAN, counts(fits), 2000.0, 1.0)
    assert result.actual_tx_rate_fps == pytest.approx(2000 / 1.08)  # below the fits: 2,000 frames in 1.1 - 0.02 s
    assert FLAG_UNDER_DELIVERY in result.flags


def test_a_stall_the_samples_missed_shows_in_the_time_the_port_took() -> None:
    fits = (RateFit(0, 1000.0, 30, 1.5), RateFit(1, 1000.0, 30, 1.5))  # the samples saw 1,000/s, the end came late
    result = trial_result("rate", TRAFFIC, PLAN, counts(fits), 2000.0, 1.0)
    assert result.actual_tx_rate_fps == pytest.approx(2000 / 1.48)
    assert FLAG_UNDER_DELIVERY in result.flags


def test_without_samples_inside_the_rate_is_at_most_the_planned_one() -> None:
    fits = (RateFit(0, 0.0, 1, 0.9), RateFit(1, 0.0, 2, 0.95))
    result = trial_result("rate", TRAFFIC, PLAN, counts(fits), 2000.0, 1.0)
    assert result.actual_tx_rate_fps == pytest.approx(2000.0)


def test_a_burst_measures_its_duration_from_the_rate_reached() -> None:
    plan = burst_plan(TRAFFIC, directions(TRAFFIC, PORTS), (0, 1), [50_000, 50_000])
    fits = (RateFit(0, 150_000.0, 20, 0.33), RateFit(1, 150_000.0, 20, 0.33))
    got = TrialCounts(streams=(StreamCounts(1, 50_000, 50_000), StreamCounts(3, 50_000, 49_000)), fits=fits)
    result = trial_result("burst", TRAFFIC, plan, got, TRAFFIC.line_rate_fps, 0.0)
    assert (result.kind, result.tx_frames, result.rx_frames) == ("burst", 100_000, 99_000)
    assert result.actual_tx_rate_fps == pytest.approx(300_000.0)
    assert result.duration_s == pytest.approx(1 / 3)
    assert FLAG_UNDER_DELIVERY in result.flags  # far below 2 x 10 GbE line rate


def test_fewer_frames_sent_than_planned_is_under_delivery() -> None:
    fits = (RateFit(0, 1000.0, 45, 0.98), RateFit(1, 1000.0, 45, 0.98))
    short = TrialCounts(streams=(StreamCounts(1, 800, 800), StreamCounts(2, 100, 100), StreamCounts(3, 900, 900),
                                 StreamCounts(4, 100, 100)), fits=fits)
    assert FLAG_UNDER_DELIVERY in trial_result("rate", TRAFFIC, PLAN, short, 2000.0, 1.0).flags


@pytest.mark.parametrize("start, width", [(0, 10), (10, 10), (90, 10), (100, 100), (900, 100), (1000, 1000)])
def test_trex_histogram_buckets(start: int, width: int) -> None:
    assert bucket_width_us(start) == width


def test_latency_from_both_directions_histograms() -> None:
    forward = LatencyCounts(2, min_us=12.0, max_us=250.0, average_us=40.0, histogram={"10": 50, "20": 40, "200": 10})
    reverse = LatencyCounts(4, min_us=8.0, max_us=95.0, average_us=30.0, histogram={"0": 10, "10": 90})
    stats = latency_stats([forward, reverse])
    assert stats is not None
    assert (stats.min_ns, stats.max_ns, stats.samples) == (8000.0, 250_000.0, 200)
    # buckets count as their middle: 0-10 us as 8 (the minimum), 10-20 as 15, 20-30 as 25, 200-300 as 250 (the max)
    assert stats.avg_ns == pytest.approx((10 * 8 + 140 * 15 + 40 * 25 + 10 * 250) / 200 * 1000)
    assert stats.percentiles_ns == {"p50": 15_000.0, "p90": 25_000.0, "p99": 250_000.0, "p99.9": 250_000.0}


def test_no_latency_when_no_latency_frame_arrived() -> None:
    assert latency_stats([LatencyCounts(2, 0.0, 0.0, 0.0, {})]) is None


def test_a_trial_with_latency_streams_carries_latency_flagged_sampled() -> None:
    fits = (RateFit(0, 1000.0, 45, 0.98), RateFit(1, 1000.0, 45, 0.98))
    lat = (LatencyCounts(2, 10.0, 50.0, 20.0, {"10": 100}), LatencyCounts(4, 10.0, 50.0, 20.0, {"10": 100}))
    result = trial_result("rate", TRAFFIC, PLAN, counts(fits, latency=lat), 2000.0, 1.0)
    assert result.latency is not None and result.latency.samples == 200
    assert FLAG_LATENCY_SAMPLED in result.flags


def test_a_mix_counts_the_frames_received_per_size_from_each_sizes_streams() -> None:
    traffic = Traffic().with_frame_size(parse_size_list("IMIX"))
    plan = rate_plan(traffic, directions(traffic, PORTS), (0, 1), 12_000.0, 1.0, latency_pps=60)
    lost = {1: 10, 7: 3}  # 64 B frames lost forward, 570 B frames lost backward
    got = TrialCounts(streams=tuple(StreamCounts(s.pg_id, s.frames, s.frames - lost.get(s.pg_id, 0))
                                    for s in plan.streams),
                      fits=(RateFit(0, 6000.0, 40, 1.0), RateFit(1, 6000.0, 40, 1.0)), wall_s=1.02)
    result = trial_result("rate", traffic, plan, got, 12_000.0, 1.0)
    assert (result.tx_frames, result.rx_frames) == (12_000, 11_987)
    assert result.rx_frames_by_size == ((64, 7000 - 10), (570, 4000 - 3), (1518, 1000))
    assert sum(n for _, n in result.rx_frames_by_size) == result.rx_frames
    assert any("a stream of its own" in note for note in result.notes)
    single = trial_result("rate", TRAFFIC, PLAN, counts((RateFit(0, 1000.0, 40, 1.0), RateFit(1, 1000.0, 40, 1.0))),
                          2000.0, 1.0)
    assert single.rx_frames_by_size == () and not any("a stream of its own" in note for note in single.notes)
