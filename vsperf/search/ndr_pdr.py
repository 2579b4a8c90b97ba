"""ndr_pdr: NDR and PDR in one search that shares every trial, narrowed with short trials, then
confirmed by final-duration trials.

1. Bisection, trials of TRAFFICGEN_SEARCH_INITIAL_DURATION_S: the first trial at the maximum load
   (it tells what the generator can deliver, see `vsperf.search.upper_bound`), the second at its
   forwarding rate (a tail-drop DUT forwards its capacity when overloaded), then each goal in turn
   is narrowed to its width in log space (`vsperf.search.mlr.narrow_target`), from one trial
   database: a trial run for NDR moves PDR's bounds too. (NFVbench's bisection of the whole
   interval [minimum, maximum] came first; starting from the forwarding rate costs 3-5 fewer
   short trials, measured against MLRsearch in bench_searches, issue 22.)
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
from vsperf.search.goal_search import FINAL_ROUNDS, GoalSearchState, run_goal_search
from vsperf.search.measurer import Measurer
from vsperf.search.mlr import initial_trials, narrow_target
from vsperf.search.mlr_goals import SearchGoal, Target
from vsperf.search.outcome import SearchOutcome
from vsperf.search.trials import OnTrial
from vsperf.traffic import Traffic

BISECTION_LABEL = "bisection"


def steering_target(goal: SearchGoal) -> Target:
    """A goal's phase-1 target: its loss ratio and width, trials (and sum) of its initial duration."""
    return Target(goal=goal.name, index=0, count=2, loss_ratio=goal.loss_ratio, exceed_ratio=0.0,
                  trial_duration_s=goal.initial_duration_s, duration_sum_s=goal.initial_duration_s, width=goal.width)


def bisect_goals(state: GoalSearchState) -> None:
    """Phase 1: short trials narrow every goal to its width, one trial database for all."""
    initial_trials(state)
    for goal in state.cfg.goals:
        narrow_target(state, goal, steering_target(goal), label=BISECTION_LABEL)


def ndr_pdr_search_once(state: GoalSearchState) -> None:
    """One ndr_pdr search over the goals of `state.cfg` (see the module docstring)."""
    bisect_goals(state)
    for _ in range(FINAL_ROUNDS):  # a later goal's trials may have moved an earlier goal's bounds
        reopened = state.open_goals(confirm_order(state.cfg.goals))
        if not reopened or not state.budget_left():
            return
        for goal in reopened:
            target = goal.targets(0)[-1]
            while not confirm_target(state, goal, target):
                narrow_target(state, goal, target, log_scale=False, stop_at_upper=True)


def ndr_pdr_throughput(
    measurer: Measurer, traffic: Traffic, cfg: GoalSearchConfig, on_trial: OnTrial | None = None
) -> SearchOutcome:
    """Run the ndr_pdr search (repeated, verified as configured)."""
    return run_goal_search(measurer, traffic, cfg, "ndr_pdr", ndr_pdr_search_once, on_trial)
