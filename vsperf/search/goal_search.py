"""Running a goal search (ndr_pdr or mlr): the state its controller works on, then learning,
repetitions, verification and the outcome.

Metrics: VSPERF's throughput keys (`tx_rate_fps`, `throughput_rx_fps`, ... as `rate_metrics`
makes them) describe the FIRST goal (NDR by default): `tx_rate_fps` is its relevant lower bound
(the offered load), `throughput_rx_fps` its conditional throughput (the load times one minus
the loss ratio at the exceed-ratio quantile of the full-length trials there; with exceed ratio 0
that is the received rate of the worst final trial). Every goal G also has `G_tx_rate_fps`,
`G_tx_rate_percent`, `G_throughput_rx_fps`, `G_throughput_rx_percent`, `G_throughput_rx_mbps`,
`G_upper_bound_fps` and `G_frame_loss_percent`, and how sure the answer is: `G_full_trials`
(full-length trials behind it), `G_rx_spread_percent` (spread of the forwarding rate over the
trials at that load) and `G_failed_confirmations` (the goal's own full-length trials that failed
its loss ratio above it, after which the search went on below; another goal's long trial, e.g. a
PDR confirmation that lost a few frames, is not one); with repetitions the values are averages and
`G_throughput_rx_fps_min` / `_max` are added. A goal without any lower bound counts as 0.

Details: the search parameters, each repetition's goal results, and `trial_outcomes`: for every
trial of the searches, the goal and target it was run for, whether it was high-loss for each
goal (`high_loss_for`) and whether it was judged (`judged`: False for a trial the generator
under-delivered that lost frames, whose loss may be the generator's own).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, NamedTuple

from vsperf.search.goal_config import GoalSearchConfig
from vsperf.search.measurer import Measurer, TrialResult
from vsperf.search.mlr_goals import (
    GoalResult,
    RelevantBounds,
    SearchGoal,
    Target,
    TrialDatabase,
    goal_result,
    high_loss,
)
from vsperf.search.no_answer import goal_search_failure
from vsperf.search.outcome import MetricValue, SearchOutcome
from vsperf.search.throughput import learning_trial
from vsperf.search.trials import (
    TRAFFIC_TYPE_UDP,
    Anomalies,
    OnTrial,
    TrialLog,
    mean_or_zero,
    merge_latency,
    percent_of,
    rate_metrics,
    trial_totals,
)
from vsperf.search.upper_bound import MIN_LOAD_PERCENT, LoadCeiling, generator_limit_notes
from vsperf.traffic import Traffic
from vsperf.units import l2_mbps

MAX_TRIALS_PER_SEARCH = 300  # a guard: every controller ends long before on any DUT
FINAL_ROUNDS = 8  # passes over the goals' final targets until none is open (see GoalSearchState.open_goals)
ALL_GOALS = "all goals"  # the goal label of a trial run for every goal (mlr's initial trials)


class Measured(NamedTuple):
    """A trial of a goal search and what the search made of it."""

    load_fps: float  # the load it measured (what was sent, if the generator fell short)
    trial: TrialResult
    judged: bool  # False: left out of the classification (see GoalSearchState.measure)


class GoalSearchState:
    """One repetition of a goal search: its trials by load, its load limits and its notes."""

    def __init__(self, log: TrialLog, traffic: Traffic, cfg: GoalSearchConfig, purpose_prefix: str = "") -> None:
        line = traffic.line_rate_fps
        self.log = log
        self.traffic = traffic
        self.cfg = cfg
        self.db = TrialDatabase()
        self.ceiling = LoadCeiling(cfg.max_rate_percent * line / 100.0, generator=log.measurer)
        self.min_load_fps = max(cfg.min_rate_percent, MIN_LOAD_PERCENT) * line / 100.0
        self.prefix = purpose_prefix
        self.first_trial = len(log.trials)
        self.notes: list[dict[str, Any]] = []
        self.exhausted = False
        self.guess_fps: float | None = None  # load of mlr's forwarding-rate guess, if it ran

    def on_grid(self, load_fps: float, lower_fps: float | None = None, upper_fps: float | None = None) -> float:
        """`load_fps` moved to the nearest load of the search's grid, the configured maximum load
        times whole powers of (1 - the narrowest goal width), if that load still lies strictly
        between `lower_fps` and `upper_fps` (else `load_fps` as it is). Loads chosen for
        different goals then coincide and share their trials (on a tail-drop DUT PDR's loads lie
        a width above NDR's when PDR's loss ratio is the width, as with the defaults)."""
        top = self.ceiling.configured_max_fps
        step = math.log1p(-min(g.width for g in self.cfg.goals))
        snapped = float(top * math.exp(step * round(math.log(load_fps / top) / step)))
        if lower_fps is not None and snapped <= lower_fps * (1 + 1e-9):
            return load_fps
        if upper_fps is not None and snapped >= upper_fps * (1 - 1e-9):
            return load_fps
        return snapped

    def budget_left(self) -> bool:
        """False once the search has run MAX_TRIALS_PER_SEARCH trials (it must stop then)."""
        if len(self.log.trials) - self.first_trial >= MAX_TRIALS_PER_SEARCH:
            self.exhausted = True
        return not self.exhausted

    def target_decided(self, bounds: RelevantBounds, target: Target) -> bool:
        """True when `target` needs no more trials: the maximum load is a lower bound, the minimum
        load an upper bound, or the bounds are within the target's width."""
        lower, upper, eps = bounds.lower_fps, bounds.upper_fps, 1e-9
        if upper is None and lower is not None and lower >= self.ceiling.max_load_fps * (1 - eps):
            return True
        if lower is None and upper is not None and upper <= self.min_load_fps * (1 + eps):
            return True
        width = bounds.width()
        return width is not None and width <= target.width + eps

    def measure(self, load_fps: float, duration_s: float, goal: str, label: str) -> Measured:
        """One trial at `load_fps` (kept within the load limits), filed under the load it measured.

        A trial the generator under-delivered AND that lost too much for some goal is not judged:
        the loss may be the generator's own (frames counted as sent that never left), so it only
        lowers the maximum load; the next trial at that maximum measures the DUT.
        """
        load = max(self.min_load_fps, self.ceiling.clamp(load_fps))
        trial = self.log.rate(self.traffic, load, duration_s, f"{self.prefix}{goal} {label}")
        measured = self.ceiling.observe(trial)
        high_for = [g.name for g in self.cfg.goals if high_loss(trial, g.loss_ratio)]
        judged = not (trial.under_delivered and high_for)
        if judged:
            self.db.add(measured, trial, self._run_for(goal))
        self.notes.append(
            {
                "trial_index": len(self.log.trials) - 1,
                "goal": goal,
                "target": label,
                "load_fps": measured,
                "duration_s": duration_s,
                "loss_percent": trial.loss_percent,
                "high_loss_for": high_for,
                "judged": judged,
            }
        )
        return Measured(measured, trial, judged)

    def _run_for(self, goal: str) -> frozenset[str]:
        """The goal names a trial labelled `goal` serves ("all goals", "ndr+pdr" or one name)."""
        names = [g.name for g in self.cfg.goals]
        return frozenset(names if goal == ALL_GOALS else [n for n in goal.split("+") if n in names])

    def open_goals(self, goals: Sequence[SearchGoal]) -> list[SearchGoal]:
        """The `goals` (in that order) whose final target the trials so far leave without an answer
        narrowed to its width (a later goal's trials may reopen an earlier goal's: a short trial
        that lost too much is an upper bound for every goal without an exceed ratio)."""
        return [g for g in goals
                if goal_result(self.db, g, self.min_load_fps, self.ceiling.max_load_fps).status == "not narrowed"]

    def answer(self, repetition: int) -> GoalSearchAnswer:
        return GoalSearchAnswer(
            repetition=repetition,
            results=tuple(
                goal_result(self.db, g, self.min_load_fps, self.ceiling.max_load_fps) for g in self.cfg.goals
            ),
            max_load_fps=self.ceiling.max_load_fps,
            ceiling=self.ceiling,
            exhausted=self.exhausted,
            trials=tuple(self.log.trials[self.first_trial :]),
        )


@dataclass(frozen=True)
class GoalSearchAnswer:
    """The result of one whole goal search (one repetition)."""

    repetition: int
    results: tuple[GoalResult, ...]  # one per goal, in the configuration's order
    max_load_fps: float  # the highest load allowed at the end (the generator may have lowered it)
    ceiling: LoadCeiling
    exhausted: bool  # stopped by the trial guard
    trials: tuple[TrialResult, ...]  # the trials of this repetition

    def as_dict(self) -> dict[str, Any]:
        return {
            "repetition": self.repetition,
            "max_load_fps": self.max_load_fps,
            "limited_by_generator": self.ceiling.limited_by_generator,
            "goals": {r.goal.name: r.as_dict() for r in self.results},
            **trial_totals(self.trials),
        }


SearchOnce = Callable[[GoalSearchState], None]


def goal_metrics(name: str, results: Sequence[GoalResult], traffic: Traffic) -> dict[str, MetricValue]:
    """One goal's metrics over the repetitions (see the module docstring)."""
    line, size = traffic.line_rate_fps, traffic.mean_frame_bytes  # a frame mix: its mean size
    lower = mean_or_zero([r.lower_bound_fps or 0.0 for r in results])
    rx_values = [r.conditional_throughput_fps or 0.0 for r in results]
    rx = mean_or_zero(rx_values)
    uppers = [r.upper_bound_fps for r in results]
    losses = [100.0 * r.quantile_loss_ratio for r in results if r.quantile_loss_ratio is not None]
    spreads = [r.rx_spread_percent for r in results if r.rx_spread_percent is not None]
    metrics: dict[str, MetricValue] = {
        f"{name}_tx_rate_fps": lower,
        f"{name}_tx_rate_percent": percent_of(lower, line),
        f"{name}_throughput_rx_fps": rx,
        f"{name}_throughput_rx_percent": percent_of(rx, line),
        f"{name}_throughput_rx_mbps": l2_mbps(rx, size),
        f"{name}_upper_bound_fps": mean_or_zero([u for u in uppers if u is not None]) if None not in uppers else None,
        f"{name}_frame_loss_percent": mean_or_zero(losses) if losses else None,
        # How sure: the fewest full-length trials behind a repetition's answer, the widest
        # forwarding-rate spread at an answer, and the failed confirmations above the answers.
        f"{name}_full_trials": min(r.full_trial_count for r in results),
        f"{name}_rx_spread_percent": max(spreads) if spreads else None,
        f"{name}_failed_confirmations": sum(r.failed_confirmations for r in results),
    }
    if len(results) > 1:
        metrics[f"{name}_throughput_rx_fps_min"] = min(rx_values)
        metrics[f"{name}_throughput_rx_fps_max"] = max(rx_values)
    return metrics


def _status_note(result: GoalResult, traffic: Traffic, trial_count: int) -> str | None:
    goal, line = result.goal, traffic.line_rate_fps
    if result.status == "min load is an upper bound":
        where = f" ({percent_of(result.upper_bound_fps, line):.3f} % of line rate)" if result.upper_bound_fps else ""
        return (
            f"{goal.name}: even the lowest load tried{where} lost more than {100 * goal.loss_ratio:g} % "
            f"of its frames; {goal.name} is 0"
        )
    if result.status == "max load is a lower bound":
        return (
            f"{goal.name}: the highest load allowed met the goal, so {goal.name} is only a lower bound "
            "(the DUT may forward more)"
        )
    if result.status == "not narrowed":
        return (
            f"{goal.name}: the search stopped after {trial_count} trials before its bounds were within "
            f"{100 * goal.width:g} %; the answer is the relevant lower bound found so far (0 if none)"
        )
    return None


def _verify(
    log: TrialLog, traffic: Traffic, cfg: GoalSearchConfig, answers: Sequence[GoalSearchAnswer], anomalies: Anomalies
) -> dict[str, Any]:
    """One trial of verify_duration_s at each goal's (average) lower bound; reported, not re-searched."""
    out: dict[str, Any] = {}
    line = traffic.line_rate_fps
    for index, goal in enumerate(cfg.goals):
        lowers = [lb for a in answers if (lb := a.results[index].lower_bound_fps) is not None]
        if not lowers:
            out[goal.name] = {"passed": False, "skipped": "no lower bound"}
            continue
        rate = mean_or_zero(lowers)
        trial = log.rate(traffic, rate, cfg.verify_duration_s, f"{goal.name} verification")
        passed = not high_loss(trial, goal.loss_ratio)
        out[goal.name] = {"rate_fps": rate, "loss_percent": trial.loss_percent, "passed": passed}
        if not passed:
            anomalies.add(
                f"{goal.name} not confirmed: a {cfg.verify_duration_s:g} s verification trial at "
                f"{percent_of(rate, line):.3f} % of line rate lost {trial.loss_percent:.4f} % (goal: at most "
                f"{100 * goal.loss_ratio:g} %)"
            )
    return out


def run_goal_search(
    measurer: Measurer,
    traffic: Traffic,
    cfg: GoalSearchConfig,
    algorithm: str,
    search_once: SearchOnce,
    on_trial: OnTrial | None = None,
) -> SearchOutcome:
    """Run `search_once` (a controller) `cfg.repetitions` times, with the optional learning and
    verification trials, and return the metrics of every goal."""
    log = TrialLog(measurer, on_trial)
    anomalies = Anomalies()
    line = traffic.line_rate_fps
    learning_percent = learning_trial(log, traffic, cfg.max_rate_percent, cfg.learning_duration_s)
    answers: list[GoalSearchAnswer] = []
    notes: list[dict[str, Any]] = []
    for rep in range(1, cfg.repetitions + 1):
        state = GoalSearchState(log, traffic, cfg, "" if rep == 1 else f"repetition {rep}: ")
        search_once(state)
        answers.append(state.answer(rep))
        notes.extend(state.notes)
    for answer in answers:
        for result in answer.results:
            note = _status_note(result, traffic, len(answer.trials))
            if note:
                anomalies.add(note)
    verification = _verify(log, traffic, cfg, answers, anomalies) if cfg.verify else None
    lowest = min(answers, key=lambda a: a.max_load_fps)
    at_max = any(r.status == "max load is a lower bound" for a in answers for r in a.results)
    for note in generator_limit_notes(lowest.ceiling, log.trials, traffic, at_max):
        anomalies.add(note)

    primary = [a.results[0] for a in answers]
    lb_trials = [t for r in primary for t in r.lower_bound_trials]
    rx_values = [r.conditional_throughput_fps or 0.0 for r in primary]
    losses = [100.0 * r.quantile_loss_ratio for r in primary if r.quantile_loss_ratio is not None]
    metrics: dict[str, MetricValue] = rate_metrics(
        mean_or_zero([r.lower_bound_fps or 0.0 for r in primary]),
        mean_or_zero(rx_values),
        mean_or_zero(losses) if losses else 0.0,
        merge_latency(t.latency for t in lb_trials),
        traffic,
    )
    metrics["throughput_rx_fps_min"] = min(rx_values)
    metrics["throughput_rx_fps_max"] = max(rx_values)
    for index, goal in enumerate(cfg.goals):
        metrics.update(goal_metrics(goal.name, [a.results[index] for a in answers], traffic))
    metrics["search_trial_time_s"] = log.trial_time_s
    metrics.update({"type": "rfc2544_throughput", "packet_size": traffic.frame_size_bytes,
                    "traffic_type": TRAFFIC_TYPE_UDP})
    details: dict[str, Any] = {
        "search": {
            "algorithm": algorithm,
            **{k: v for k, v in asdict(cfg).items() if k != "goals"},
            "goals": [g.as_dict() for g in cfg.goals],
            "line_rate_fps": line,
            "min_load_percent": max(cfg.min_rate_percent, MIN_LOAD_PERCENT),
            "learning_rate_percent": learning_percent,
        },
        "repetitions": [a.as_dict() for a in answers],
        "trial_outcomes": notes,
        "verification": verification,
    }
    failure = goal_search_failure(algorithm, [a.results for a in answers], [a.exhausted for a in answers],
                                  MAX_TRIALS_PER_SEARCH, [t for a in answers for t in a.trials], traffic)
    if failure is not None:
        anomalies.add(failure)
    return replace(log.outcome(metrics, details, anomalies.as_tuple()), failure=failure)
