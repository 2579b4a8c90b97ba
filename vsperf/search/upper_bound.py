"""The upper bound every search shares: the highest load it may ask for is what the generator
can actually deliver, never more.

A search starts with a trial at its configured maximum (line rate by default). The measurer
flags a trial whose achieved transmit rate fell short of the request (`under_delivered`); such a
trial measured the DUT at the rate that was really sent (loss is counted against frames sent),
so `LoadCeiling.observe` files it under that rate, and that rate becomes the new maximum for
every later trial. Generator saturation is thus never reported as DUT loss at the requested
rate, and an answer at the ceiling is reported as limited by the generator, not by the DUT.
"""

from __future__ import annotations

from collections.abc import Sequence

from vsperf.errors import TrafficGenError
from vsperf.search.measurer import TrialResult, generator_name
from vsperf.search.trials import percent_of
from vsperf.traffic import Traffic

# Lowest load a search on a relative (logarithmic) scale goes down to, % of line rate: a load
# must be positive, and this is far below what any DUT worth measuring forwards.
MIN_LOAD_PERCENT = 0.001


class LoadCeiling:
    """The maximum load of one search, lowered whenever the generator falls short."""

    def __init__(self, max_load_fps: float, generator: object = None) -> None:
        if not max_load_fps > 0:
            raise ValueError(f"the maximum load must be positive, got {max_load_fps}")
        self.configured_max_fps = max_load_fps
        self.max_load_fps = max_load_fps
        self.generator_ceiling_fps: float | None = None  # lowest rate an under-delivering trial sent
        self._generator = generator

    def observe(self, trial: TrialResult) -> float:
        """The load `trial` measured: the requested rate, or what was sent if less (which then
        caps every later load)."""
        if not trial.under_delivered:
            return trial.requested_rate_fps
        sent = trial.actual_tx_rate_fps
        if sent <= 0 or trial.tx_frames == 0:
            raise TrafficGenError(
                f"generator {generator_name(self._generator)} sent no frame when asked for "
                f"{trial.requested_rate_fps:.0f} fps"
            )
        self.generator_ceiling_fps = sent if self.generator_ceiling_fps is None else min(
            self.generator_ceiling_fps, sent
        )
        self.max_load_fps = min(self.max_load_fps, sent)
        return sent

    def clamp(self, load_fps: float) -> float:
        """`load_fps`, at most the current maximum."""
        return min(load_fps, self.max_load_fps)

    @property
    def limited_by_generator(self) -> bool:
        """True when the generator, not the configuration, set the maximum load."""
        return self.generator_ceiling_fps is not None and self.max_load_fps < self.configured_max_fps


def generator_limit_notes(
    ceiling: LoadCeiling,
    trials: Sequence[TrialResult],
    traffic: Traffic,
    answered_at_max: bool,
) -> list[str]:
    """Plain-language anomalies when the generator under-delivered (empty otherwise).

    `answered_at_max`: some answer of the search is the maximum load itself, so the DUT may
    forward more than what is reported.
    """
    short = [t for t in trials if t.under_delivered]
    if not short:
        return []
    line = traffic.line_rate_fps
    lowest = min(short, key=lambda t: t.actual_tx_rate_fps)
    notes = [
        f"generator under-delivered in {len(short)} of {len(trials)} trials (lowest: sent "
        f"{lowest.actual_tx_rate_fps:.0f} fps = {percent_of(lowest.actual_tx_rate_fps, line):.3f} % of line "
        f"rate when asked for {lowest.requested_rate_fps:.0f} fps); the search's maximum load became what it "
        "sent, and its shortfall is not counted as DUT loss"
    ]
    if answered_at_max and ceiling.limited_by_generator:
        notes.append(
            "the traffic generator was the limit: the answer is the highest rate it could send "
            f"({percent_of(ceiling.max_load_fps, line):.3f} % of line rate), so the DUT may forward more"
        )
    return notes
