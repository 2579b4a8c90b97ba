"""When pktgen really sent: transmit windows from an interface's counter, and the clock that samples
the generator host's counters while a trial runs."""

from __future__ import annotations

import time

import pytest

from vsperf.errors import TrafficGenError
from vsperf.trafficgen.pktgen.txclock import Sample, TxClock, transmit_window


def _series(points: list[tuple[float, int]]) -> list[Sample]:
    return [Sample(t, n) for t, n in points]


def test_transmit_window_over_the_whole_transmission() -> None:
    # counter moves between 0.1 and 0.2 (start ~0.15) and last changes between 1.1 and 1.2 (~1.15)
    samples = _series([(0.0, 100), (0.1, 100), (0.2, 150), (0.6, 600), (1.1, 1050), (1.2, 1100), (1.3, 1100)])
    window = transmit_window(samples)
    assert window is not None
    assert window.frames == 1000
    assert window.seconds == pytest.approx(1.0)
    assert window.rate_fps == pytest.approx(1000)


def test_transmit_window_from_a_mark_skips_the_irregular_start() -> None:
    # a first burst of 64 at ~0.05, the rate from the mark at 0.2, the last frame at ~1.2
    samples = _series([(0.0, 0), (0.1, 64), (0.2, 64), (0.3, 164), (1.15, 1014), (1.25, 1064), (1.35, 1064)])
    window = transmit_window(samples, since_s=0.2)
    assert window is not None
    assert window.frames == 1000
    assert window.seconds == pytest.approx(1.0)


def test_transmit_window_when_nothing_was_sent() -> None:
    assert transmit_window(_series([(0.0, 5), (0.1, 5)])) is None
    assert transmit_window(_series([(0.0, 5)])) is None


class StepCounters:
    """A host whose port eth1 (in namespace ns0) sends 100 frames per read after the second read."""

    def __init__(self) -> None:
        self.reads = 0

    def tx_packets(self) -> dict[tuple[str | None, str], int]:
        self.reads += 1
        return {("ns0", "eth1"): max(0, self.reads - 2) * 100, (None, "eth2"): 7}


def test_the_transmit_clock_times_the_hosts_counters() -> None:
    clock = TxClock([("ns0", "eth1"), (None, "eth2")], StepCounters(), period_s=0.001)
    clock.start()
    assert clock.wait_first_frame(0, 5.0)
    assert not clock.wait_first_frame(1, 0.01)
    time.sleep(0.05)
    sent, idle = clock.stop()
    assert sent is not None and sent.frames > 0 and sent.seconds > 0
    assert idle is None  # eth2 sent nothing
    times = [s.t_s for s in clock.samples[0]]
    assert times == [s.t_s for s in clock.samples[1]]  # one request reads both


class LostCounters:
    def tx_packets(self) -> dict[tuple[str | None, str], int]:
        raise TrafficGenError("host gen: the transmit counter reader is closed")


def test_a_counter_that_cannot_be_read_fails_the_trial() -> None:
    clock = TxClock([(None, "eth1")], LostCounters(), period_s=0.001)
    clock.start()
    with pytest.raises(TrafficGenError, match=r"^cannot read the transmit counters of \[\(None, 'eth1'\)\]: "
                                              r"host gen: the transmit counter reader is closed$"):
        clock.stop()
