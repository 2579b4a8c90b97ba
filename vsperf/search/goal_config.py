"""The throughput algorithm and the goal searches' (ndr_pdr, mlr) configuration, from settings.

Like `vsperf.search.config`: frozen dataclasses that check themselves, built by
`*_from_settings` from complete settings (conf/05_search.yaml sets the defaults).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from vsperf.config.schema_search import THROUGHPUT_ALGORITHMS, ThroughputAlgorithm
from vsperf.errors import ConfigError
from vsperf.search.config import check, flag, integer, number, optional_number, setting
from vsperf.search.mlr_goals import SearchGoal

GOAL_KEYS = (
    "name",
    "loss_percent",
    "exceed_percent",
    "final_duration_s",
    "duration_sum_s",
    "width_percent",
    "initial_duration_s",
)


def search_algorithm(settings: Mapping[str, Any]) -> ThroughputAlgorithm:
    """TRAFFICGEN_SEARCH: the throughput algorithm."""
    value = setting(settings, "TRAFFICGEN_SEARCH")
    for algorithm in THROUGHPUT_ALGORITHMS:
        if value == algorithm:
            return algorithm
    raise ConfigError(f"TRAFFICGEN_SEARCH must be one of {', '.join(THROUGHPUT_ALGORITHMS)}, got {value!r}")


@dataclass(frozen=True)
class GoalSearchConfig:
    """A search for several goals at once (ndr_pdr or mlr)."""

    goals: tuple[SearchGoal, ...]  # the first one fills VSPERF's throughput keys
    min_rate_percent: float  # lowest load tried, % of line rate (raised to a tiny positive floor)
    max_rate_percent: float  # first and highest load, % of line rate
    preceding_targets: int  # mlr: coarser targets before each goal's final one
    repetitions: int  # whole searches; metrics are their averages
    learning_duration_s: float  # learning trial before the search (0: none)
    verify: bool  # one more trial of verify_duration_s at each goal's answer
    verify_duration_s: float = 60.0  # s, the verification trial

    def __post_init__(self) -> None:
        names = [g.name for g in self.goals]
        check(bool(names), "TRAFFICGEN_MLR_GOALS", names, "a non-empty list of goals")
        check(len(set(names)) == len(names), "TRAFFICGEN_MLR_GOALS", names, "goals with distinct names")
        check(0 < self.max_rate_percent <= 100, "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT", self.max_rate_percent,
              "in (0, 100]")
        check(0 <= self.min_rate_percent < self.max_rate_percent, "TRAFFICGEN_RFC2544_MIN_RATE_PERCENT",
              self.min_rate_percent, f"in [0, {self.max_rate_percent:g})")
        check(0 <= self.preceding_targets <= 10, "TRAFFICGEN_MLR_PRECEDING_TARGETS", self.preceding_targets,
              "in [0, 10]")
        check(self.repetitions >= 1, "TRAFFICGEN_RFC2544_TESTS", self.repetitions, ">= 1")
        check(self.learning_duration_s >= 0, "TRAFFICGEN_LEARNING_DURATION_S", self.learning_duration_s, ">= 0")
        check(self.verify_duration_s > 0, "TRAFFICGEN_RFC2544_VERIFY_DURATION_S", self.verify_duration_s, "> 0")


def _goal_from_mapping(item: Any, index: int) -> SearchGoal:
    where = f"TRAFFICGEN_MLR_GOALS[{index}]"
    if not isinstance(item, Mapping):
        raise ConfigError(f"{where} must be a mapping with keys {', '.join(GOAL_KEYS)}, got {item!r}")
    missing = [k for k in GOAL_KEYS if k not in item]
    unknown = [str(k) for k in item if k not in GOAL_KEYS]
    if missing or unknown:
        raise ConfigError(f"{where}: missing {missing or 'nothing'}, unknown {unknown or 'nothing'}")
    values: dict[str, float] = {}
    for key in GOAL_KEYS[1:]:
        value = item[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{where}.{key} must be a number, got {value!r}")
        values[key] = float(value)
    return SearchGoal(
        name=str(item["name"]),
        loss_ratio=values["loss_percent"] / 100.0,
        exceed_ratio=values["exceed_percent"] / 100.0,
        final_duration_s=values["final_duration_s"],
        duration_sum_s=values["duration_sum_s"],
        width=values["width_percent"] / 100.0,
        initial_duration_s=values["initial_duration_s"],
    )


def ndr_pdr_goals(settings: Mapping[str, Any], *, with_exceed: bool) -> tuple[SearchGoal, SearchGoal]:
    """NDR (TRAFFICGEN_LOSSRATE) and PDR (TRAFFICGEN_PDR_LOSSRATE) goals from the settings; without
    `with_exceed` they are RFC 2544's: one full-length trial decides a load."""
    ndr, pdr = number(settings, "TRAFFICGEN_LOSSRATE"), number(settings, "TRAFFICGEN_PDR_LOSSRATE")
    check(0 <= ndr < 100, "TRAFFICGEN_LOSSRATE", ndr, "in [0, 100)")
    check(ndr <= pdr < 100, "TRAFFICGEN_PDR_LOSSRATE", pdr, f"in [TRAFFICGEN_LOSSRATE={ndr:g}, 100)")
    final_s = number(settings, "TRAFFICGEN_DURATION")
    check(final_s > 0, "TRAFFICGEN_DURATION", final_s, "> 0")
    initial_s = number(settings, "TRAFFICGEN_SEARCH_INITIAL_DURATION_S")
    check(initial_s > 0, "TRAFFICGEN_SEARCH_INITIAL_DURATION_S", initial_s, "> 0")
    width = number(settings, "TRAFFICGEN_SEARCH_WIDTH_PERCENT")
    check(0 < width < 100, "TRAFFICGEN_SEARCH_WIDTH_PERCENT", width, "in (0, 100)")
    exceed, sum_s = 0.0, final_s
    if with_exceed:
        exceed = number(settings, "TRAFFICGEN_MLR_EXCEED_RATIO_PERCENT")
        check(0 <= exceed < 100, "TRAFFICGEN_MLR_EXCEED_RATIO_PERCENT", exceed, "in [0, 100)")
        sum_s = optional_number(settings, "TRAFFICGEN_MLR_DURATION_SUM_S") or final_s
        check(sum_s >= final_s, "TRAFFICGEN_MLR_DURATION_SUM_S", sum_s, f">= TRAFFICGEN_DURATION ({final_s:g})")

    def goal(name: str, loss_percent: float) -> SearchGoal:
        return SearchGoal(
            name=name,
            loss_ratio=loss_percent / 100.0,
            exceed_ratio=exceed / 100.0,
            final_duration_s=final_s,
            duration_sum_s=sum_s,
            width=width / 100.0,
            initial_duration_s=min(initial_s, final_s),
        )

    return goal("ndr", ndr), goal("pdr", pdr)


def goal_search_config_from_settings(
    settings: Mapping[str, Any], algorithm: Literal["ndr_pdr", "mlr"]
) -> GoalSearchConfig:
    """The ndr_pdr or mlr search as the settings ask for it. mlr takes TRAFFICGEN_MLR_GOALS when
    that list is not empty; ndr_pdr always searches NDR and PDR."""
    goals: tuple[SearchGoal, ...]
    raw_goals = setting(settings, "TRAFFICGEN_MLR_GOALS")
    if not isinstance(raw_goals, list | tuple):
        raise ConfigError(f"TRAFFICGEN_MLR_GOALS must be a list, got {raw_goals!r}")
    if algorithm == "mlr" and raw_goals:
        goals = tuple(_goal_from_mapping(item, i) for i, item in enumerate(raw_goals))
    else:
        goals = ndr_pdr_goals(settings, with_exceed=algorithm == "mlr")
    return GoalSearchConfig(
        goals=goals,
        min_rate_percent=number(settings, "TRAFFICGEN_RFC2544_MIN_RATE_PERCENT"),
        max_rate_percent=number(settings, "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT"),
        preceding_targets=integer(settings, "TRAFFICGEN_MLR_PRECEDING_TARGETS") if algorithm == "mlr" else 0,
        repetitions=integer(settings, "TRAFFICGEN_RFC2544_TESTS"),
        learning_duration_s=number(settings, "TRAFFICGEN_LEARNING_DURATION_S"),
        verify=flag(settings, "TRAFFICGEN_RFC2544_VERIFY"),
        verify_duration_s=number(settings, "TRAFFICGEN_RFC2544_VERIFY_DURATION_S"),
    )


def known_throughput_percent(settings: Mapping[str, Any]) -> float | None:
    """TRAFFICGEN_THROUGHPUT_PERCENT: a throughput given by the user, or None (measure it)."""
    value = optional_number(settings, "TRAFFICGEN_THROUGHPUT_PERCENT")
    if value is not None:
        check(0 < value <= 100, "TRAFFICGEN_THROUGHPUT_PERCENT", value, "in (0, 100] or null")
    return value
