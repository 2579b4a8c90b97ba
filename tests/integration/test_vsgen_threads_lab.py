"""vsgen with two transmit threads per direction on the wire (a veth pair, two queues each; root),
with XDP live frames, AF_XDP sockets and AF_PACKET.

Checks what the threads must not change: exact frame counts (a count split over the threads adds
up), no loss at a modest rate, every stream's sequence in order (each stream is sent by one
thread), the streams spread over both threads, and nothing left behind (the fixtures of
test_vsgen_wire.py check the engine process, the XDP programs and the control FIFO).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_vsgen_wire import Net, Pair, fresh_net, running, wire_pair

from vsperf.errors import TrafficGenError
from vsperf.traffic import Traffic

pytestmark = [pytest.mark.root]

STREAMS = 6
QUEUES = 2


@pytest.fixture
def net() -> Iterator[Net]:
    yield from fresh_net()


@pytest.fixture
def pair(net: Net, tmp_path: Path) -> Iterator[Pair]:
    """The wire with two rx/tx queues per veth: each transmit CPU feeds its own receive queue."""
    yield from wire_pair(net, tmp_path, queues=QUEUES)


@pytest.mark.parametrize("path", ["xdp", "afxdp", "packet"])
def test_two_threads_send_exact_counts_without_loss(pair: Pair, path: str) -> None:
    with running(pair.host, VSGEN_TX_THREADS=2, VSGEN_CPUS=[0, 1], VSGEN_PATH=path) as gen:
        gen.start(pair.ports)
        result = gen.trial(Traffic(bidir=False, multistream=STREAMS), 100_000.0, 1.0)
        # A paced trial ends at its planned end: on a loaded machine the threads may not get the
        # CPU to send every frame in time, and the trial then says so (never a silent short count).
        sent = result.tx_frames
        if result.under_delivered:
            assert sent < 100_000 or result.actual_tx_rate_fps < 100_000 * 0.995
        else:
            assert sent == 100_000 and abs(result.actual_tx_rate_fps / 100_000.0 - 1) <= 0.03
        assert result.rx_frames == sent
        assert gen.last_run is not None
        (d,) = gen.last_run.dirs
        assert d.threads == 2 and d.path == {"xdp": "xdp-live", "afxdp": "af_xdp", "packet": "af_packet"}[path]
        assert (d.lost, d.dup, d.reorder, d.excess) == (0, 0, 0, 0)
        # both threads sent; every stream in order (no stream lost or reordered a frame)
        assert sum(s.tx for s in d.detail) == sent and all(s.tx > 0 for s in d.detail)
        if sent == 100_000:  # each stream got its exact share of the count
            assert [s.tx for s in d.detail] == [100_000 // STREAMS + (s < 100_000 % STREAMS) for s in range(STREAMS)]
        assert all(s.rx == s.tx and s.reorder == 0 for s in d.detail)
        (port,) = [p for p in gen.last_run.ports if p.port == 1]
        assert port.frames == sent and port.late == 0 and port.foreign == 0
        # the latency histogram has a slice per receive queue: summed, it counts every frame once
        assert sum(count for _, count in port.latency.hist) == sent


def test_an_odd_burst_over_two_threads_both_ways(pair: Pair) -> None:
    """A count that does not divide: the threads' shares add up to it exactly, in each direction."""
    with running(pair.host, VSGEN_TX_THREADS=2, VSGEN_CPUS=[0, 1]) as gen:
        gen.start(pair.ports)
        result = gen.burst(Traffic(bidir=True, multistream=STREAMS - 1), 200_003)
        assert result.tx_frames == 200_003
        assert gen.last_run is not None
        assert [d.tx_frames for d in gen.last_run.dirs] == [100_002, 100_001]
        for d in gen.last_run.dirs:
            assert d.threads == 2 and d.dup == 0 and d.excess == 0
            # at full speed a busy machine may drop frames (real loss, counted): never more than sent
            assert d.rx_frames + d.lost == d.tx_frames


def test_afxdp_needs_a_queue_per_thread(pair: Pair) -> None:
    """Three AF_XDP threads on two queues: one clear error, and the engine is still usable."""
    with running(pair.host, VSGEN_TX_THREADS=3, VSGEN_PATH="afxdp") as gen:
        gen.start(pair.ports)
        with pytest.raises(TrafficGenError, match="as many queues as transmit threads"):
            gen.burst(Traffic(bidir=False, multistream=STREAMS), 1000)
        result = gen.burst(Traffic(bidir=False, multistream=2), 1000)  # two streams: two threads
        assert (result.tx_frames, result.rx_frames) == (1000, 1000)


def test_one_stream_is_one_thread(pair: Pair) -> None:
    """Threads never share a stream: with one stream the second thread has nothing to send."""
    with running(pair.host, VSGEN_TX_THREADS=2) as gen:
        gen.start(pair.ports)
        result = gen.trial(Traffic(bidir=False), 50_000.0, 0.5)
        assert (result.tx_frames, result.rx_frames) == (25_000, 25_000)
        assert gen.last_run is not None and gen.last_run.dirs[0].threads == 1
