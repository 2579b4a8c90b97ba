"""MLRsearch semantics (IETF draft-ietf-bmwg-mlrsearch): goals, load classification, relevant
bounds and conditional throughput. Pure functions over trials; the controllers that choose the
trials are in `vsperf.search.mlr` and `vsperf.search.ndr_pdr`.

A goal asks for the highest load at which, out of `duration_sum_s` seconds of trials of at least
`final_duration_s`, at most a share `exceed_ratio` lost more than `loss_ratio`, found to a
relative `width`. Every load the search tried is classified per goal from all its trials:

* full-length trials (duration >= final_duration_s) count as they are; short ones are weighed
  against each other (a short high-loss trial counts only beyond what the short low-loss trials
  balance at the exceed ratio);
* upper bound: even if every missing second of the duration sum were low-loss, too much of it
  would be high-loss; lower bound: even if every missing second were high-loss, the share would
  still be within the exceed ratio; otherwise undecided (more trials needed);
* relevant upper bound: the smallest upper bound; relevant lower bound: the largest lower bound
  below it; conditional throughput: the relevant lower bound times (1 - the loss ratio at the
  exceed-ratio quantile of its full-length trials, worst first).

With exceed ratio 0 and duration sum = final duration (the defaults), a lower bound is one
full-length trial without excess loss, and any high-loss trial, short or long, makes an upper
bound: RFC 2544's throughput with short trials allowed to steer the search.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from vsperf.errors import ConfigError
from vsperf.search.measurer import TrialResult

Classification = Literal["lower", "upper", "undecided"]
GoalStatus = Literal["regular", "max load is a lower bound", "min load is an upper bound", "not narrowed"]
GOAL_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
_SLACK = 1e-12  # float slack when comparing durations and ratios


@dataclass(frozen=True)
class SearchGoal:
    """One search goal: what counts as a lower bound, and how narrow the answer must be."""

    name: str  # lower-case identifier, prefix of the goal's metrics ("ndr", "pdr")
    loss_ratio: float  # a trial losing a larger share of its frames is high-loss
    exceed_ratio: float  # share of the duration sum high-loss trials may take at a lower bound
    final_duration_s: float  # trials at least this long are full-length
    duration_sum_s: float  # full-length seconds that decide a load
    width: float  # relative: done when (upper - lower) / upper <= width
    initial_duration_s: float  # shortest trials the controller runs for this goal

    def __post_init__(self) -> None:
        def bad(field_name: str, rule: str, value: object) -> ConfigError:
            return ConfigError(f"search goal {self.name!r}: {field_name} must be {rule}, got {value!r}")

        if not GOAL_NAME_RE.match(self.name):
            raise bad("name", "a lower-case identifier (letters, digits, '_')", self.name)
        if not 0 <= self.loss_ratio < 1:
            raise bad("loss ratio", "in [0, 1)", self.loss_ratio)
        if not 0 <= self.exceed_ratio < 1:
            raise bad("exceed ratio", "in [0, 1)", self.exceed_ratio)
        if not 0 < self.width < 1:
            raise bad("width", "in (0, 1)", self.width)
        if not 0 < self.initial_duration_s <= self.final_duration_s:
            raise bad("initial trial duration", f"in (0, final duration {self.final_duration_s:g} s]",
                      self.initial_duration_s)
        if self.duration_sum_s < self.final_duration_s:
            raise bad("duration sum", f">= the final trial duration {self.final_duration_s:g} s",
                      self.duration_sum_s)

    def targets(self, preceding: int) -> tuple[Target, ...]:
        """The goal's final target after `preceding` coarser ones, coarsest first.

        As the draft's preceding targets: the duration sum shrinks geometrically from the goal's
        to its initial trial duration (target i of n = preceding + 1 has a sum of
        initial * (sum / initial) ** (i / (n - 1)) seconds) and a target's trials last its sum, at
        most the final trial duration. With the defaults (sum = final duration) each target is
        one trial (1 s, 7.7 s, 60 s); with CSIT's goals (1 s trials, a sum of 21 s) the trials
        stay 1 s and the sums are 1, 4.6 and 21 s.

        Widths: a preceding target's width doubles (in log) per step back, as CSIT's: on a noisy
        DUT a narrow answer with short trials or small sums says little about the final one, and
        the coarser bounds are where the next target starts (its middle, for an exceed ratio; a
        width below the upper bound, for RFC 2544's goals). Issue 16 kept the goal's width at
        every stage; bench_searches measured the doubling (issue 22): mlr's median trial-seconds
        at 60 s finals on tail-drop DUTs -15 to -40 %, on gradual ones +5 to +10 %.
        """
        if preceding < 0:
            raise ValueError(f"preceding targets cannot be negative, got {preceding}")
        if self.initial_duration_s >= self.duration_sum_s:
            preceding = 0  # nothing smaller to steer with
        count = preceding + 1
        ratio = self.duration_sum_s / self.initial_duration_s
        out = []
        for index in range(count):
            final = index == count - 1
            sum_s = self.duration_sum_s if final else self.initial_duration_s * ratio ** (index / preceding)
            out.append(
                Target(
                    goal=self.name,
                    index=index,
                    count=count,
                    loss_ratio=self.loss_ratio,
                    exceed_ratio=self.exceed_ratio,
                    trial_duration_s=self.final_duration_s if final else min(self.final_duration_s, sum_s),
                    duration_sum_s=sum_s,
                    width=self.width if final else self._coarser_width(count - 1 - index),
                )
            )
        return tuple(out)

    def _coarser_width(self, steps: int) -> float:
        """The width of a preceding target `steps` before the final one: its log doubles per step
        (CSIT's), so halving it lands on the next target's width (see `targets`)."""
        return 1.0 - float((1.0 - self.width) ** (2**steps))

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "loss_percent": 100.0 * self.loss_ratio,
            "exceed_percent": 100.0 * self.exceed_ratio,
            "final_duration_s": self.final_duration_s,
            "duration_sum_s": self.duration_sum_s,
            "width_percent": 100.0 * self.width,
            "initial_duration_s": self.initial_duration_s,
        }


@dataclass(frozen=True)
class Target:
    """A goal's classification parameters at one stage of the search (the last one is the goal)."""

    goal: str
    index: int  # 0: coarsest
    count: int
    loss_ratio: float
    exceed_ratio: float
    trial_duration_s: float  # trials at least this long are full-length for this target
    duration_sum_s: float
    width: float

    @property
    def final(self) -> bool:
        return self.index == self.count - 1

    @property
    def label(self) -> str:
        """How a trial run for this target is tagged ("final", or "1.5 s target 1/3")."""
        if self.final:
            return "final"
        sum_s = f" (sum {self.duration_sum_s:.3g} s)" if self.duration_sum_s > self.trial_duration_s + _SLACK else ""
        return f"{self.trial_duration_s:.3g} s{sum_s} target {self.index + 1}/{self.count}"


@dataclass(frozen=True)
class LoadStats:
    """Trial seconds at one load, split by length and loss (for one target)."""

    full_low_s: float = 0.0
    full_high_s: float = 0.0
    short_low_s: float = 0.0
    short_high_s: float = 0.0


def high_loss(trial: TrialResult, loss_ratio: float) -> bool:
    """A trial is high-loss when it lost a larger share than `loss_ratio` (or sent nothing)."""
    return trial.tx_frames == 0 or trial.loss_ratio > loss_ratio + _SLACK


def load_stats(trials: tuple[TrialResult, ...] | list[TrialResult], target: Target) -> LoadStats:
    """Sum the durations of `trials` (all at one load) by length and loss for `target`."""
    sums = {"full_low_s": 0.0, "full_high_s": 0.0, "short_low_s": 0.0, "short_high_s": 0.0}
    for trial in trials:
        length = "full" if trial.duration_s >= target.trial_duration_s - _SLACK else "short"
        loss = "high" if high_loss(trial, target.loss_ratio) else "low"
        sums[f"{length}_{loss}_s"] += trial.duration_s
    return LoadStats(**sums)


def classify(trials: tuple[TrialResult, ...] | list[TrialResult], target: Target) -> Classification:
    """The draft's load classification of one load from all its trials."""
    s = load_stats(trials, target)
    er = target.exceed_ratio
    balancing_s = s.short_low_s * er / (1.0 - er)
    effective_high_s = s.full_high_s + max(0.0, s.short_high_s - balancing_s)
    effective_full_s = s.full_low_s + effective_high_s
    missing_s = max(0.0, target.duration_sum_s - effective_full_s)
    whole_s = max(target.duration_sum_s, effective_full_s)
    optimistic = effective_high_s / whole_s
    pessimistic = (effective_high_s + missing_s) / whole_s
    if optimistic > er + _SLACK:
        return "upper"
    if pessimistic <= er + _SLACK:
        return "lower"
    return "undecided"


class TrialDatabase:
    """Every trial of a search, by the load it measured (frames/s actually offered), and which
    goals it was run for (every trial counts for every goal's bounds; only a goal's own
    full-length trials count as its confirmations)."""

    def __init__(self) -> None:
        self._by_load: dict[float, list[TrialResult]] = {}
        self._run_for: dict[float, list[frozenset[str]]] = {}

    def add(self, load_fps: float, trial: TrialResult, run_for: frozenset[str] = frozenset()) -> None:
        """File `trial` under `load_fps`; `run_for`: the names of the goals it was run for."""
        self._by_load.setdefault(load_fps, []).append(trial)
        self._run_for.setdefault(load_fps, []).append(run_for)

    def trials_run_for(self, load_fps: float, goal_name: str) -> tuple[TrialResult, ...]:
        """The trials at `load_fps` that were run for the goal named `goal_name`."""
        pairs = zip(self._by_load.get(load_fps, ()), self._run_for.get(load_fps, ()), strict=True)
        return tuple(trial for trial, goals in pairs if goal_name in goals)

    def loads(self) -> list[float]:
        return sorted(self._by_load)

    def trials_at(self, load_fps: float) -> tuple[TrialResult, ...]:
        return tuple(self._by_load.get(load_fps, ()))

    def has(self, load_fps: float) -> bool:
        return load_fps in self._by_load


@dataclass(frozen=True)
class RelevantBounds:
    """The relevant bounds of one target, and the undecided loads between them."""

    lower_fps: float | None
    upper_fps: float | None
    undecided_fps: tuple[float, ...]

    def width(self) -> float | None:
        """Relative width (upper - lower) / upper; None while a bound is missing."""
        if self.lower_fps is None or self.upper_fps is None:
            return None
        return relative_width(self.lower_fps, self.upper_fps)


def relative_width(lower_fps: float, upper_fps: float) -> float:
    return (upper_fps - lower_fps) / upper_fps


def relevant_bounds(db: TrialDatabase, target: Target) -> RelevantBounds:
    """Smallest upper bound, largest lower bound below it, and the undecided loads between."""
    classes = {load: classify(db.trials_at(load), target) for load in db.loads()}
    upper = min((load for load, c in classes.items() if c == "upper"), default=None)
    lower = max(
        (load for load, c in classes.items() if c == "lower" and (upper is None or load < upper)), default=None
    )
    undecided = tuple(
        load
        for load, c in classes.items()
        if c == "undecided" and (lower is None or load > lower) and (upper is None or load < upper)
    )
    return RelevantBounds(lower, upper, undecided)


def quantile_loss_ratio(trials: tuple[TrialResult, ...], target: Target) -> float | None:
    """Loss ratio at the exceed-ratio quantile of the full-length trials, worst first (None:
    no full-length trial)."""
    full = [t for t in trials if t.duration_s >= target.trial_duration_s - _SLACK]
    if not full:
        return None
    remaining_s = target.exceed_ratio * max(target.duration_sum_s, sum(t.duration_s for t in full))
    quantile = 1.0
    for trial in sorted(full, key=lambda t: t.loss_ratio, reverse=True):
        quantile = trial.loss_ratio
        remaining_s -= trial.duration_s
        if remaining_s < 0:
            break
    return quantile


@dataclass(frozen=True)
class GoalResult:
    """What a search found for one goal."""

    goal: SearchGoal
    status: GoalStatus
    lower_bound_fps: float | None  # relevant lower bound (offered load)
    upper_bound_fps: float | None  # relevant upper bound
    conditional_throughput_fps: float | None  # lower bound * (1 - quantile loss ratio)
    quantile_loss_ratio: float | None
    lower_bound_trials: tuple[TrialResult, ...]  # the full-length trials at the lower bound
    # How sure the answer is: the spread of the forwarding rate over every trial at the lower
    # bound, % of the highest (None: no lower bound; 0 with one trial), and how many of the
    # full-length trials run for this goal failed it at loads above it (the search went on below).
    rx_spread_percent: float | None = None
    failed_confirmations: int = 0

    @property
    def full_trial_count(self) -> int:
        """Full-length trials behind the answer (1: it rests on a single trial)."""
        return len(self.lower_bound_trials)

    def as_dict(self) -> dict[str, Any]:
        return {
            "goal": self.goal.name,
            "status": self.status,
            "relevant_lower_bound_fps": self.lower_bound_fps,
            "relevant_upper_bound_fps": self.upper_bound_fps,
            "conditional_throughput_fps": self.conditional_throughput_fps,
            "quantile_loss_percent": None if self.quantile_loss_ratio is None else 100 * self.quantile_loss_ratio,
            "lower_bound_trial_count": len(self.lower_bound_trials),
            "rx_spread_percent": self.rx_spread_percent,
            "failed_confirmations": self.failed_confirmations,
        }


def goal_result(db: TrialDatabase, goal: SearchGoal, min_load_fps: float, max_load_fps: float) -> GoalResult:
    """The goal's result from every trial in `db`, between the lowest and highest load allowed."""
    target = goal.targets(0)[-1]
    bounds = relevant_bounds(db, target)
    lower, upper = bounds.lower_fps, bounds.upper_fps
    status: GoalStatus
    if lower is None and upper is not None and upper <= min_load_fps * (1 + _SLACK):
        status = "min load is an upper bound"
    elif upper is None and lower is not None and lower >= max_load_fps * (1 - _SLACK):
        status = "max load is a lower bound"
    elif lower is not None and upper is not None and relative_width(lower, upper) <= goal.width + _SLACK:
        status = "regular"
    else:
        status = "not narrowed"
    trials = db.trials_at(lower) if lower is not None else ()
    quantile = quantile_loss_ratio(trials, target) if lower is not None else None
    full = tuple(t for t in trials if t.duration_s >= target.trial_duration_s - _SLACK)
    # Only the goal's own confirmations: another goal's long trial (PDR's, losing a few frames
    # below its loss ratio) failing this goal's ratio is not a confirmation of this goal.
    failed = sum(
        1
        for load in db.loads()
        if lower is None or load > lower
        for t in db.trials_run_for(load, goal.name)
        if t.duration_s >= target.trial_duration_s - _SLACK and high_loss(t, goal.loss_ratio)
    )
    return GoalResult(
        goal=goal,
        status=status,
        lower_bound_fps=lower,
        upper_bound_fps=upper,
        conditional_throughput_fps=None if lower is None or quantile is None else lower * (1.0 - quantile),
        quantile_loss_ratio=quantile,
        lower_bound_trials=full,
        rx_spread_percent=rx_spread_percent(trials) if trials else None,
        failed_confirmations=failed,
    )


def rx_spread_percent(trials: tuple[TrialResult, ...]) -> float:
    """(highest - lowest) forwarding rate of `trials` (all at one load), % of the highest."""
    rates = [t.rx_rate_fps for t in trials]
    top = max(rates)
    return 100.0 * (top - min(rates)) / top if top > 0 else 0.0
