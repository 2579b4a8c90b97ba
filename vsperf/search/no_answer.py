"""When a throughput search has no answer it stands behind, and the one line saying why.

A search that ends without a relevant lower bound (no load met a goal; binary: no rate passed),
or that its trial guard stopped, has no answer: reporting 0 fps as "passed" would hide it (a
simulated DUT forwarding less than the lowest load tried, a generator whose ceiling lies below
one resolution step, a controller looping). The outcome then carries `failure`
(`vsperf.search.outcome.SearchOutcome`): the runner writes the metrics and every trial, then the
test fails with this line (`SearchOutcome.raise_if_failed`).
"""

from __future__ import annotations

from collections.abc import Sequence

from vsperf.search.measurer import TrialResult
from vsperf.search.mlr_goals import GoalResult
from vsperf.search.trials import percent_of
from vsperf.traffic import Traffic


def _at(trial: TrialResult, traffic: Traffic) -> str:
    """Where a trial ran and what the DUT did there, e.g. "298 fps (0.001 % of line rate), lost
    66.4 % (the DUT forwarded 100 fps)"."""
    load = trial.actual_tx_rate_fps
    forwarded = f"the DUT forwarded {trial.rx_rate_fps:.0f} fps" if trial.rx_frames else "the DUT forwarded nothing"
    return (f"{load:.0f} fps ({percent_of(load, traffic.line_rate_fps):.4g} % of line rate), lost "
            f"{trial.loss_percent:.4g} % ({forwarded})")


def lowest_trial(trials: Sequence[TrialResult]) -> TrialResult | None:
    """The rate trial at the lowest load (what was sent)."""
    rated = [t for t in trials if t.kind == "rate" and t.tx_frames > 0]
    return min(rated, key=lambda t: t.actual_tx_rate_fps) if rated else None


def binary_failure(
    loss_rate_percent: float, trials: Sequence[TrialResult], repetitions_without: int, repetitions: int,
    guard_trials: int | None, traffic: Traffic,
) -> str | None:
    """Why a binary search has no answer (None: every repetition found a passing rate).
    `guard_trials`: the guard that stopped a repetition, if one did."""
    if guard_trials is not None:
        return f"the binary search stopped at its guard of {guard_trials} trials without converging"
    if repetitions_without == 0:
        return None
    which = "" if repetitions == 1 else f" in {repetitions_without} of {repetitions} repetitions"
    lowest = lowest_trial(trials)
    where = f": the lowest rate tried, {_at(lowest, traffic)}" if lowest else ""
    return f"no rate passed (loss allowed {loss_rate_percent:g} %){which}{where}"


def goal_search_failure(
    algorithm: str, results: Sequence[Sequence[GoalResult]], exhausted: Sequence[bool], guard_trials: int,
    trials: Sequence[TrialResult], traffic: Traffic,
) -> str | None:
    """Why a goal search (ndr_pdr, mlr) has no answer: its guard of `guard_trials` stopped a
    repetition, or a goal has no relevant lower bound (None: every goal of every repetition has
    its answer). `results`: per repetition, the goals' results; `exhausted`: per repetition,
    whether the guard stopped it."""
    if any(exhausted):
        open_goals = sorted({r.goal.name for rep in results for r in rep if r.status != "regular"})
        which = f" before {' and '.join(open_goals)} reached {'its' if len(open_goals) == 1 else 'their'} width" \
            if open_goals else ""
        return f"{algorithm} stopped at its guard of {guard_trials} trials{which}"
    missing = [r for rep in results for r in rep if r.lower_bound_fps is None]
    if not missing:
        return None
    goal = missing[0].goal
    lowest = lowest_trial(trials)
    where = f": even the lowest load tried, {_at(lowest, traffic)}" if lowest else ""
    return f"no load met {goal.name} (loss at most {100 * goal.loss_ratio:g} %){where}"
