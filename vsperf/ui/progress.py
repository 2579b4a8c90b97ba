"""Progress of a run as log lines: test, frame size, each trial's offered rate and loss."""

from __future__ import annotations

import logging

from vsperf.results.sizes import PacketSize, size_label
from vsperf.search.measurer import TrialResult

log = logging.getLogger("vsperf.ui.progress")


def format_rate(fps: float) -> str:
    """Frames per second in k/M units."""
    if fps >= 1e6:
        return f"{fps / 1e6:.3f} Mfps"
    if fps >= 1e3:
        return f"{fps / 1e3:.1f} kfps"
    return f"{fps:.0f} fps"


class Progress:
    """Reports where a run is; a live terminal display can replace it later."""

    def __init__(self) -> None:
        self.test = ""
        self.frame_size: PacketSize = 0
        self.trials = 0

    def test_started(self, name: str, deployment: str, sizes: int) -> None:
        self.test = name
        log.info("test %s (%s): %d frame size(s)", name, deployment, sizes)

    def frame_size_started(self, size: PacketSize) -> None:
        self.frame_size = size
        self.trials = 0

    def trial(self, trial: TrialResult) -> None:
        self.trials += 1
        pct = 100.0 * trial.requested_rate_fps / trial.line_rate_fps if trial.line_rate_fps else 0.0
        what = f"burst of {trial.tx_frames} frames" if trial.kind == "burst" else (
            f"{format_rate(trial.requested_rate_fps)} ({pct:.2f} % of line rate) for {trial.duration_s:g} s"
        )
        flags = f" [{', '.join(trial.flags)}]" if trial.flags else ""
        log.info(
            "%s %s trial %d (%s): %s -> rx %s, loss %.4f %%%s",
            self.test, size_label(self.frame_size), self.trials, trial.purpose or "search", what,
            format_rate(trial.rx_rate_fps), trial.loss_percent, flags,
        )

    def frame_size_done(self, size: PacketSize, key: str, value: object) -> None:
        shown = f"{value:,.3f}" if isinstance(value, float) else str(value)
        log.info("%s %s done: %s = %s (%d trials)", self.test, size_label(size), key, shown, self.trials)
