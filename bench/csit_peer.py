"""CSIT's MLRsearch (PyPI `MLRsearch` 1.2.1, the reference peer) on vsperf's simulated DUT.

`CsitMeasurer` implements MLRsearch's `AbstractMeasurer` over any vsperf measurer (the dummy
generator in the benches), so MLRsearch and vsperf's searches see the same DUT and, for the same
seed, the same trial noise (the dummy draws a trial's noise from its seed and its index). Loads
are aggregate frames/s, as vsperf's; trial-seconds are the intended durations (no overheads: the
simulated trials have none), so both count the same seconds.

`csit_search` runs one MLRsearch for goals given as vsperf's `SearchGoal`s: same loss ratios,
exceed ratios, trial durations, duration sums and widths; MLRsearch's own controller parameters
as CSIT ships them (2 preceding targets, expansion coefficient 2), no warm-up trial (vsperf's
searches have none either), no wall-clock limit, and `fail_fast` off (a goal without a lower
bound is reported, not raised).

Install it with `pip install -e .[bench]` (pyproject.toml's bench extra).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from MLRsearch import AbstractMeasurer, Config, MeasurementResult, MultipleLossRatioSearch
from MLRsearch import SearchGoal as CsitGoal

from vsperf.search.measurer import Measurer, TrialResult
from vsperf.search.mlr_goals import SearchGoal
from vsperf.traffic import Traffic

PRECEDING_TARGETS = 2  # CSIT's default
MIN_LOAD_PERCENT = 0.001  # of line rate: vsperf's goal searches' lowest load (vsperf.search.upper_bound)


class CsitMeasurer(AbstractMeasurer):  # type: ignore[misc]
    """MLRsearch's measurer interface over a vsperf measurer; keeps every trial."""

    def __init__(self, measurer: Measurer, traffic: Traffic) -> None:
        self.measurer = measurer
        self.traffic = traffic
        self.trials: list[TrialResult] = []

    def measure(self, intended_duration: float, intended_load: float) -> MeasurementResult:
        trial = self.measurer.trial(self.traffic, intended_load, intended_duration)
        self.trials.append(trial)
        return MeasurementResult(
            intended_duration=intended_duration,
            intended_load=intended_load,
            offered_count=trial.tx_frames,
            loss_count=trial.loss_frames,
            offered_duration=intended_duration,
            duration_with_overheads=intended_duration,
        )


@dataclass(frozen=True)
class CsitAnswer:
    """What MLRsearch found: per goal (in order) the relevant lower bound (None: none), and its trials."""

    lower_bounds_fps: tuple[float | None, ...]
    trials: tuple[TrialResult, ...]

    @property
    def trial_time_s(self) -> float:
        return sum(t.duration_s for t in self.trials)


def csit_search(measurer: Measurer, traffic: Traffic, goals: Sequence[SearchGoal]) -> CsitAnswer:
    """One MLRsearch 1.2.1 for `goals` between vsperf's lowest load and the line rate."""
    config = Config()
    config.goals = [
        CsitGoal(
            loss_ratio=g.loss_ratio,
            exceed_ratio=g.exceed_ratio,
            relative_width=g.width,
            initial_trial_duration=g.initial_duration_s,
            final_trial_duration=g.final_duration_s,
            duration_sum=g.duration_sum_s,
            preceding_targets=PRECEDING_TARGETS,
            fail_fast=False,
        )
        for g in goals
    ]
    config.max_load = traffic.line_rate_fps
    config.min_load = traffic.line_rate_fps * MIN_LOAD_PERCENT / 100.0
    config.search_duration_max = 1e12
    config.warmup_duration = None
    peer = CsitMeasurer(measurer, traffic)
    results = MultipleLossRatioSearch(config=config).search(peer)
    lowers = tuple(float(r.relevant_lower_bound) if r.relevant_lower_bound else None for r in results.values())
    return CsitAnswer(lowers, tuple(peer.trials))
