"""ndr_pdr: the shared NFVbench-style bisection with short trials, confirmed by final trials."""

from __future__ import annotations

from typing import Any

import pytest
from dutsim import LossyGenerator, SimDut
from settings_util import make_settings

from vsperf.search.config import throughput_config_from_settings
from vsperf.search.goal_config import goal_search_config_from_settings
from vsperf.search.measurer import Measurer
from vsperf.search.ndr_pdr import ndr_pdr_throughput
from vsperf.search.outcome import SearchOutcome
from vsperf.search.throughput import rfc2544_throughput
from vsperf.traffic import Traffic

T64 = Traffic(frame_size_bytes=64)
LINE = T64.line_rate_fps
CAP = 0.4 * LINE
RFC = {"TRAFFICGEN_DURATION": 60}
WIDTH = 0.005


def search(dut: Measurer, settings: dict[str, Any] | None = None) -> SearchOutcome:
    cfg = goal_search_config_from_settings(make_settings({**RFC, **(settings or {})}), "ndr_pdr")
    return ndr_pdr_throughput(dut, T64, cfg)


def number(out: SearchOutcome, key: str) -> float:
    value = out.metrics[key]
    assert isinstance(value, int | float), key
    return float(value)


def within_width_below(found: float, truth: float) -> bool:
    return truth * (1 - WIDTH) - 1 <= found <= truth + 1e-6


@pytest.mark.parametrize(
    ("dut", "pdr_truth"),
    [(SimDut(CAP), CAP / (1 - 0.005)), (SimDut(CAP, loss="ramp", ramp=0.05), CAP * 1.1)],
    ids=["cliff", "gradual"],
)
def test_ndr_and_pdr_within_the_width_never_above(dut: SimDut, pdr_truth: float) -> None:
    out = search(dut)
    assert within_width_below(number(out, "ndr_tx_rate_fps"), CAP)
    assert within_width_below(number(out, "pdr_tx_rate_fps"), pdr_truth)
    assert out.details["search"]["algorithm"] == "ndr_pdr"
    finals = [t for t in out.trials if t.duration_s == 60]
    assert {t.requested_rate_fps for t in finals} >= {number(out, "ndr_tx_rate_fps"), number(out, "pdr_tx_rate_fps")}


def test_bisection_starts_at_the_forwarding_rate_and_serves_both_goals() -> None:
    out = search(SimDut(CAP))
    purposes = [t.purpose for t in out.trials]
    # The first trial, at line rate, and the second, at what the DUT forwarded there, serve both.
    assert purposes[:2] == ["all goals max load", "all goals forwarding-rate guess"]
    assert out.trials[1].requested_rate_fps == pytest.approx(CAP / (1 - 0.0), rel=1e-6)
    assert all(t.duration_s == 1 for t in out.trials if "bisection" in t.purpose)
    # A tail-drop DUT: the trials that narrowed NDR also bound PDR (a width above): few more needed.
    assert sum(p == "pdr bisection" for p in purposes) <= 2
    assert len(out.trials) <= 8


def test_five_times_fewer_trial_seconds_than_two_binary_searches() -> None:
    binary = sum(
        rfc2544_throughput(SimDut(CAP), T64, throughput_config_from_settings(make_settings(
            {**RFC, "TRAFFICGEN_LOSSRATE": loss, "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT": 0.5})
        )).details["trial_time_s"]
        for loss in (0.0, 0.5)
    )
    assert search(SimDut(CAP)).details["trial_time_s"] * 5 <= binary


def test_a_short_pass_that_fails_long_is_never_the_answer() -> None:
    out = search(SimDut(CAP, capacity_for_duration=lambda c, d: c * (0.95 if d >= 60 else 1.0)))
    assert within_width_below(number(out, "ndr_tx_rate_fps"), 0.95 * CAP)


def test_noisy_dut() -> None:
    capacities = [CAP * f for f in (1.01, 0.99, 1.0, 0.995, 1.005)]
    ndr = number(search(SimDut(CAP, capacities=capacities)), "ndr_tx_rate_fps")
    assert CAP * 0.99 * (1 - WIDTH) <= ndr <= CAP * 1.01


@pytest.mark.parametrize(
    "dut",
    [SimDut(0.6 * LINE, generator_max_fps=0.3 * LINE), LossyGenerator(SimDut(0.6 * LINE), max_fps=0.3 * LINE)],
    ids=["short", "short and lossy"],
)
def test_generator_that_cannot_reach_line_rate(dut: Measurer) -> None:
    out = search(dut)
    assert number(out, "ndr_tx_rate_fps") == pytest.approx(0.3 * LINE)
    assert any("the traffic generator was the limit" in a for a in out.anomalies)


def test_final_duration_not_longer_than_the_short_one_needs_no_confirmation() -> None:
    out = search(SimDut(CAP), {"TRAFFICGEN_DURATION": 1})
    assert {t.duration_s for t in out.trials} == {1.0}
    assert within_width_below(number(out, "ndr_tx_rate_fps"), CAP)
