"""From engine answers to vsperf results: latency over ports, per-second rows, flags."""

from __future__ import annotations

import pytest
from test_vsgen_protocol import result_event

from vsperf.trafficgen.vsgen.histogram import PortLatency, bucket_of
from vsperf.trafficgen.vsgen.protocol import Tick, parse_result
from vsperf.trafficgen.vsgen.results import (
    FLAG_DUPLICATES,
    FLAG_REORDERED,
    FLAG_RX_UNTAGGED,
    FLAG_RX_WRONG_VLAN,
    latency_stats,
    per_second_rows,
    second_row,
    sequence_flags,
    vlan_flags,
)


def port(samples: int, sum_ns: int, low: int, high: int, hist: dict[int, int]) -> PortLatency:
    return PortLatency(samples, sum_ns, low, high, tuple(hist.items()))


def test_latency_over_two_ports() -> None:
    a = port(100, 100 * 5000, 4000, 9000, {bucket_of(5000): 100})
    b = port(300, 300 * 7000, 6000, 20000, {bucket_of(7000): 299, bucket_of(20000): 1})
    stats = latency_stats([a, b, port(0, 0, 0, 0, {})])
    assert stats is not None
    assert (stats.min_ns, stats.max_ns, stats.samples) == (4000.0, 20000.0, 400)
    assert stats.avg_ns == pytest.approx((100 * 5000 + 300 * 7000) / 400)
    assert stats.percentiles_ns["p50"] == pytest.approx(7000, abs=8)
    assert stats.percentiles_ns["p99.9"] == pytest.approx(20000, abs=8)
    assert stats.min_ns <= stats.percentiles_ns["p50"] <= stats.percentiles_ns["p99"] <= stats.max_ns


def test_no_frames_no_latency() -> None:
    assert latency_stats([port(0, 0, 0, 0, {})]) is None


def test_per_second_rows_from_cumulative_ticks() -> None:
    ticks = [Tick(1.0, {0: 1000, 1: 500}, {0: 500, 1: 990}), Tick(2.0, {0: 3000, 1: 1500}, {0: 1500, 1: 2990})]
    rows = per_second_rows(ticks, {0: 0, 1: 1}, 64)
    assert [r["time_s"] for r in rows] == [1.0, 2.0]
    assert rows[0]["tx_fps"] == 1500 and rows[0]["rx_fps"] == 1490
    assert rows[1]["port0_tx_fps"] == 2000 and rows[1]["port1_rx_fps"] == 2000
    assert rows[1]["port0_tx_mbps"] == pytest.approx(2000 * 64 * 8 / 1e6)
    assert rows[1]["tx_mbps"] == pytest.approx(3000 * 64 * 8 / 1e6)


def test_a_partial_last_tick_is_a_rate_over_its_own_time() -> None:
    row = second_row(Tick(1.0, {0: 100}, {1: 100}), Tick(1.5, {0: 150}, {1: 150}), {0: 0}, 64)
    assert row is not None and row["tx_fps"] == 100 and row["port1_rx_fps"] == 100
    assert second_row(Tick(1.0, {}, {}), Tick(1.0, {}, {}), {}, 64) is None


def test_sequence_flags() -> None:
    assert sequence_flags(parse_result(result_event())) == (FLAG_DUPLICATES, FLAG_REORDERED)
    clean = parse_result(result_event(dup=0, reorder=0, rx=10, detail=[]))
    assert sequence_flags(clean) == ()
    assert sequence_flags(parse_result(result_event(dup=0, reorder=0, excess=3))) == (FLAG_DUPLICATES,)


def test_vlan_flags_compare_tagged_frames_with_what_each_port_expects() -> None:
    event = result_event(dup=0, reorder=0)
    event["ports"][0].update(frames=10, tagged=10)
    tagged = parse_result(event)
    assert vlan_flags(tagged, {1}) == ()  # Frame Modification vlan: port 1 expects the switch's tag
    assert vlan_flags(tagged, set()) == (FLAG_RX_WRONG_VLAN,)  # a tag nobody asked for
    event["ports"][0].update(tagged=7)
    assert vlan_flags(parse_result(event), {1}) == (FLAG_RX_UNTAGGED,)  # 3 frames arrived untagged
    event["ports"][0].update(frames=0, tagged=0)
    assert vlan_flags(parse_result(event), {1}) == ()  # nothing received: nothing to say about tags


def test_the_histogram_as_hdr_counts_every_frame_at_its_buckets_middle() -> None:
    from vsperf.search import hdr
    from vsperf.trafficgen.vsgen.histogram import bucket_of
    from vsperf.trafficgen.vsgen.results import hdr_of

    hist = {bucket_of(10_000): 90, bucket_of(50_000): 9, bucket_of(2_000_000): 1}
    stats = latency_stats([port(100, 10_000 * 100, 9_990, 2_000_100, hist)], histogram=True)
    assert stats is not None and hdr.total_count(stats.hdrh) == 100
    assert stats.percentiles_ns["p50"] == pytest.approx(10_008, abs=16)
    assert stats.percentiles_ns["p99.999"] == pytest.approx(2_000_100, rel=1e-3)  # clamped to the exact maximum
    assert set(stats.percentiles_ns) == {"p50", "p90", "p99", "p99.9", "p99.99", "p99.999"}
    assert hdr_of({}, 0, 0) == "" and latency_stats([port(1, 5, 5, 5, {bucket_of(5): 1})]).hdrh == ""  # type: ignore[union-attr]


def test_sizes_received_are_sizes_sent() -> None:
    from vsperf.trafficgen.vsgen.protocol import PortResult
    from vsperf.trafficgen.vsgen.results import sizes_received

    def rx(index: int, sizes: tuple[tuple[int, int], ...]) -> PortResult:
        return PortResult(index, "native", 0, 0, 0, 0, 0, 0, 0, 0, port(0, 0, 0, 0, {}), sizes=sizes)

    # lengths without FCS; a port the switch tags frames for sees them 4 bytes longer
    got = sizes_received([rx(0, ((60, 7), (566, 4))), rx(1, ((64, 7), (1518, 1)))], pushed_vlan_ports={1})
    assert got == ((64, 14), (570, 4), (1518, 1))
