"""Placing the long trials of a goal search where they are likely to pass (ndr_pdr and mlr).

On a noisy DUT (capacity varying from trial to trial) a load near the capacity passes some
trials and fails others. Confirming the highest load a short trial passed then fails about half
the time, and each failure costs a whole full-length trial. Measured on bench/bench_searches.py
before this module: a third of ndr_pdr's trial-seconds went to failed confirmations.

The rule here follows from the draft's semantics (exceed ratio 0: any high-loss trial, short or
long, makes its load an upper bound): the only load worth confirming is the one a width below the
relevant upper bound, `U * (1 - width)`: a pass there ends the goal. Before a long trial is spent
on that candidate, short trials ("scouts") are run at it: a short failure makes the candidate the
new upper bound for the price of a short trial, and the next candidate is a width lower. Only a
candidate that passed `scouts` short trials in a row gets the long trial.

How many scouts is learned from the short trials already run for the goal (`scout_count`): when
no short trial passed above a short failure, the DUT looks steady and one scout suffices (each
scout costs a short trial even when it passes); when the short trials contradict each other (a
pass above a failure) the DUT is noisy, and more scouts are run the longer the long trial is
compared with a short one, so that their cost stays a fraction of a failed long trial.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from vsperf.search.goal_search import GoalSearchState
from vsperf.search.measurer import TrialResult
from vsperf.search.mlr_goals import SearchGoal, Target, high_loss, relevant_bounds

_EPS = 1e-9
MAX_SCOUTS = 4  # measured (bench_searches): more scouts cost more than the failures they avert


def noise_seen(trials: Sequence[tuple[float, TrialResult]]) -> bool:
    """Whether trials contradict each other: one lost a smaller share of its frames at a higher
    load than another (on a steady DUT loss never falls as the load grows). Any goal's trials
    count: the noise is the DUT's, whichever loss ratio a goal allows."""
    by_load = sorted(trials, key=lambda item: item[0])
    worst_below = 0.0  # highest loss ratio seen at a lower load
    previous_load = -1.0
    pending = 0.0
    for load, trial in by_load:
        if load > previous_load * (1 + _EPS):
            worst_below, pending, previous_load = max(worst_below, pending), 0.0, load
        if trial.loss_ratio < worst_below:
            return True
        pending = max(pending, trial.loss_ratio)
    return False


def scout_count(noisy: bool, long_s: float, short_s: float) -> int:
    """Short trials a candidate must pass before it gets a long trial (see the module docstring).

    A failed long trial costs long_s / short_s short trials; the scouts' cost grows with the
    square root of that ratio, so they stay well below what they save when they catch a bad
    candidate (1 for a steady DUT; 2 at a ratio of 4; 3 at 10; MAX_SCOUTS from about 12 up).
    """
    if not noisy or long_s <= short_s:
        return 1 if long_s > short_s else 0
    return max(1, min(MAX_SCOUTS, round(math.sqrt(long_s / short_s))))


def _short_trials(state: GoalSearchState, target: Target) -> list[tuple[float, TrialResult]]:
    return [(load, t) for load in state.db.loads() for t in state.db.trials_at(load)
            if t.duration_s < target.trial_duration_s - _EPS]


def _scouts_passed(state: GoalSearchState, load: float, target: Target) -> int:
    """Short trials at `load` that passed since its last short failure."""
    count = 0
    for trial in state.db.trials_at(load):
        if trial.duration_s < target.trial_duration_s - _EPS:
            count = 0 if high_loss(trial, target.loss_ratio) else count + 1
    return count


def confirm_target(state: GoalSearchState, goal: SearchGoal, target: Target) -> bool:
    """Narrow `target` from its relevant upper bound down, long trials only after scouts passed.

    Returns False when there is nothing to confirm from (no upper bound yet): the caller narrows
    with its own steps first. Returns True once the target is done (width met, or a load limit
    answered) or the trial guard stopped the search.
    """
    short_s = goal.initial_duration_s
    while state.budget_left():
        bounds = relevant_bounds(state.db, target)
        lower, upper = bounds.lower_fps, bounds.upper_fps
        max_load, min_load = state.ceiling.max_load_fps, state.min_load_fps
        if upper is None:
            return lower is not None and lower >= max_load * (1 - _EPS)
        if lower is None and upper <= min_load * (1 + _EPS):
            return True  # the minimum load is an upper bound
        width = bounds.width()
        if width is not None and width <= target.width + _EPS:
            return True
        candidate = max(min_load, min(upper * (1 - target.width), max_load))
        scouts = scout_count(noise_seen(_short_trials(state, target)),
                             target.trial_duration_s, short_s)
        if _scouts_passed(state, candidate, target) < scouts:
            state.measure(candidate, short_s, goal.name, f"{target.label} scout")
        else:
            state.measure(candidate, target.trial_duration_s, goal.name, target.label)
    return True
