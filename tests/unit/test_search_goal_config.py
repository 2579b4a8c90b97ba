"""Settings of the new searches: defaults, types, validation naming the setting."""

from __future__ import annotations

from typing import Any

import pytest
from settings_util import make_settings

from vsperf.errors import ConfigError
from vsperf.search.config import flag, integer, number, optional_number
from vsperf.search.goal_config import goal_search_config_from_settings, known_throughput_percent, search_algorithm


def raw(values: dict[str, Any]) -> dict[str, Any]:
    """The shipped settings with `values` on top, unchecked (to reach the search config's own checks)."""
    return {**make_settings(), **values}


GOAL = {"name": "x", "loss_percent": 0.1, "exceed_percent": 50, "final_duration_s": 1, "duration_sum_s": 21,
        "width_percent": 0.5, "initial_duration_s": 1}


def test_defaults_come_from_the_shipped_conf() -> None:
    shipped = make_settings()
    assert search_algorithm(shipped) == "binary"
    assert number(shipped, "TRAFFICGEN_PDR_LOSSRATE") == 0.5
    assert number(shipped, "TRAFFICGEN_DURATION") == 30.0  # the core defaults are read too
    assert optional_number(shipped, "TRAFFICGEN_MLR_DURATION_SUM_S") is None
    assert integer(shipped, "TRAFFICGEN_LATENCY_REPETITIONS") == 20
    assert flag(shipped, "TRAFFICGEN_RFC2544_VERIFY") is False
    assert known_throughput_percent(shipped) is None
    assert number(shipped, "TRAFFICGEN_SEARCH_WIDTH_PERCENT") == 0.5



def test_ndr_pdr_goals_from_the_settings() -> None:
    settings = make_settings({"TRAFFICGEN_DURATION": 60, "TRAFFICGEN_LOSSRATE": 0.01})
    cfg = goal_search_config_from_settings(settings, "ndr_pdr")
    ndr, pdr = cfg.goals
    assert (ndr.name, ndr.loss_ratio, pdr.name, pdr.loss_ratio) == ("ndr", 0.0001, "pdr", 0.005)
    assert (ndr.final_duration_s, ndr.duration_sum_s, ndr.initial_duration_s, ndr.width) == (60, 60, 1, 0.005)
    assert cfg.preceding_targets == 0  # ndr_pdr has no stages
    mlr = goal_search_config_from_settings(make_settings(
        {"TRAFFICGEN_MLR_EXCEED_RATIO_PERCENT": 50, "TRAFFICGEN_MLR_DURATION_SUM_S": 120}), "mlr")
    assert (mlr.goals[0].exceed_ratio, mlr.goals[0].duration_sum_s, mlr.preceding_targets) == (0.5, 120, 2)
    # ndr_pdr ignores the exceed ratio: one final trial decides, as in RFC 2544.
    exceeding = make_settings({"TRAFFICGEN_MLR_EXCEED_RATIO_PERCENT": 50})
    assert goal_search_config_from_settings(exceeding, "ndr_pdr").goals[0].exceed_ratio == 0


def test_initial_duration_never_exceeds_the_final_one() -> None:
    cfg = goal_search_config_from_settings(make_settings({"TRAFFICGEN_DURATION": 0.5}), "mlr")
    assert cfg.goals[0].initial_duration_s == 0.5


def test_explicit_goals_for_mlr_only() -> None:
    settings = make_settings({"TRAFFICGEN_MLR_GOALS": [GOAL]})
    assert [g.name for g in goal_search_config_from_settings(settings, "mlr").goals] == ["x"]
    assert [g.name for g in goal_search_config_from_settings(settings, "ndr_pdr").goals] == ["ndr", "pdr"]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"TRAFFICGEN_SEARCH": "golden"}, "TRAFFICGEN_SEARCH must be one of binary, ndr_pdr, mlr"),
        ({"TRAFFICGEN_PDR_LOSSRATE": 0.0, "TRAFFICGEN_LOSSRATE": 0.1}, "TRAFFICGEN_PDR_LOSSRATE"),
        ({"TRAFFICGEN_SEARCH_WIDTH_PERCENT": 0}, "TRAFFICGEN_SEARCH_WIDTH_PERCENT"),
        ({"TRAFFICGEN_MLR_DURATION_SUM_S": 5, "TRAFFICGEN_DURATION": 10}, "TRAFFICGEN_MLR_DURATION_SUM_S"),
        ({"TRAFFICGEN_MLR_PRECEDING_TARGETS": 11}, "TRAFFICGEN_MLR_PRECEDING_TARGETS"),
        ({"TRAFFICGEN_MLR_GOALS": [{"name": "x"}]}, r"TRAFFICGEN_MLR_GOALS\[0\]: missing"),
        ({"TRAFFICGEN_MLR_GOALS": [{**GOAL, "loss_percent": "1"}]}, r"TRAFFICGEN_MLR_GOALS\[0\].loss_percent"),
        ({"TRAFFICGEN_MLR_GOALS": [GOAL, GOAL]}, "distinct names"),
        ({"TRAFFICGEN_RFC2544_MIN_RATE_PERCENT": 100}, "TRAFFICGEN_RFC2544_MIN_RATE_PERCENT"),
        ({"TRAFFICGEN_MLR_EXCEED_RATIO_PERCENT": True}, "must be a number"),
    ],
)
def test_invalid_settings_name_the_setting(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        search_algorithm(raw(settings))
        goal_search_config_from_settings(raw(settings), "mlr")


def test_known_throughput_must_be_a_percentage() -> None:
    assert known_throughput_percent(make_settings({"TRAFFICGEN_THROUGHPUT_PERCENT": 40})) == 40.0
    with pytest.raises(ConfigError, match="TRAFFICGEN_THROUGHPUT_PERCENT"):
        known_throughput_percent(raw({"TRAFFICGEN_THROUGHPUT_PERCENT": 0}))
    with pytest.raises(ConfigError, match="integer"):
        integer({"TRAFFICGEN_LATENCY_REPETITIONS": 2.5}, "TRAFFICGEN_LATENCY_REPETITIONS")
    with pytest.raises(ConfigError, match="true or false"):
        flag({"TRAFFICGEN_RFC2544_VERIFY": "yes"}, "TRAFFICGEN_RFC2544_VERIFY")
