"""MLRsearch: every goal (NDR, PDR, ...) in one search, short trials first, full-length trials
only where they decide the answer (IETF draft-ietf-bmwg-mlrsearch; the semantics are in
`vsperf.search.mlr_goals`, the outcome in `vsperf.search.goal_search`).

The controller (this module's choice of trials; the draft leaves it free):

1. Initial trials, shared by every goal: one at the maximum load (what the generator cannot
   deliver lowers that maximum, see `vsperf.search.upper_bound`), then, if it lost frames, one at
   its forwarding rate corrected for the smallest goal loss ratio (a tail-drop DUT forwards its
   capacity when overloaded, so that is a good first guess).
2. Each goal has the draft's chain of targets (`SearchGoal.targets`): `preceding_targets` ones
   whose duration sums shrink geometrically to the initial trial duration (a target's trials last
   its sum, at most the final duration) and whose widths double per step back, then the goal
   itself. Targets are narrowed in order, every goal at one stage before the next stage, so that
   all goals profit from every trial; then the final targets get passes until none is open (a
   later goal's trials may reopen an earlier goal's answer).
3. Narrowing the first target: while its relevant bounds are too far apart, measure in this order
   - an undecided load between the bounds again, at the target's trial duration (the highest
     first);
   - if the upper bound is missing, a load above the lower bound, each step twice the last;
   - if the lower bound is missing, a load below the upper bound, each step twice the last, or
     lower still if the trials above say so (their forwarding rate; with an exceed ratio, the loss
     exponent they fit, `vsperf.search.noise_band.capacity_guess_fps`);
   - otherwise a split of the interval in log space whose upper part is the target's width times
     a power of two, so that every step ends on the width exactly; above the forwarding-rate
     guess, first steps up from it of 1, 2, 4 ... widths (CSIT's second guess).
   A load never measured before is first tried with the goal's initial (short) trial duration
   when a high-loss trial that short would already make it an upper bound: half of the probes of
   a bisection fail, and those then cost a short trial instead of a full-length one.
4. A later target that one short failure decides (exceed ratio 0), once it has an upper bound, is
   narrowed by `vsperf.search.confirm`: its trials go one width below the relevant upper bound,
   after short "band probes" moved that bound to the bottom of the DUT's noise band (read from the
   size of the losses) and a short "scout" trial at the candidate passed, so that on a noisy DUT a
   long trial is rarely spent where it fails. Longer stages serve the goals with larger loss
   ratios first (one long trial may then answer two goals). A later target that a short failure
   does not decide (an exceed ratio above 0: its duration sum decides) is refined from its
   preceding target's bounds by trials of its own duration (`vsperf.search.refine`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from vsperf.search.confirm import confirm_order, confirm_target
from vsperf.search.goal_config import GoalSearchConfig
from vsperf.search.goal_search import ALL_GOALS, FINAL_ROUNDS, GoalSearchState, run_goal_search
from vsperf.search.load_space import log_width, split_load
from vsperf.search.measurer import Measurer, TrialResult
from vsperf.search.mlr_goals import SearchGoal, Target, classify, relevant_bounds
from vsperf.search.noise_band import capacity_guess_fps
from vsperf.search.outcome import SearchOutcome
from vsperf.search.refine import refine_target
from vsperf.search.trials import OnTrial
from vsperf.traffic import Traffic

_EPS = 1e-9


def _short_probe_decides(goal: SearchGoal, target: Target) -> bool:
    """Whether one high-loss trial of the goal's initial duration makes a load an upper bound."""
    if goal.initial_duration_s >= target.trial_duration_s:
        return False
    probe = TrialResult(
        kind="rate",
        frame_size_bytes=64,
        requested_rate_fps=1.0,
        duration_s=goal.initial_duration_s,
        tx_frames=1,
        rx_frames=0,
        actual_tx_rate_fps=1.0,
        line_rate_fps=1.0,
    )
    return classify([probe], target) == "upper"


def _forwarding_guess(trials: Sequence[TrialResult], loss_ratio: float) -> float | None:
    """Load that a tail-drop DUT would forward with `loss_ratio`, from trials above capacity."""
    lossy = [t for t in trials if t.loss_frames > 0 and t.rx_frames > 0]
    if not lossy:
        return None
    return min(t.rx_rate_fps for t in lossy) / (1.0 - loss_ratio)


def narrow_target(
    state: GoalSearchState,
    goal: SearchGoal,
    target: Target,
    *,
    log_scale: bool = True,
    short_probe: bool = True,
    stop_at_upper: bool = False,
    label: str | None = None,
) -> None:
    """Measure until `target`'s relevant bounds are within its width (or a load limit answers);
    with `stop_at_upper`, only until the target has an upper bound. Trials are tagged with
    `label` (the target's own label by default)."""
    steps_up = steps_down = 0
    step = log_width(target.width)
    probe_short = short_probe and _short_probe_decides(goal, target)
    while state.budget_left():
        bounds = relevant_bounds(state.db, target)
        lower, upper = bounds.lower_fps, bounds.upper_fps
        max_load, min_load = state.ceiling.max_load_fps, state.min_load_fps
        if stop_at_upper and upper is not None:
            return
        if state.target_decided(bounds, target):
            return
        undecided = [load for load in bounds.undecided_fps if load <= max_load * (1 + _EPS)]
        if undecided:
            state.measure(undecided[-1], target.trial_duration_s, goal.name, label or target.label)
            continue
        if upper is None and lower is None:
            load = max_load
        elif upper is None:
            assert lower is not None
            steps_up += 1
            load = min(max_load, lower * math.exp(step * 2 ** (steps_up - 1)))
        elif lower is None:
            steps_down += 1
            load = upper * math.exp(-step * 2 ** (steps_down - 1))
            if target.exceed_ratio > 0:
                guess = capacity_guess_fps(((x, t) for x in state.db.loads() if x >= upper * (1 - _EPS)
                                            for t in state.db.trials_at(x)), target.loss_ratio)
            else:
                guess = _forwarding_guess(state.db.trials_at(upper), target.loss_ratio)
            load = max(min_load, load if guess is None else min(load, guess))
        else:
            load = split_load(lower, upper, target.width, log_scale)
            if lower == state.guess_fps:
                # The lower bound is the forwarding-rate guess, usually just below the answer:
                # step up from it (1, 2, 4 ... widths) while that is below the split (CSIT's mrr2).
                steps_up += 1
                load = min(load, lower * math.exp(step * 2 ** (steps_up - 1)))
        if target.exceed_ratio > 0:
            load = state.on_grid(load, lower, upper)
        duration = target.trial_duration_s
        if probe_short and not state.db.has(load):
            duration = goal.initial_duration_s
        state.measure(load, duration, goal.name, label or target.label)


def initial_trials(state: GoalSearchState) -> None:
    """The shared start: the maximum load, then the forwarding-rate guess if it lost frames."""
    goals = state.cfg.goals
    duration = min(g.initial_duration_s for g in goals)
    smallest_loss = min(g.loss_ratio for g in goals)
    narrowest = min(g.width for g in goals)
    first = state.measure(state.ceiling.max_load_fps, duration, ALL_GOALS, "max load").trial
    if first.loss_ratio <= smallest_loss or first.rx_frames == 0:
        return
    guess = first.rx_rate_fps / (1.0 - smallest_loss)
    guess = min(guess, state.ceiling.max_load_fps * (1 - narrowest))
    if all(g.exceed_ratio > 0 for g in goals):
        guess = state.on_grid(guess, None, state.ceiling.max_load_fps)
    if guess > state.min_load_fps:
        state.guess_fps = state.measure(guess, duration, ALL_GOALS, "forwarding-rate guess").load_fps


def mlr_search_once(state: GoalSearchState) -> None:
    """One MLRsearch over every goal of `state.cfg` (see the module docstring)."""
    initial_trials(state)
    chains = [g.targets(state.cfg.preceding_targets) for g in state.cfg.goals]
    stages = max(len(chain) for chain in chains)
    by_goal = dict(zip(state.cfg.goals, chains, strict=True))
    for stage in range(stages):
        # The bisection stage in the configured order; longer stages largest loss ratio first.
        for goal in state.cfg.goals if stage == 0 else confirm_order(state.cfg.goals):
            chain = by_goal[goal]
            index = stage - (stages - len(chain))  # every chain ends at the last stage
            if index >= 0:
                _narrow(state, goal, chain[index], chain[index - 1] if index > 0 else None)
    for _ in range(FINAL_ROUNDS):  # a later goal's trials may have moved an earlier goal's bounds
        reopened = state.open_goals(confirm_order(state.cfg.goals))
        if not reopened or not state.budget_left():
            return
        for goal in reopened:
            chain = by_goal[goal]
            _narrow(state, goal, chain[-1], chain[-2] if len(chain) > 1 else None)


def _narrow(state: GoalSearchState, goal: SearchGoal, target: Target, preceding: Target | None) -> None:
    """The first target bisects; a later one that a short failure does not decide (exceed ratio
    above 0) is refined from its preceding target's bounds (`refine_target`); a longer one that
    it does is confirmed from its upper bound down (`confirm_target`), halving far gaps with
    short trials first when no shorter target narrowed it (the first of its chain:
    TRAFFICGEN_MLR_PRECEDING_TARGETS 0)."""
    if not _short_probe_decides(goal, target):
        if preceding is None:
            narrow_target(state, goal, target)
        else:
            refine_target(state, goal, target, relevant_bounds(state.db, preceding))
        return
    while not confirm_target(state, goal, target, far_splits=target.index == 0):
        narrow_target(state, goal, target, stop_at_upper=True)


def mlr_throughput(
    measurer: Measurer, traffic: Traffic, cfg: GoalSearchConfig, on_trial: OnTrial | None = None
) -> SearchOutcome:
    """Run MLRsearch for `cfg.goals` (repeated, verified as configured)."""
    return run_goal_search(measurer, traffic, cfg, "mlr", mlr_search_once, on_trial)
