"""MLRsearch controller on simulated DUTs with known answers."""

from __future__ import annotations

import math
from typing import Any

import pytest
from dutsim import LossyGenerator, SimDut
from settings_util import make_settings

from vsperf.search.config import throughput_config_from_settings
from vsperf.search.goal_config import goal_search_config_from_settings
from vsperf.search.measurer import Measurer
from vsperf.search.mlr import log_width, mlr_throughput, split_load
from vsperf.search.outcome import SearchOutcome
from vsperf.search.throughput import rfc2544_throughput
from vsperf.traffic import Traffic

T64 = Traffic(frame_size_bytes=64)
LINE = T64.line_rate_fps
CAP = 0.4 * LINE
RFC = {"TRAFFICGEN_DURATION": 60}  # final trials of 60 s, width 0.5 %, PDR 0.5 % (the defaults)
WIDTH = 0.005


def mlr(dut: Measurer, settings: dict[str, Any] | None = None) -> SearchOutcome:
    return mlr_throughput(dut, T64, goal_search_config_from_settings(make_settings({**RFC, **(settings or {})}), "mlr"))


def number(out: SearchOutcome, key: str) -> float:
    value = out.metrics[key]
    assert isinstance(value, int | float), key
    return float(value)


def assert_within_width_below(found: float, truth: float) -> None:
    assert truth * (1 - WIDTH) - 1 <= found <= truth + 1e-6, (found, truth)


def test_split_load_lands_on_the_width() -> None:
    load = split_load(100.0, 102.0, WIDTH)
    assert 100.0 < load < 102.0
    assert math.log(102.0 / load) == pytest.approx(2 * log_width(WIDTH))  # upper part: width * 2**k
    assert split_load(100.0, 100.9, WIDTH) == pytest.approx(100.9 * (1 - WIDTH))  # one step: ends either way
    assert split_load(10.0, 20.0, WIDTH, log_scale=False) == 15.0


@pytest.mark.parametrize(
    ("dut", "pdr_truth"),
    [
        (SimDut(CAP), CAP / (1 - 0.005)),  # tail drop: loss 1 - C/x
        (SimDut(CAP, loss="ramp", ramp=0.05), CAP * (1 + 0.005 / 0.05)),  # gradual loss above C
    ],
    ids=["cliff", "gradual"],
)
def test_ndr_and_pdr_within_the_width_never_above(dut: SimDut, pdr_truth: float) -> None:
    out = mlr(dut)
    assert_within_width_below(number(out, "ndr_tx_rate_fps"), CAP)
    assert_within_width_below(number(out, "pdr_tx_rate_fps"), pdr_truth)
    assert number(out, "tx_rate_fps") == number(out, "ndr_tx_rate_fps")  # VSPERF keys: the first goal
    assert number(out, "throughput_rx_fps") == pytest.approx(number(out, "ndr_tx_rate_fps"))
    assert out.details["repetitions"][0]["goals"]["ndr"]["status"] == "regular"
    assert out.anomalies == ()
    # RFC 2544: the answer rests on a full 60 s trial without loss at that rate.
    deciding = [t for t in out.trials if t.requested_rate_fps == number(out, "ndr_tx_rate_fps")]
    assert any(t.duration_s == 60 and t.loss_frames == 0 for t in deciding)


def test_five_times_fewer_trial_seconds_than_two_binary_searches() -> None:
    out = mlr(SimDut(CAP))
    binary = sum(
        rfc2544_throughput(SimDut(CAP), T64, throughput_config_from_settings(make_settings(
            {**RFC, "TRAFFICGEN_LOSSRATE": loss, "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT": 0.5})
        )).details["trial_time_s"]
        for loss in (0.0, 0.5)
    )
    assert out.details["trial_time_s"] * 5 <= binary
    assert out.metrics["search_trial_time_s"] == out.details["trial_time_s"]


def test_noisy_dut_stays_within_its_noise() -> None:
    capacities = [CAP * f for f in (1.01, 0.99, 1.0, 0.995, 1.005, 0.998, 1.002)]
    out = mlr(SimDut(CAP, capacities=capacities))
    ndr = number(out, "ndr_tx_rate_fps")
    assert CAP * 0.99 * (1 - WIDTH) <= ndr <= CAP * 1.01


def test_dut_losing_more_in_long_trials_is_judged_by_the_long_ones() -> None:
    def slower_when_long(capacity: float, duration_s: float) -> float:
        return capacity * (0.97 if duration_s >= 60 else 1.0)

    out = mlr(SimDut(CAP, capacity_for_duration=slower_when_long))
    assert_within_width_below(number(out, "ndr_tx_rate_fps"), 0.97 * CAP)


def test_generator_below_line_rate_is_the_upper_bound_not_dut_loss() -> None:
    dut = SimDut(0.6 * LINE, generator_max_fps=0.3 * LINE)
    out = mlr(dut)
    assert number(out, "ndr_tx_rate_fps") == pytest.approx(0.3 * LINE)
    assert number(out, "pdr_tx_rate_fps") == pytest.approx(0.3 * LINE)
    assert out.details["repetitions"][0]["goals"]["ndr"]["status"] == "max load is a lower bound"
    assert out.details["repetitions"][0]["limited_by_generator"] is True
    text = " ".join(out.anomalies)
    assert "generator under-delivered" in text and "the traffic generator was the limit" in text
    assert max(t.requested_rate_fps for t in out.trials[1:]) <= 0.3 * LINE * (1 + 1e-9)


def test_generator_that_loses_its_own_frames_above_its_limit() -> None:
    out = mlr(LossyGenerator(SimDut(0.6 * LINE), max_fps=0.25 * LINE))
    assert number(out, "ndr_tx_rate_fps") == pytest.approx(0.25 * LINE)


def test_generator_limit_above_the_dut_capacity_changes_nothing() -> None:
    out = mlr(SimDut(CAP, generator_max_fps=0.8 * LINE))
    assert_within_width_below(number(out, "ndr_tx_rate_fps"), CAP)
    assert any("under-delivered" in a for a in out.anomalies)
    assert not any("was the limit" in a for a in out.anomalies)


def test_min_load_upper_bound_reports_zero_with_a_reason() -> None:
    out = mlr(SimDut(1.0))  # forwards one frame per second
    assert number(out, "ndr_tx_rate_fps") == 0.0
    assert out.details["repetitions"][0]["goals"]["ndr"]["status"] == "min load is an upper bound"
    assert any("even the lowest load tried" in a for a in out.anomalies)


def test_explicit_goals_each_get_their_metrics() -> None:
    goals = [
        {"name": name, "loss_percent": loss, "exceed_percent": 0, "final_duration_s": 30, "duration_sum_s": 30,
         "width_percent": 0.5, "initial_duration_s": 1}
        for name, loss in (("zero", 0.0), ("milli", 0.1), ("one", 1.0))
    ]
    out = mlr(SimDut(CAP), {"TRAFFICGEN_MLR_GOALS": goals})
    for name, loss in (("zero", 0.0), ("milli", 0.001), ("one", 0.01)):
        assert_within_width_below(number(out, f"{name}_tx_rate_fps"), CAP / (1 - loss))
    assert "ndr_tx_rate_fps" not in out.metrics
    assert [g["name"] for g in out.details["search"]["goals"]] == ["zero", "milli", "one"]


def test_csit_style_goal_with_exceed_ratio_needs_a_duration_sum() -> None:
    out = mlr(SimDut(CAP), {
        "TRAFFICGEN_DURATION": 1, "TRAFFICGEN_MLR_EXCEED_RATIO_PERCENT": 50, "TRAFFICGEN_MLR_DURATION_SUM_S": 21,
    })
    ndr = number(out, "ndr_tx_rate_fps")
    assert_within_width_below(ndr, CAP)
    assert sum(1 for t in out.trials if t.requested_rate_fps == ndr) >= 11  # 11 of 21 s decide a lower bound


def test_every_trial_is_kept_with_its_goal_and_outcome() -> None:
    seen: list[Any] = []
    out = mlr_throughput(SimDut(CAP), T64, goal_search_config_from_settings(make_settings(RFC), "mlr"), seen.append)
    assert tuple(seen) == out.trials
    notes = out.details["trial_outcomes"]
    assert len(notes) == len(out.trials)
    for note in notes:
        trial = out.trials[note["trial_index"]]
        assert trial.purpose.startswith(note["goal"])
        assert ("ndr" in note["high_loss_for"]) == (trial.loss_frames > 0)
    assert out.trials[0].purpose == "all goals max load"


@pytest.mark.parametrize(
    "settings",
    [
        {"TRAFFICGEN_MLR_EXCEED_RATIO_PERCENT": 50},
        {"TRAFFICGEN_MLR_EXCEED_RATIO_PERCENT": 5},
        {"TRAFFICGEN_MLR_EXCEED_RATIO_PERCENT": 50, "TRAFFICGEN_MLR_DURATION_SUM_S": 120},
        {"TRAFFICGEN_MLR_DURATION_SUM_S": 120},
    ],
    ids=["exceed-50", "exceed-5", "exceed-50-sum-120", "sum-120"],
)
def test_exceed_ratio_and_duration_sum_with_60s_finals_answer_on_a_plain_cliff(settings: dict[str, Any]) -> None:
    # docs/searches.rst's settings for bursty DUTs: a short failure decides nothing there, the
    # duration sum does. The first controller kept probing with short trials into the guard (0 fps).
    out = mlr(SimDut(CAP), settings)
    assert_within_width_below(number(out, "ndr_tx_rate_fps"), CAP)
    assert_within_width_below(number(out, "pdr_tx_rate_fps"), CAP / (1 - 0.005))
    for rep in out.details["repetitions"]:
        assert rep["goals"]["ndr"]["status"] == rep["goals"]["pdr"]["status"] == "regular"
    assert len(out.trials) < 40
    # A lower bound rests on full-length seconds: with exceed 50 % half of the sum must be good.
    goal = out.details["search"]["goals"][0]
    ndr = number(out, "ndr_tx_rate_fps")
    good = sum(t.duration_s for t in out.trials if t.requested_rate_fps == ndr and t.duration_s >= 60 and
               t.loss_frames == 0)
    assert good >= goal["duration_sum_s"] * (1 - goal["exceed_percent"] / 100)


def test_csit_goals_keep_their_preceding_targets_with_smaller_sums() -> None:
    # CSIT's goals (1 s trials, sum 21 s): the chain's smaller sums (1 s, 4.6 s) narrow first, so a
    # load far above the answer is never measured 11 times to be an upper bound of the 21 s sum.
    out = mlr(SimDut(CAP), {"TRAFFICGEN_DURATION": 1, "TRAFFICGEN_MLR_EXCEED_RATIO_PERCENT": 50,
                            "TRAFFICGEN_MLR_DURATION_SUM_S": 21})
    labels = {t.purpose.split(" ", 1)[1] for t in out.trials if t.purpose.startswith(("ndr ", "pdr "))}
    assert {"1 s target 1/3", "1 s (sum 4.58 s) target 2/3", "final"} <= labels
    above = [t for t in out.trials if t.requested_rate_fps > CAP * 1.05]
    assert len(above) <= 3
    assert out.details["trial_time_s"] <= 40  # 11 + 11 s at the two bounds, a few steering trials
