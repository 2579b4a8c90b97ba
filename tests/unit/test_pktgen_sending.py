"""Starting pktgen's ports and waiting for them (one thread per pktgen), and the primed start that
times each port from its interface's counter on the generator host; against stand-in pktgens."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any, cast

import pytest

from vsperf.errors import TrafficGenError
from vsperf.trafficgen.pktgen import lua
from vsperf.trafficgen.pktgen.client import LuaClient
from vsperf.trafficgen.pktgen.sending import send_and_wait, send_primed


class Pktgen:
    """A pktgen's Lua client: answers what a trial asks and keeps the requests; its ports
    start sending (its `wire` counts up) at `pktgen.start`."""

    def __init__(self, wire: Wire | None = None, *, cut: bool = False, fail: str = "", wait_s: float = 0.0) -> None:
        self.wire, self.cut, self.fail, self.wait_s = wire, cut, fail, wait_s
        self.calls: list[tuple[str, float]] = []
        self.thread: list[str] = []

    def call(self, code: str, timeout_s: float = 10.0) -> Any:
        self.calls.append((code, timeout_s))
        self.thread.append(threading.current_thread().name)
        if code.startswith("pktgen.start(") and self.wire is not None:
            self.wire.sending = True
        if "isSending" in code:  # lua.wait_done
            if self.fail:
                raise TrafficGenError(self.fail)
            time.sleep(self.wait_s)
            if self.wire is not None:
                self.wire.sending = False
            return {"waited_ms": int(self.wait_s * 1000), "cut": self.cut}
        return None


class Wire:
    """The generator host's counter of interface (None, "g0"): +100 frames per read while sending."""

    def __init__(self) -> None:
        self.sending = False
        self.count = 0

    def tx_packets(self) -> dict[tuple[str | None, str], int]:
        if self.sending:
            self.count += 100
        return {(None, "g0"): self.count}


def _clients(*pktgens: Pktgen) -> Sequence[LuaClient]:
    return cast(Sequence[LuaClient], pktgens)


def test_every_pktgen_is_waited_for_in_a_thread_of_its_own(caplog: pytest.LogCaptureFixture) -> None:
    first, second = Pktgen(wait_s=0.05), Pktgen(cut=True)
    elapsed = send_and_wait(_clients(first, second), {0: [0, 1], 1: [0]}, 3.0, start_first=True)
    assert set(elapsed) == {0, 1} and elapsed[0] >= 0.05
    ((code, timeout_s),) = first.calls
    assert "pktgen.start(ports)" in code and timeout_s == 13.0  # the limit, and time to answer
    assert first.thread[0] != second.thread[0] and first.thread[0].startswith("pktgen-send-")
    assert "pktgen 1 ports [0] still sending after 3.0 s: stopped" in caplog.text  # the second was cut
    send_and_wait(_clients(first), {0: [0]}, 3.0, start_first=False)
    assert "pktgen.start(ports)" not in first.calls[-1][0]  # already started (send_primed)


def test_a_failed_wait_is_raised_in_the_callers_thread() -> None:
    with pytest.raises(TrafficGenError, match=r"^pktgen 1 at 127\.0\.0\.1:22022 did not answer$"):
        send_and_wait(_clients(Pktgen(), Pktgen(fail="pktgen 1 at 127.0.0.1:22022 did not answer")),
                      {0: [0], 1: [0]}, 3.0, start_first=True)


def test_a_primed_port_is_raised_to_its_rate_once_its_first_burst_left_and_timed_from_then() -> None:
    wire = Wire()
    pktgen = Pktgen(wire, wait_s=0.05)
    clients = _clients(pktgen)
    (window,) = send_primed(clients, {0: [0]}, [(None, "g0")], [(clients[0], 0)], [12.5], 3.0, 5.0,
                            counters=wire)
    codes = [code for code, _ in pktgen.calls]
    assert codes[:2] == [lua.start([0]), lua.set_rate(0, 12.5)]
    assert "isSending" in codes[2] and "pktgen.start(ports)" not in codes[2]  # started already, slow
    assert window is not None and window.frames > 0 and window.seconds > 0  # from the interface's counter
