"""The live progress line: what it shows, the time left, and log lines printed above it."""

from __future__ import annotations

import io
import logging
import re

import pytest

from vsperf.search.measurer import TrialResult
from vsperf.ui.logsetup import setup_console
from vsperf.ui.progress_live import CLEAR_LINE, LiveProgress, format_duration

LINE_64 = 29_761_904.761904761


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _trial(rate: float, rx_ratio: float) -> TrialResult:
    tx = int(rate * 10)
    return TrialResult("rate", 64, rate, 10.0, tx, int(tx * rx_ratio), rate, LINE_64, purpose="search")


def test_status_line_and_eta() -> None:
    clock = Clock()
    live = LiveProgress(io.StringIO(), [("phy2phy_tput", 2), ("back2back", 2)], clock=clock, width=300)
    live.test_started("phy2phy_tput", "p2p", 2)
    assert live.status_line() == "[1/2] phy2phy_tput (p2p) | elapsed 0s, ETA estimating"
    live.frame_size_started(64)
    clock.now += 30
    live.trial(_trial(LINE_64 / 2, 0.9))
    assert live.status_line() == (
        "[1/2] phy2phy_tput (p2p) | 64 B (1/2) | elapsed 30s, ETA estimating | "
        "trial 1: 14.881 Mfps (50.00 %), loss 10.0000 %"
    )
    clock.now += 30
    live.frame_size_done(64, "throughput_rx_fps", 1.0)
    # one frame size took 60 s; three are left
    assert live.eta_s() == pytest.approx(180.0)
    assert "| elapsed 1m00s, ETA 3m00s |" in live.status_line()
    # a test that fails early skips its remaining sizes: the estimate follows the plan
    live.test_started("back2back", "p2p", 2)
    assert live.sizes_done == 2 and live.eta_s() == pytest.approx(60.0)


def test_long_lines_are_cut_to_the_terminal() -> None:
    live = LiveProgress(io.StringIO(), [("a_very_long_test_name_" * 5, 1)], width=40)
    live.test_started("a_very_long_test_name_" * 5, "p2p", 1)
    assert len(live.status_line()) == 39 and live.status_line().endswith("…")


def test_log_lines_print_above_the_status_line() -> None:
    stream = io.StringIO()
    setup_console("info")
    console = next(h for h in logging.getLogger().handlers if getattr(h, "_vsperf", False))
    assert isinstance(console, logging.StreamHandler)
    original = console.stream
    live = LiveProgress(stream, [("t", 1)], width=200, refresh_s=60)
    with live:
        live.test_started("t", "p2p", 1)
        live.frame_size_started(64)
        live.trial(_trial(1000.0, 1.0))  # on the status line, not as a log line
        logging.getLogger("vsperf.test").warning("something odd")
    assert console.stream is original  # restored
    out = stream.getvalue()
    assert "trial 1: 1.0 kfps" in out  # drawn on the status line
    assert "t 64 B trial 1 (search)" not in out  # the per-trial log line stays off the console
    # the status line is cleared before the log line and drawn again below it
    assert re.search(r"\r\x1b\[K\d\d:\d\d:\d\d WARNING something odd\n\r\x1b\[K\[1/1\] t \(p2p\) \| 64 B", out)
    assert out.endswith(CLEAR_LINE)  # cleared at the end


def test_format_duration() -> None:
    assert [format_duration(s) for s in (0, 59.4, 61, 3600 + 120)] == ["0s", "59s", "1m01s", "1h02m"]
