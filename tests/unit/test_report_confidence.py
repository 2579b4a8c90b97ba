"""How sure an answer is, next to the number in the report's metrics table."""

from __future__ import annotations

from vsperf.report.confidence import confidence_note, with_confidence

METRICS = {
    "ndr_tx_rate_fps": 1000.0,
    "ndr_full_trials": 1,
    "ndr_rx_spread_percent": 0.0,
    "ndr_failed_confirmations": 2,
    "pdr_tx_rate_fps": 1100.0,
    "pdr_full_trials": 3,
    "pdr_rx_spread_percent": 0.25,
    "pdr_failed_confirmations": 0,
    "tx_rate_fps": 1000.0,
}


def test_the_note_says_trials_spread_and_failed_confirmations() -> None:
    assert confidence_note(METRICS, "ndr_tx_rate_fps") == (
        "(1 full-length trial, forwarding-rate spread 0.000 %, 2 failed confirmations, searched below)")
    assert confidence_note(METRICS, "pdr_tx_rate_fps") == "(3 full-length trials, forwarding-rate spread 0.250 %)"


def test_only_goal_rates_of_goal_searches_get_a_note() -> None:
    assert confidence_note(METRICS, "tx_rate_fps") is None  # no goal prefix
    assert confidence_note(METRICS, "ndr_full_trials") is None
    assert confidence_note({"ndr_tx_rate_fps": 5.0}, "ndr_tx_rate_fps") is None  # an older result
    assert with_confidence(METRICS, "tx_rate_fps") == 1000.0
    assert with_confidence(METRICS, "pdr_tx_rate_fps").startswith("1100.000 (3 full-length trials")
