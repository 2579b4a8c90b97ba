"""Placing the long trials of a goal search where they are likely to pass (ndr_pdr and mlr).

On a noisy DUT (capacity varying from trial to trial) a load near the capacity passes some
trials and fails others, and each failed long trial costs as much as dozens of short ones.

The rule follows from the draft's semantics (exceed ratio 0: any high-loss trial, short or long,
makes its load an upper bound): the only load worth confirming is the candidate a width below the
relevant upper bound, `U * (1 - width)`: a pass there ends the goal. So the controller chooses
where the long trial goes by choosing where a SHORT trial fails:

* Band probes (`band_probe`): the lossy trials tell the bottom of the DUT's noise band for the
  goal (`vsperf.search.noise_band`: the lowest capacity seen, less a margin that shrinks as more
  trials tell about it). While the candidate lies above that safe bottom, short trials run a
  width above it (off any grid); a probe that fails is the new U, and the long trial a width
  below it lands at the safe bottom, where it rarely fails. Probes that pass add evidence, so the
  bottom's margin shrinks and the next probe goes a little higher by itself (no climbing rule). A
  candidate within BOTTOM_SLACK of the band's span above the bottom gets no probe (twice that
  when the probe would sit below another goal's answer: a failing probe there takes it back).
* A scout: before the long trial, one short trial at the candidate itself; a failing scout makes
  the candidate the new upper bound for the price of a short trial. One, whatever the noise: up
  to four on noisy DUTs (issue 16) cost more than the failures they averted once the long trials
  went to the band's bottom (bench_searches against MLRsearch, issue 22: median trial-seconds
  -10 to -30 % at 10 s finals, the issue-16 ratios to binary up).
* Goals with larger loss ratios get their long trials first (`confirm_order`): on a tail-drop DUT
  one long trial often answers NDR and PDR.
* Gap splits (`far_split`, only for a target nothing shorter narrowed first: mlr with
  TRAFFICGEN_MLR_PRECEDING_TARGETS 0): while the upper bound lies far above every pass, short
  trials halve the gap, so the walk down one width at a time starts near the answer.

Measured on bench/bench_searches.py: with scouts alone a third of ndr_pdr's trial-seconds went to
failed confirmations on noisy DUTs; with band probes on a grid, failed long trials fell by half
(ndr_pdr) to three quarters (mlr); with probes at the safe bottom every noisy case the bench can
bring to 5x does (docs/searches.rst).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from vsperf.search.goal_search import GoalSearchState
from vsperf.search.measurer import TrialResult
from vsperf.search.mlr_goals import SearchGoal, Target, high_loss, relevant_bounds
from vsperf.search.noise_band import capacity_band

_EPS = 1e-9
MAX_PROBE_WIDTHS = 40  # the first probe is at most this many widths below the upper bound
# Band probes are paid in short trials to save long ones, so their number scales with how many
# short trials a long one costs (60 with RFC 2544's 60 s finals and 1 s steering: 48).
PROBES_PER_SHORT = 0.8  # band probes per target, at most, per short trial in a long one
MAX_PROBES = 48  # and at most this many (RFC 2544's 60 s finals with 1 s steering: 48)
MAX_SEARCH_PROBES = 96  # band probes of a whole search, all goals and targets (the trial guard is 300)
MIN_SHORTS_PER_LONG = 20  # no band probes below (bench_searches: 1 s steering at 10 s finals)
# A candidate this close above the band's safe bottom (share of the band's span) gets its long trial
# without probes: a probe costs more than the risk it removes there (bench_searches: 0.01). Twice
# that when the probe would sit at or below the answer of a goal with a larger loss ratio: a probe
# failing that goal's ratio there takes its answer back (a tail-drop DUT's NDR and PDR lie within a
# width), and answering it again costs a long trial.
BOTTOM_SLACK = 0.01
OTHER_ANSWER_SLACK = 0.02
PROBE_LABEL = "band probe"
SPLIT_LABEL = "gap split"
# Widths between the upper bound and the highest pass below it beyond which short trials halve the
# gap before the walk (`far_split`); within them the walk (one short scout per width) is as cheap.
FAR_WIDTHS = 8


def confirm_order(goals: Sequence[SearchGoal]) -> list[SearchGoal]:
    """The order in which goals get their long trials: the largest loss ratio first.

    A long trial that passes a goal with a larger loss ratio losing nothing is a lower bound for
    the stricter goal too, and the trial that failed the looser goal a width above it failed
    the stricter one as well; on a tail-drop DUT, where NDR and PDR lie within a width or two of
    each other, one long trial then often answers both.
    """
    return sorted(goals, key=lambda goal: -goal.loss_ratio)


def _scouts_passed(state: GoalSearchState, load: float, target: Target) -> int:
    """Short trials at `load` that passed since its last short failure (a scout that passed)."""
    count = 0
    for trial in state.db.trials_at(load):
        if trial.duration_s < target.trial_duration_s - _EPS:
            count = 0 if high_loss(trial, target.loss_ratio) else count + 1
    return count


def _passes_at(state: GoalSearchState, load: float, target: Target) -> int:
    """Trials at `load` (any duration) that met the target's loss ratio."""
    return sum(1 for t in state.db.trials_at(load) if not high_loss(t, target.loss_ratio))


def _judged_trials(state: GoalSearchState) -> list[tuple[float, TrialResult]]:
    return [(load, t) for load in state.db.loads() for t in state.db.trials_at(load)]


def max_probes(shorts_per_long: float) -> int:
    """Band probes a target may run: fewer than the short trials one failed long trial costs, and
    at most MAX_PROBES (steering trials of 1/240 of the final ones allowed 192 per target, which
    a DUT outside the power laws, e.g. one with stalls, spent, into the 300-trial guard)."""
    return max(2, min(MAX_PROBES, round(PROBES_PER_SHORT * shorts_per_long)))


def band_probe(state: GoalSearchState, goal: SearchGoal, target: Target, upper_fps: float) -> float | None:
    """Where to look for a failing short trial so that the long trial one width below it lands
    at the bottom of the DUT's noise band (`vsperf.search.noise_band`); None when the candidate
    one width below `upper_fps` is already there (or within BOTTOM_SLACK of the band's span above
    it), or when the trials fit no band.

    The probe is the load a width above the band's safe bottom for the goal: a failure there is
    the new upper bound, and the long trial a width below it lands at the bottom. No grid, no
    climbing: every probe that passes (or loses a little) tells more about the bottom, whose
    margin then shrinks, so the next probe goes a little higher by itself. At most `max_probes`
    per target: a DUT whose loss follows no power law may mislead the estimate, and must then
    cost a bounded number of short trials, not the trial guard.
    """
    label = f"{target.label} {PROBE_LABEL}"
    # Scaled by the goal's final trials also at an intermediate target: its lower bound becomes the
    # final target's candidate.
    shorts_per_long = goal.final_duration_s / goal.initial_duration_s
    if shorts_per_long < MIN_SHORTS_PER_LONG:
        return None  # probes as dear as a tenth of a long trial cost more than they save
    if sum(1 for note in state.notes if note["goal"] == goal.name and note["target"] == label) >= max_probes(
            shorts_per_long):
        return None
    if sum(1 for note in state.notes if note["target"].endswith(PROBE_LABEL)) >= MAX_SEARCH_PROBES:
        return None  # where the band's bottom barely moves, 6 targets' 48 probes crept into the guard
    band = capacity_band(_judged_trials(state))
    if band is None:
        return None
    step = 1.0 - target.width
    bottom = band.safe_bottom_fps(target.loss_ratio)
    gap = upper_fps * step - bottom
    if gap <= 0:
        return None  # the candidate a width below the upper bound is as low as the band asks
    # How far above the bottom the candidate lies, in shares of the band's span (a steady DUT's
    # band has none: any distance is then far).
    span = band.span_fps(target.loss_ratio)
    above_bottom = gap / span if span > 0 else math.inf
    if above_bottom <= BOTTOM_SLACK:
        return None  # close enough: a probe costs more than the risk it removes
    probe = max(min(bottom, state.ceiling.max_load_fps) / step, upper_fps * step**MAX_PROBE_WIDTHS)
    if above_bottom <= OTHER_ANSWER_SLACK and _below_other_answer(state, goal, probe):
        return None
    if state.db.has(probe) and _passes_at(state, probe, target):
        # Only where the probe is clamped (MAX_PROBE_WIDTHS below the upper bound, a band far
        # below: stalls or a generator's own loss, not a power law) does it repeat a load: a pass
        # there said all a probe can, and repeating it ran into the trial guard.
        return None
    # Outside the load limits a probe would be measured elsewhere and never counted.
    return probe if state.min_load_fps <= probe <= state.ceiling.max_load_fps else None


def _below_other_answer(state: GoalSearchState, goal: SearchGoal, load_fps: float) -> bool:
    """Whether `load_fps` lies at or below the answer (relevant lower bound) of a goal with a larger
    loss ratio, which a short trial failing that ratio there would take back."""
    for other in state.cfg.goals:
        if other.loss_ratio > goal.loss_ratio:
            lower = relevant_bounds(state.db, other.targets(0)[-1]).lower_fps
            if lower is not None and load_fps <= lower * (1 + _EPS):
                return True
    return False


def far_split(state: GoalSearchState, target: Target, upper_fps: float) -> float | None:
    """A short trial halfway (in whole widths) between `upper_fps` and the highest load below it
    where any trial met the target's loss ratio, when that load lies more than FAR_WIDTHS widths
    below; 2 * FAR_WIDTHS widths below `upper_fps` when no trial below it met the ratio; None
    otherwise (the walk down from the upper bound is as cheap).

    The walk down from the upper bound moves one width per failing scout: when nothing shorter
    narrowed the target first (mlr with TRAFFICGEN_MLR_PRECEDING_TARGETS 0, the upper bound the
    maximum load and only a short pass near the capacity), 1 s scouts at 10 s finals ran into the
    trial guard hundreds of widths above the answer. Halving the gap costs a logarithmic number
    of short trials; a failure is the new upper bound, a pass the new floor. Only for such targets:
    after a short bisection (ndr_pdr, mlr's preceding targets) the walk is short, and splitting
    there too made bench_searches' worst ratios slightly worse.
    """
    below = [load for load in state.db.loads() if load < upper_fps * (1 - _EPS) and _passes_at(state, load, target)]
    step = 1.0 - target.width
    if below:
        widths = math.floor(math.log(max(below) / upper_fps) / math.log(step) + _EPS)
        if widths <= FAR_WIDTHS:
            return None
        probe = upper_fps * step ** (widths // 2)
    else:  # nothing passed below: a lucky pass was all there was, or the guess failed far above
        probe = max(state.min_load_fps, upper_fps * step ** (2 * FAR_WIDTHS))
    return probe if probe <= state.ceiling.max_load_fps else None


def confirm_target(state: GoalSearchState, goal: SearchGoal, target: Target, *, far_splits: bool = False) -> bool:
    """Narrow `target` from its relevant upper bound down, long trials only after scouts passed.

    When the lossy trials fit a noise band, short band probes first look for a failure just
    above the band's bottom (`band_probe`), so that the long trial a width below it rarely
    fails. Returns False when there is nothing to confirm from (no upper bound yet): the caller
    narrows with its own steps first. Returns True once the target is done (width met, or a load
    limit answered) or the trial guard stopped the search. `far_splits`: no shorter trials narrowed
    the target before (mlr without preceding targets), so short trials first halve a far gap
    between the upper bound and the passes below it (`far_split`).
    """
    short_s = goal.initial_duration_s
    while state.budget_left():
        bounds = relevant_bounds(state.db, target)
        lower, upper = bounds.lower_fps, bounds.upper_fps
        max_load, min_load = state.ceiling.max_load_fps, state.min_load_fps
        if upper is None:
            if lower is None and target.trial_duration_s > short_s:
                # The maximum load passed short trials only: before a long trial is staked there,
                # a probe at the band's safe bottom may show that the maximum lies in the band.
                probe = band_probe(state, goal, target, max_load / (1 - target.width))
                if probe is not None and probe < max_load * (1 - _EPS):
                    state.measure(probe, short_s, goal.name, f"{target.label} {PROBE_LABEL}")
                    continue
            return lower is not None and lower >= max_load * (1 - _EPS)
        if lower is None and upper <= min_load * (1 + _EPS):
            return True  # the minimum load is an upper bound
        width = bounds.width()
        if width is not None and width <= target.width + _EPS:
            return True
        candidate = max(min_load, min(upper * (1 - target.width), max_load))
        probe = band_probe(state, goal, target, upper) if target.trial_duration_s > short_s else None
        if probe is not None:
            state.measure(probe, short_s, goal.name, f"{target.label} {PROBE_LABEL}")
            continue
        split = far_split(state, target, upper) if far_splits and target.trial_duration_s > short_s else None
        if split is not None:
            state.measure(split, short_s, goal.name, f"{target.label} {SPLIT_LABEL}")
            continue
        if _scouts_passed(state, candidate, target) < 1:
            state.measure(candidate, short_s, goal.name, f"{target.label} scout")
        else:
            state.measure(candidate, target.trial_duration_s, goal.name, target.label)
    return True
