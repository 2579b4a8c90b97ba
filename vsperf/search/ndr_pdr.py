"""ndr_pdr: NDR and PDR in one bisection that shares every trial (NFVbench's method), run with
short trials, then confirmed by final-duration trials.

1. Bisection, trials of TRAFFICGEN_SEARCH_INITIAL_DURATION_S: each goal keeps an interval of
   loads, first [minimum load, maximum load]; the first trial is at the maximum (and tells what
   the generator can deliver, see `vsperf.search.upper_bound`). A trial at load x moves every
   goal whose interval holds x: its lower end when the trial lost at most the goal's loss ratio,
   else its upper end. The next trial is at the middle of the first unfinished goal's interval,
   so while NDR and PDR share an interval every trial serves both; a goal is finished when its
   interval is within the width (relative to its upper end) or its lower end is the maximum.
2. Confirmation, trials of TRAFFICGEN_DURATION: each goal's answer follows MLRsearch's
   classification with exceed ratio 0 (`vsperf.search.mlr_goals`): one final trial without
   excess loss makes a lower bound, any high-loss trial an upper bound. The final trials go where
   `vsperf.search.confirm` places them: one width below the relevant upper bound, after short
   "band probes" moved that bound to the bottom of the DUT's noise band and short "scout" trials
   at the candidate passed (a failing short trial lowers the upper bound for the price of a short
   trial); a failed final trial makes its load the upper bound and the search goes on below. The
   goal with the larger loss ratio (PDR) is confirmed first: on a tail-drop DUT its long trial
   often answers NDR too.

A trial that passed short but fails long (a DUT losing more over time) is thus never reported.
"""

from __future__ import annotations

from vsperf.search.confirm import confirm_order, confirm_target
from vsperf.search.goal_config import GoalSearchConfig
from vsperf.search.goal_search import GoalSearchState, run_goal_search
from vsperf.search.measurer import Measurer
from vsperf.search.mlr import narrow_target
from vsperf.search.mlr_goals import SearchGoal, high_loss, relative_width
from vsperf.search.outcome import SearchOutcome
from vsperf.search.trials import OnTrial
from vsperf.traffic import Traffic

_EPS = 1e-9


def _finished(lower: float, upper: float, goal: SearchGoal, max_load: float) -> bool:
    return lower >= max_load * (1 - _EPS) or relative_width(lower, upper) <= goal.width + _EPS


def bisect_goals(state: GoalSearchState) -> None:
    """Phase 1: the shared bisection with short trials."""
    goals = state.cfg.goals
    duration = min(g.initial_duration_s for g in goals)
    intervals = {g.name: (state.min_load_fps, state.ceiling.max_load_fps) for g in goals}
    load, serving = state.ceiling.max_load_fps, "+".join(g.name for g in goals)
    while state.budget_left():
        measured, trial, judged = state.measure(load, duration, serving, "bisection")
        max_load = state.ceiling.max_load_fps
        for goal in goals:
            lower, upper = intervals[goal.name]
            if judged and lower < measured <= upper * (1 + _EPS):
                if high_loss(trial, goal.loss_ratio):
                    upper = measured
                else:
                    lower = measured
            intervals[goal.name] = (lower, min(upper, max_load))
        active = [g for g in goals if not _finished(*intervals[g.name], g, max_load)]
        if not active:
            return
        lower, upper = intervals[active[0].name]
        load = (lower + upper) / 2.0
        serving = "+".join(g.name for g in active if intervals[g.name] == (lower, upper))


def ndr_pdr_search_once(state: GoalSearchState) -> None:
    """One ndr_pdr search over the goals of `state.cfg` (see the module docstring)."""
    bisect_goals(state)
    for _ in range(2):  # twice: a later goal's trials may have moved an earlier goal's bounds
        for goal in confirm_order(state.cfg.goals):
            target = goal.targets(0)[-1]
            while not confirm_target(state, goal, target):
                narrow_target(state, goal, target, log_scale=False, stop_at_upper=True)


def ndr_pdr_throughput(
    measurer: Measurer, traffic: Traffic, cfg: GoalSearchConfig, on_trial: OnTrial | None = None
) -> SearchOutcome:
    """Run the ndr_pdr search (repeated, verified as configured)."""
    return run_goal_search(measurer, traffic, cfg, "ndr_pdr", ndr_pdr_search_once, on_trial)
