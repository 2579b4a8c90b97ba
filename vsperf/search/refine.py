"""Narrowing a target that one short failure does not decide (a goal with an exceed ratio).

With an exceed ratio above 0 a load is decided by its duration sum (`vsperf.search.mlr_goals`):
a short trial that lost too much is balanced by short trials that did not, and only enough
trial seconds of one kind make the load a bound. The short band probes and scouts of
`vsperf.search.confirm` (a failing short trial is an upper bound) do not apply; every trial of
such a target lasts the target's trial duration, and a load is measured until its sum decides it.

A target after the first one starts from the relevant bounds its preceding target found (the
draft's preceding targets: smaller duration sums first): loads far from them are left alone even
when the larger sum leaves them undecided (a load three times the capacity needs no 21 s of
failures to be above the answer: an upper bound a width above the answer does). In order:

1. the middle of the preceding target's bounds, when they are at most two widths apart;
2. the preceding target's lower bound, then its upper bound, until each is decided;
3. without a lower bound, a load below the upper bound, each step twice as far as the last;
   without an upper bound, above the lower bound likewise;
4. a split of the interval in log space that ends on the width (`vsperf.search.load_space`).
A load once chosen is measured until its sum decides it.
"""

from __future__ import annotations

import math

from vsperf.search.goal_search import GoalSearchState
from vsperf.search.load_space import log_width, split_load
from vsperf.search.mlr_goals import RelevantBounds, SearchGoal, Target, relevant_bounds

_EPS = 1e-9


def _inside(load: float, bounds: RelevantBounds) -> bool:
    """Whether measuring `load` can move a relevant bound (it lies strictly between them)."""
    lower, upper = bounds.lower_fps, bounds.upper_fps
    return (lower is None or load > lower * (1 + _EPS)) and (upper is None or load < upper * (1 - _EPS))


def _seeds(start: RelevantBounds | None, target: Target) -> list[float]:
    """The loads the preceding target's bounds suggest, in order (see the module docstring)."""
    if start is None:
        return []
    lower, upper = start.lower_fps, start.upper_fps
    seeds = []
    if lower is not None and upper is not None:
        span = math.log(upper / lower) / log_width(target.width)
        if 1 + _EPS < span <= 2 + _EPS:
            seeds.append(math.sqrt(lower * upper))
    return seeds + [s for s in (lower, upper) if s is not None]


def refine_target(
    state: GoalSearchState, goal: SearchGoal, target: Target, start: RelevantBounds | None = None
) -> None:
    """Measure until `target`'s relevant bounds are within its width (or a load limit answers),
    starting from `start` (the preceding target's relevant bounds; None: from the trials alone)."""
    step = log_width(target.width)
    expansion = 1
    seeds = _seeds(start, target)
    current: float | None = None
    extending = False  # the current load steps away from the one bound found
    while state.budget_left():
        bounds = relevant_bounds(state.db, target)
        lower, upper = bounds.lower_fps, bounds.upper_fps
        max_load, min_load = state.ceiling.max_load_fps, state.min_load_fps
        if state.target_decided(bounds, target):
            return
        if current is not None and current in bounds.undecided_fps:
            load = current
        else:
            if extending and ((current == lower and upper is None) or (current == upper and lower is None)):
                expansion *= 2  # an extension found the same kind of bound again: go further
            extending = False
            fresh = [s for s in seeds if s <= max_load * (1 + _EPS) and _inside(s, bounds)]
            if fresh:
                load = fresh[0]
                seeds.remove(load)
            elif lower is None and upper is None:
                load = max_load
            elif lower is None:
                assert upper is not None
                load, extending = max(min_load, upper * math.exp(-step * expansion)), True
            elif upper is None:
                load, extending = min(max_load, lower * math.exp(step * expansion)), True
            else:
                load = split_load(lower, upper, target.width)
        if load not in bounds.undecided_fps:
            load = state.on_grid(load, lower, upper)
        current = state.measure(load, target.trial_duration_s, goal.name, target.label).load_fps
