"""vsgen on a veth pair (root): a frame mix sent interleaved and counted per size at the receiver,
a latency histogram that holds every frame and matches the raw latencies, and a warm start whose
frames are never counted. Short trials: a few seconds in all."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from test_vsgen_wire import Net, Pair, fresh_net, running, wire_pair

from vsperf.search import hdr
from vsperf.traffic import Traffic
from vsperf.traffic.mix import parse_mix
from vsperf.traffic.warmup import WarmStart
from vsperf.trafficgen.vsgen.histogram import bucket_of, bucket_range, nearest_rank

pytestmark = [pytest.mark.root]

IMIX = parse_mix("IMIX")  # 64:7, 570:4, 1518:1


@pytest.fixture
def net() -> Iterator[Net]:
    yield from fresh_net()


@pytest.fixture
def pair(net: Net, tmp_path: Path) -> Iterator[Pair]:
    yield from wire_pair(net, tmp_path)


def _within_one_percent(counts: dict[int, int], total: int) -> None:
    assert set(counts) == set(IMIX.sizes_bytes)
    for size, share in IMIX.shares.items():
        assert abs(counts[size] / total - share) <= 0.01, (size, counts[size], total)


@pytest.mark.parametrize("path", ["xdp", "packet"])
def test_a_simple_imix_arrives_in_its_proportions(pair: Pair, path: str) -> None:
    traffic = Traffic(bidir=True).with_frame_size(IMIX)
    with running(pair.host, VSGEN_PATH=path) as gen:
        gen.start(pair.ports)
        result = gen.trial(traffic, 40_000.0, 0.5)
        assert result.rx_frames == result.tx_frames > 0
        counts = dict(result.rx_frames_by_size)
        assert sum(counts.values()) == result.rx_frames
        _within_one_percent(counts, result.rx_frames)
        # every direction sends whole groups in its pattern: the counts are exact, not just close
        per_dir = result.tx_frames // 2
        assert counts == {s: 2 * n for s, n in IMIX.frames_of_size(per_dir).items()}
        assert result.line_rate_fps == pytest.approx(2 * 10e9 / ((IMIX.mean_bytes + 20) * 8))


def test_the_histogram_holds_every_frame_and_matches_the_raw_latencies(pair: Pair) -> None:
    traffic = Traffic(bidir=False, latency_histogram=True)
    with running(pair.host) as gen:
        gen.raw_latencies = 200_000
        gen.start(pair.ports)
        result = gen.trial(traffic, 50_000.0, 1.0)
        assert result.latency is not None and result.latency.hdrh
        assert hdr.total_count(result.latency.hdrh) == result.rx_frames == 50_000
        assert gen.last_run is not None
        (port,) = [p for p in gen.last_run.ports if p.port == 1]
        raw = sorted(port.raw)
        assert len(raw) == port.raw_seen == result.rx_frames
        for key, value in result.latency.percentiles_ns.items():
            percent = float(key[1:])
            exact = raw[nearest_rank(percent, len(raw)) - 1]
            # the engine's bucket (16 ns wide below 65.5 us) and HDR's 3 digits: nothing coarser
            low, width = bucket_range(bucket_of(exact))
            assert abs(value - exact) <= width + exact * 0.001 + 1, (key, value, exact, low)
        assert result.latency.max_ns == raw[-1] and result.latency.min_ns == raw[0]


@pytest.mark.parametrize("mode", ["lead-in", "ramp"])
def test_a_warm_start_is_sent_and_never_counted(pair: Pair, mode: str) -> None:
    warm = WarmStart(mode, 0.05, 20.0)  # type: ignore[arg-type]
    traffic = replace(Traffic(bidir=True, multistream=4), warm_start=warm)
    with running(pair.host) as gen:
        gen.start(pair.ports)
        result = gen.trial(traffic, 20_000.0, 0.5)
        assert result.tx_frames == 10_000 and result.rx_frames == 10_000  # exact counts still hold
        assert result.warm_frames == 2 * warm.frames(10_000.0)
        assert gen.last_run is not None
        assert sum(p.warm for p in gen.last_run.ports) == result.warm_frames  # received, set apart
        assert all(d.lost == 0 and d.dup == 0 and d.reorder == 0 for d in gen.last_run.dirs)
        # the achieved rate is the trial's own: the warm start's time is not in it
        assert result.actual_tx_rate_fps == pytest.approx(20_000.0, rel=0.03)
        burst = gen.burst(traffic, 3_000)
        assert burst.tx_frames == burst.rx_frames == 3_000 and burst.warm_frames > 0
