"""Running goal searches: metrics, repetitions, learning, verification, the trial guard."""

from __future__ import annotations

import pytest
from dutsim import SimDut
from settings_util import make_settings

from vsperf.search import goal_search
from vsperf.search.goal_config import GoalSearchConfig, goal_search_config_from_settings
from vsperf.search.goal_search import run_goal_search
from vsperf.search.mlr import mlr_search_once
from vsperf.search.mlr_goals import SearchGoal
from vsperf.traffic import Traffic

T64 = Traffic(frame_size_bytes=64)
LINE = T64.line_rate_fps
CAP = 0.4 * LINE
GOAL_KEYS = ("tx_rate_fps", "tx_rate_percent", "throughput_rx_fps", "throughput_rx_percent",
             "throughput_rx_mbps", "upper_bound_fps", "frame_loss_percent")


def cfg(**settings: object) -> GoalSearchConfig:
    return goal_search_config_from_settings(make_settings({"TRAFFICGEN_DURATION": 10, **settings}), "mlr")


def test_metrics_of_every_goal_and_vsperf_keys() -> None:
    out = run_goal_search(SimDut(CAP), T64, cfg(), "mlr", mlr_search_once)
    for goal in ("ndr", "pdr"):
        for key in GOAL_KEYS:
            assert isinstance(out.metrics[f"{goal}_{key}"], float), (goal, key)
    assert out.metrics["type"] == "rfc2544_throughput" and out.metrics["packet_size"] == 64
    assert out.metrics["tx_rate_percent"] == pytest.approx(out.metrics["ndr_tx_rate_percent"])
    assert isinstance(out.metrics["avg_latency_ns"], float)  # from the lower bound's trials
    assert out.details["trial_count"] == len(out.trials)


def test_repetitions_average_and_give_min_max() -> None:
    capacities = [CAP * 1.01] * 40 + [CAP * 0.99] * 40
    out = run_goal_search(SimDut(CAP, capacities=capacities), T64, cfg(TRAFFICGEN_RFC2544_TESTS=2), "mlr",
                          mlr_search_once)
    assert len(out.details["repetitions"]) == 2
    low, high = out.metrics["ndr_throughput_rx_fps_min"], out.metrics["ndr_throughput_rx_fps_max"]
    assert isinstance(low, float) and isinstance(high, float) and low <= high
    assert any(t.purpose.startswith("repetition 2: ") for t in out.trials)


def test_learning_trial_first_and_verification_reported() -> None:
    out = run_goal_search(SimDut(CAP), T64, cfg(TRAFFICGEN_LEARNING_DURATION_S=5, TRAFFICGEN_RFC2544_VERIFY=True),
                          "mlr", mlr_search_once)
    assert out.trials[0].purpose == "learning" and out.trials[0].duration_s == 5
    assert [t.purpose for t in out.trials[-2:]] == ["ndr verification", "pdr verification"]
    assert out.details["verification"]["ndr"]["passed"] is True
    assert out.anomalies == ()


def test_failed_verification_is_an_anomaly_not_a_new_answer() -> None:
    dut = SimDut(CAP, capacity_for_duration=lambda c, d: c * (0.9 if d >= 60 else 1.0))
    out = run_goal_search(dut, T64, cfg(TRAFFICGEN_RFC2544_VERIFY=True), "mlr", mlr_search_once)
    assert out.details["verification"]["ndr"]["passed"] is False
    assert any(a.startswith("ndr not confirmed") for a in out.anomalies)


def test_trial_guard_stops_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(goal_search, "MAX_TRIALS_PER_SEARCH", 4)
    out = run_goal_search(SimDut(CAP), T64, cfg(), "mlr", mlr_search_once)
    assert len(out.trials) == 4
    assert any("the search stopped after 4 trials" in a for a in out.anomalies)
    assert out.failure == "mlr stopped at its guard of 4 trials before ndr and pdr reached their width"


def test_goal_names_must_differ() -> None:
    goal = SearchGoal("a", loss_ratio=0.0, exceed_ratio=0.0, final_duration_s=1, duration_sum_s=1, width=0.005,
                      initial_duration_s=1)
    with pytest.raises(Exception, match="distinct"):
        GoalSearchConfig(goals=(goal, goal), min_rate_percent=0.0, max_rate_percent=100.0, preceding_targets=0,
                         repetitions=1, learning_duration_s=0.0, verify=False, verify_duration_s=60.0)
