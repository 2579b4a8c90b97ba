"""The common upper bound: what the generator delivers caps every later load."""

from __future__ import annotations

import pytest
from dutsim import SimDut

from vsperf.errors import TrafficGenError
from vsperf.search.measurer import TrialResult, delivery_flags
from vsperf.search.upper_bound import LoadCeiling, generator_limit_notes
from vsperf.traffic import Traffic

T64 = Traffic(frame_size_bytes=64)
LINE = T64.line_rate_fps


def sent(requested: float, actual: float, tx: int = 1000) -> TrialResult:
    return TrialResult(kind="rate", frame_size_bytes=64, requested_rate_fps=requested, duration_s=1.0,
                       tx_frames=tx, rx_frames=tx, actual_tx_rate_fps=actual, line_rate_fps=LINE,
                       flags=delivery_flags(requested, actual, tx, tx))


def test_a_delivered_trial_measured_what_was_asked() -> None:
    ceiling = LoadCeiling(LINE)
    assert ceiling.observe(sent(0.5 * LINE, 0.499 * LINE)) == 0.5 * LINE  # within the 0.5 % tolerance
    assert ceiling.max_load_fps == LINE and not ceiling.limited_by_generator


def test_an_under_delivered_trial_lowers_the_maximum_to_what_was_sent() -> None:
    ceiling = LoadCeiling(LINE)
    assert ceiling.observe(sent(LINE, 0.3 * LINE)) == 0.3 * LINE
    assert ceiling.max_load_fps == 0.3 * LINE and ceiling.limited_by_generator
    assert ceiling.clamp(0.9 * LINE) == 0.3 * LINE and ceiling.clamp(0.1 * LINE) == 0.1 * LINE
    ceiling.observe(sent(0.3 * LINE, 0.28 * LINE))
    assert ceiling.generator_ceiling_fps == 0.28 * LINE


def test_a_generator_that_sends_nothing_is_an_error() -> None:
    with pytest.raises(TrafficGenError, match="sent no frame"):
        LoadCeiling(LINE, SimDut(1.0)).observe(sent(LINE, 0.0, tx=0))
    with pytest.raises(ValueError, match="positive"):
        LoadCeiling(0.0)


def test_notes_say_what_the_generator_did() -> None:
    ceiling = LoadCeiling(LINE)
    short = sent(LINE, 0.3 * LINE)
    ceiling.observe(short)
    assert generator_limit_notes(ceiling, [sent(0.1 * LINE, 0.1 * LINE)], T64, True) == []
    notes = generator_limit_notes(ceiling, [short], T64, answered_at_max=True)
    assert "under-delivered in 1 of 1 trials" in notes[0] and "30.000 %" in notes[0]
    assert "the traffic generator was the limit" in notes[1]
    assert len(generator_limit_notes(ceiling, [short], T64, answered_at_max=False)) == 1
