"""When pktgen really sent: the transmit time of a port, read from its interface's counter.

pktgen's Lua API has no clock and no live transmit counter, and every `pktgen.start` first
rebuilds every mbuf of the port's pool in the sending lcore (pktgen_setup_packets), which
took 50-700 ms here: timing the start request would count that as transmit time. The kernel
counts every frame an interface sends, so a thread samples that counter while the trial runs
(read on the generator host on request: `vsperf.trafficgen.pktgen.counters.HostCounters`, each
sample timed at the middle of its request): the first and the last change bound the
transmission to within one sample period.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from vsperf.errors import TrafficGenError

SAMPLE_PERIOD_S = 0.002


@dataclass(frozen=True)
class Sample:
    t_s: float  # time.monotonic()
    tx_packets: int


@dataclass(frozen=True)
class Window:
    """Frames an interface sent over a span of its transmission."""

    frames: int
    seconds: float

    @property
    def rate_fps(self) -> float:
        return self.frames / self.seconds if self.seconds > 0 else 0.0


def _change_time(samples: Sequence[Sample], index: int) -> float:
    """When the counter changed between sample index-1 and index: halfway (error <= period/2)."""
    return (samples[index - 1].t_s + samples[index].t_s) / 2


def transmit_window(samples: Sequence[Sample], since_s: float | None = None) -> Window | None:
    """The frames sent and the time from `since_s` (a sample time; None: the first change) to
    the last change of the counter; None when nothing was sent in that span.

    With `since_s`, the frames counted are those after the first sample at or after it, and
    the span starts at that sample: the steady part of a transmission whose start was
    irregular (see the backend: a first burst, then the rate)."""
    if len(samples) < 2:
        return None
    final = samples[-1].tx_packets
    last = next(i for i, s in enumerate(samples) if s.tx_packets == final)
    if since_s is not None:
        anchor = next((i for i, s in enumerate(samples) if s.t_s >= since_s), None)
        if anchor is not None and last > anchor and final > samples[anchor].tx_packets:
            return Window(final - samples[anchor].tx_packets, _change_time(samples, last) - samples[anchor].t_s)
    base = samples[0].tx_packets
    if final == base:
        return None
    first = next(i for i, s in enumerate(samples) if s.tx_packets != base)
    seconds = max(_change_time(samples, last) - _change_time(samples, first), samples[1].t_s - samples[0].t_s)
    return Window(final - base, seconds)


class Counters(Protocol):
    """Transmit counters of interfaces of the generator host, read together."""

    def tx_packets(self) -> dict[tuple[str | None, str], int]:
        """(namespace, interface) -> frames it sent."""
        ...


class TxClock:
    """Samples the transmit counters of some (namespace, interface) from `start()` to `stop()`,
    through `counters` (see the module docstring)."""

    def __init__(self, interfaces: Sequence[tuple[str | None, str]], counters: Counters,
                 period_s: float = SAMPLE_PERIOD_S) -> None:
        self.interfaces = list(interfaces)
        self.period_s = period_s
        self.counters = counters
        self.samples: list[list[Sample]] = [[] for _ in self.interfaces]
        self._ready = threading.Event()
        self._done = threading.Event()
        self._error: BaseException | None = None
        self._moved = [threading.Event() for _ in self.interfaces]
        self._marks: list[float | None] = [None for _ in self.interfaces]
        self._thread = threading.Thread(target=self._run, name="pktgen-txclock", daemon=True)

    def _run(self) -> None:
        try:
            while True:
                done = self._done.is_set()  # read before the sample: the last one follows stop()
                for index, (sample, series) in enumerate(zip(self._sample(), self.samples, strict=True)):
                    series.append(sample)
                    if series[-1].tx_packets != series[0].tx_packets:
                        self._moved[index].set()
                self._ready.set()
                if done:
                    break
                self._done.wait(self.period_s)
        except BaseException as exc:  # reported by stop()
            self._error = exc
        finally:
            self._ready.set()

    def _sample(self) -> list[Sample]:
        before = time.monotonic()
        counts = self.counters.tx_packets()
        at = (before + time.monotonic()) / 2  # the host read them during the request
        return [Sample(at, counts[interface]) for interface in self.interfaces]

    def start(self) -> None:
        """Start sampling; returns once every counter has been read once."""
        self._thread.start()
        self._ready.wait()

    def wait_first_frame(self, index: int, timeout_s: float) -> bool:
        """Wait until interface `index` has sent its first frame since `start()`."""
        return self._moved[index].wait(timeout_s)

    def mark(self, index: int) -> None:
        """Time from which interface `index`'s steady transmission is measured (see
        transmit_window)."""
        self._marks[index] = time.monotonic()

    def stop(self) -> list[Window | None]:
        """Stop sampling (after the transmission ended); each interface's transmit window."""
        self._done.set()
        self._thread.join()
        if self._error is not None:
            raise TrafficGenError(f"cannot read the transmit counters of {self.interfaces}: {self._error}")
        return [transmit_window(series, mark) for series, mark in zip(self.samples, self._marks, strict=True)]
