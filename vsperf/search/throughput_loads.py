"""rfc2544_throughput as planned: the selected throughput search, then (when configured) latency at
loads relative to its answer (vsperf.search.load_latency)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vsperf.search.goal_config import GoalSearchConfig
from vsperf.search.load_latency import LoadLatencyConfig, latency_at_loads
from vsperf.search.measurer import Measurer
from vsperf.search.outcome import SearchOutcome
from vsperf.search.select import ThroughputSearch, run_throughput
from vsperf.search.trials import OnTrial
from vsperf.traffic import Traffic


@dataclass(frozen=True)
class ThroughputWithLoads:
    """The throughput search and the latency loads after it (None: none)."""

    search: ThroughputSearch
    loads: LoadLatencyConfig | None = None

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> ThroughputWithLoads:
        search = ThroughputSearch.from_settings(settings)
        goals = tuple(g.name for g in search.config.goals) if isinstance(search.config, GoalSearchConfig) else ()
        return cls(search, LoadLatencyConfig.from_settings(settings, goals))


def run_throughput_with_loads(measurer: Measurer, traffic: Traffic, cfg: ThroughputWithLoads,
                              on_trial: OnTrial | None = None) -> SearchOutcome:
    """The search's outcome, with the latency at each load added when configured."""
    outcome = run_throughput(measurer, traffic, cfg.search, on_trial)
    if cfg.loads is None:
        return outcome
    return latency_at_loads(measurer, traffic, cfg.loads, outcome, on_trial)
