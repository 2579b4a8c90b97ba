"""Which throughput search runs (TRAFFICGEN_SEARCH), and the throughput the tests that depend on
it use (latency, recovery, reset, RFC 9004 back-to-back).

A dependent test takes, in this order: the throughput the runner passes (e.g. from an earlier
phy2phy_tput of the same run), TRAFFICGEN_THROUGHPUT_PERCENT when set, or a throughput search
run first with the selected algorithm. The trials of that search are part of the dependent
test's outcome, their purpose prefixed with "throughput: ".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from vsperf.config.schema_search import ThroughputAlgorithm
from vsperf.search.config import ThroughputSearchConfig, throughput_config_from_settings
from vsperf.search.goal_config import (
    GoalSearchConfig,
    goal_search_config_from_settings,
    known_throughput_percent,
    search_algorithm,
)
from vsperf.search.measurer import Measurer, TrialResult
from vsperf.search.mlr import mlr_throughput
from vsperf.search.ndr_pdr import ndr_pdr_throughput
from vsperf.search.outcome import SearchOutcome
from vsperf.search.throughput import rfc2544_throughput
from vsperf.search.trials import OnTrial
from vsperf.traffic import Traffic

THROUGHPUT_PREFIX = "throughput: "


@dataclass(frozen=True)
class ThroughputSearch:
    """The throughput search TRAFFICGEN_SEARCH selects (binary, ndr_pdr or mlr) with its
    configuration: built, and so validated, once when the run is planned."""

    algorithm: ThroughputAlgorithm
    config: ThroughputSearchConfig | GoalSearchConfig

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> ThroughputSearch:
        algorithm = search_algorithm(settings)
        if algorithm == "binary":
            return cls(algorithm, throughput_config_from_settings(settings))
        return cls(algorithm, goal_search_config_from_settings(settings, algorithm))


def run_throughput(
    measurer: Measurer, traffic: Traffic, search: ThroughputSearch, on_trial: OnTrial | None = None
) -> SearchOutcome:
    """Run the throughput search `search` at `traffic`."""
    cfg = search.config
    if isinstance(cfg, ThroughputSearchConfig):
        return rfc2544_throughput(measurer, traffic, cfg, on_trial)
    if search.algorithm == "ndr_pdr":
        return ndr_pdr_throughput(measurer, traffic, cfg, on_trial)
    return mlr_throughput(measurer, traffic, cfg, on_trial)


@dataclass(frozen=True)
class ThroughputSource:
    """Where a dependent test takes its throughput when the run passes none: the user's
    TRAFFICGEN_THROUGHPUT_PERCENT, or else `search`, run first."""

    percent: float | None
    search: ThroughputSearch | None

    def __post_init__(self) -> None:
        if (self.percent is None) == (self.search is None):
            raise ValueError("a throughput source is either a percentage or a search")

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> ThroughputSource:
        percent = known_throughput_percent(settings)
        return cls(percent, ThroughputSearch.from_settings(settings) if percent is None else None)


@dataclass(frozen=True)
class KnownThroughput:
    """The throughput a dependent test runs at, and where it came from."""

    rate_fps: float  # offered load at the throughput (0: nothing passed)
    source: Literal["given", "setting", "measured"]
    outcome: SearchOutcome | None = None  # the search, when it was measured

    @property
    def trials(self) -> tuple[TrialResult, ...]:
        """The search's trials, tagged as throughput trials (none unless measured)."""
        if self.outcome is None:
            return ()
        return tuple(_tagged(t) for t in self.outcome.trials)

    @property
    def failure(self) -> str | None:
        """Why the measured throughput is no answer (see `SearchOutcome.failure`): a test run at
        it fails too. None when it was given, configured, or measured with an answer."""
        if self.outcome is None or self.outcome.failure is None:
            return None
        return f"throughput search: {self.outcome.failure}"

    @property
    def anomalies(self) -> tuple[str, ...]:
        if self.outcome is None:
            return ()
        return tuple(f"throughput search: {a}" for a in self.outcome.anomalies)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rate_fps": self.rate_fps, "source": self.source}
        if self.outcome is not None:
            search = self.outcome.details.get("search", {})
            out.update(
                algorithm=search.get("algorithm"),
                trial_count=self.outcome.details.get("trial_count"),
                trial_time_s=self.outcome.details.get("trial_time_s"),
            )
        return out


def _tagged(trial: TrialResult) -> TrialResult:
    return replace(trial, purpose=THROUGHPUT_PREFIX + trial.purpose)


def throughput_for(
    measurer: Measurer,
    traffic: Traffic,
    source: ThroughputSource,
    on_trial: OnTrial | None,
    given_fps: float | None,
) -> KnownThroughput:
    """The throughput a dependent test uses (see the module docstring)."""
    if given_fps is not None:
        if given_fps < 0:
            raise ValueError(f"throughput_fps cannot be negative, got {given_fps}")
        return KnownThroughput(given_fps, "given")
    search = source.search
    if search is None:  # the user's TRAFFICGEN_THROUGHPUT_PERCENT
        return KnownThroughput((source.percent or 0.0) * traffic.line_rate_fps / 100.0, "setting")

    def forward(trial: TrialResult) -> None:
        if on_trial is not None:
            on_trial(_tagged(trial))

    outcome = run_throughput(measurer, replace(traffic, traffic_type="rfc2544_throughput"), search, forward)
    rate = outcome.metrics.get("tx_rate_fps")
    return KnownThroughput(float(rate) if isinstance(rate, int | float) else 0.0, "measured", outcome)
