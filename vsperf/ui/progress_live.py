"""A live progress line on a terminal: current test, frame size, last trial, elapsed, ETA.

`LiveProgress` is a `Progress` (every event still goes to the log, so overall.log is the same)
that also keeps one status line at the bottom of the terminal, redrawn on every event and
every second. Log lines printed meanwhile appear above it. The per-trial log lines are left off
the console (the status line shows the last trial); overall.log keeps them. When the output is
not a terminal, the CLI uses the plain `Progress` (log lines only).

The estimate of the time left: the average time per frame size measured so far in this run,
times the frame sizes still to run (of the current test and the tests after it).
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from typing import TextIO

from vsperf.results.sizes import PacketSize, size_label
from vsperf.search.measurer import TrialResult
from vsperf.ui.progress import Progress, format_rate

REFRESH_S = 1.0
CLEAR_LINE = "\r\x1b[K"


def format_duration(seconds: float) -> str:
    """e.g. 45s, 3m05s, 2h01m."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def _is_trial_line(record: logging.LogRecord) -> bool:
    return record.name == "vsperf.ui.progress" and record.funcName == "trial"


class _NoTrialLines(logging.Filter):
    """Keeps the per-trial lines off the console while the status line shows the last trial."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not _is_trial_line(record)


class _ConsoleProxy:
    """The console handler's stream while the status line is shown: each log line clears the
    status line first and redraws it after."""

    def __init__(self, live: LiveProgress) -> None:
        self.live = live

    def write(self, text: str) -> int:
        return self.live.write_above(text)

    def flush(self) -> None:
        self.live.stream.flush()


class LiveProgress(Progress):
    """Progress with a live status line on a terminal (use as a context manager around the run)."""

    def __init__(
        self,
        stream: TextIO,
        plan: Sequence[tuple[str, int]],
        *,
        clock: Callable[[], float] = time.monotonic,
        width: int | None = None,
        refresh_s: float = REFRESH_S,
    ) -> None:
        """`plan`: (test name, number of frame sizes) of every test, in run order."""
        super().__init__()
        self.stream = stream
        self.plan = list(plan)
        self.clock = clock
        self.width = width
        self.refresh_s = refresh_s
        self.started_s = clock()
        self.test_number = 0
        self.deployment = ""
        self.size_number = 0
        self.sizes_done = 0  # frame sizes finished (or skipped by a failed test) in the whole run
        self.work_s = 0.0  # time until the last frame size finished
        self.last_trial: TrialResult | None = None
        self._lock = threading.RLock()
        self._shown = False
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._console: logging.StreamHandler[TextIO] | None = None
        self._console_stream: TextIO | None = None
        self._filter = _NoTrialLines()

    # -- the status line ---------------------------------------------------------------------
    @property
    def total_sizes(self) -> int:
        return sum(n for _, n in self.plan)

    def eta_s(self) -> float | None:
        """Seconds left at the average pace so far (None before the first frame size finished)."""
        finished = self.sizes_done
        if finished <= 0 or self.work_s <= 0:
            return None
        return self.work_s / finished * max(0, self.total_sizes - finished)

    def status_line(self) -> str:
        """The status line as it is drawn now (without control characters)."""
        parts = [f"[{self.test_number}/{len(self.plan)}] {self.test or 'starting'}"
                 + (f" ({self.deployment})" if self.deployment else "")]
        sizes = self.plan[self.test_number - 1][1] if 0 < self.test_number <= len(self.plan) else 0
        if self.frame_size:
            parts.append(f"{size_label(self.frame_size)} ({self.size_number}/{sizes})")
        eta = self.eta_s()
        # Time before the trial: on a narrow terminal the line is cut at its end.
        parts.append(f"elapsed {format_duration(self.clock() - self.started_s)}, "
                     + (f"ETA {format_duration(eta)}" if eta is not None else "ETA estimating"))
        trial = self.last_trial
        if trial is not None:
            offered = f"burst {trial.tx_frames} frames" if trial.kind == "burst" else (
                f"{format_rate(trial.requested_rate_fps)}"
                + (f" ({100.0 * trial.requested_rate_fps / trial.line_rate_fps:.2f} %)" if trial.line_rate_fps else "")
            )
            flags = f" [{', '.join(trial.flags)}]" if trial.flags else ""
            parts.append(f"trial {self.trials}: {offered}, loss {trial.loss_percent:.4f} %{flags}")
        line = " | ".join(parts)
        width = self.width or shutil.get_terminal_size((100, 20)).columns
        return line if len(line) < width else line[: max(1, width - 2)] + "…"

    def _draw(self) -> None:
        with self._lock:
            self.stream.write(CLEAR_LINE + self.status_line())
            self.stream.flush()
            self._shown = True

    def _clear(self) -> None:
        if self._shown:
            self.stream.write(CLEAR_LINE)
            self._shown = False

    def write_above(self, text: str) -> int:
        """Print `text` (a log line) above the status line."""
        with self._lock:
            self._clear()
            written = self.stream.write(text)
            if text.endswith("\n") and self._ticker is not None:
                self._draw()
            return written

    # -- Progress events -----------------------------------------------------------------------
    def test_started(self, name: str, deployment: str, sizes: int) -> None:
        with self._lock:
            self.test_number += 1
            # A test that failed before all its sizes ran leaves nothing to wait for.
            self.sizes_done = sum(n for _, n in self.plan[: self.test_number - 1])
            self.deployment, self.size_number, self.frame_size, self.last_trial = deployment, 0, 0, None
            super().test_started(name, deployment, sizes)
            self._draw()

    def frame_size_started(self, size: PacketSize) -> None:
        with self._lock:
            self.size_number += 1
            self.last_trial = None
            super().frame_size_started(size)
            self._draw()

    def trial(self, trial: TrialResult) -> None:
        with self._lock:
            self.last_trial = trial
            super().trial(trial)
            self._draw()

    def frame_size_done(self, size: PacketSize, key: str, value: object) -> None:
        with self._lock:
            self.sizes_done += 1
            self.work_s = self.clock() - self.started_s
            super().frame_size_done(size, key, value)
            self._draw()

    # -- terminal handling ---------------------------------------------------------------------
    def _find_console(self) -> logging.StreamHandler[TextIO] | None:
        for handler in logging.getLogger().handlers:
            if getattr(handler, "_vsperf", False) and isinstance(handler, logging.StreamHandler):
                return handler
        return None

    def __enter__(self) -> LiveProgress:
        self.started_s = self.clock()
        self._console = self._find_console()
        if self._console is not None:
            self._console_stream = self._console.setStream(_ConsoleProxy(self))  # type: ignore[arg-type]
            self._console.addFilter(self._filter)
        self._stop.clear()
        self._ticker = threading.Thread(target=self._tick, name="vsperf-progress", daemon=True)
        self._ticker.start()
        self._draw()
        return self

    def _tick(self) -> None:
        while not self._stop.wait(self.refresh_s):
            self._draw()

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        with self._lock:
            self._clear()
            self.stream.flush()
        if self._console is not None:
            self._console.removeFilter(self._filter)
            if self._console_stream is not None:
                self._console.setStream(self._console_stream)
            self._console = self._console_stream = None
