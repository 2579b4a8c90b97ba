"""RFC 2544 throughput: the highest rate whose loss stays within TRAFFICGEN_LOSSRATE.

Binary search on the aggregate offered rate, in percent of the traffic's line rate, between
`min_rate_percent` and `max_rate_percent`; the first trial is at the maximum (a pass there
ends the search) and the search stops when the bounds are `resolution_percent` apart. The
answer is the best passing trial: `throughput_rx_fps` is its received rate.

Generator limits: a trial the generator could not send at the requested rate is flagged by
the measurer (`TrialResult.under_delivered`). Its loss is not taken as the DUT's loss at the
requested rate; instead the rate the generator did send becomes the ceiling of the search
(the upper bound), a pass there is a pass at that rate, and the outcome says the generator
was the limit.

Repetitions (TRAFFICGEN_RFC2544_TESTS): the whole search runs N times; the metrics are the
averages, with `throughput_rx_fps_min` / `_max` and each repetition's answer in the details.

Optional trials around the search:
* learning (`learning_duration_s` > 0): one trial at `LEARNING_RATE_PERCENT` of line rate first,
  so that switches learn addresses; it is recorded but never judged.
* verification (`verify`): one trial of `verify_duration_s` at the answer's offered rate. If it
  passes, its measurement is the reported answer (a long trial is what RFC 2544 asks for the
  final value). If it loses too much, an anomaly is added and one more verification runs one
  resolution step lower; if that passes it becomes the answer, otherwise the search's answer is
  kept and flagged as not confirmed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from vsperf.search.config import ThroughputSearchConfig
from vsperf.search.measurer import Measurer, TrialResult
from vsperf.search.no_answer import binary_failure
from vsperf.search.outcome import MetricValue, SearchOutcome
from vsperf.search.trials import (
    TRAFFIC_TYPE_UDP,
    Anomalies,
    OnTrial,
    TrialLog,
    mean_or_zero,
    merge_latency,
    percent_of,
    rate_metrics,
    trial_rate_metrics,
    trial_totals,
)
from vsperf.search.upper_bound import MIN_LOAD_PERCENT
from vsperf.traffic import Traffic

LEARNING_RATE_PERCENT = 1.0  # low enough to lose nothing on any DUT, as VSPERF's T-Rex learning did
MAX_SEARCH_TRIALS = 200  # a guard only: bisection to a resolution > 0 ends long before
_EPSILON_PERCENT = 1e-9


def trial_passed(trial: TrialResult, loss_rate_percent: float) -> bool:
    """A trial passes when it sent something and lost at most `loss_rate_percent`."""
    return trial.tx_frames > 0 and trial.loss_percent <= loss_rate_percent


@dataclass(frozen=True)
class ThroughputAnswer:
    """The result of one whole search (one repetition)."""

    repetition: int
    best: TrialResult | None  # the passing trial at the highest rate; None: nothing passed
    lowest_failure: TrialResult | None  # the failing trial at the lowest rate
    lower_bound_percent: float  # final bounds of the bisection, % of line rate
    upper_bound_percent: float
    generator_ceiling_percent: float | None  # lowest rate an under-delivering generator reached
    trials: tuple[TrialResult, ...]  # the trials of this repetition
    exhausted: bool = False  # stopped by MAX_SEARCH_TRIALS before the bounds were a resolution apart

    @property
    def limited_by_generator(self) -> bool:
        """True when nothing below what the generator could send failed: the DUT may do more."""
        return (
            self.generator_ceiling_percent is not None
            and self.upper_bound_percent >= self.generator_ceiling_percent - _EPSILON_PERCENT
        )

    def as_dict(self) -> dict[str, Any]:
        best = self.best
        return {
            "repetition": self.repetition,
            "passed": best is not None,
            "throughput_rx_fps": best.rx_rate_fps if best else 0.0,
            "tx_rate_fps": best.actual_tx_rate_fps if best else 0.0,
            "frame_loss_percent": best.loss_percent if best else None,
            "lower_bound_percent": self.lower_bound_percent,
            "upper_bound_percent": self.upper_bound_percent,
            "generator_ceiling_percent": self.generator_ceiling_percent,
            **trial_totals(self.trials),
        }


def search_throughput_once(
    log: TrialLog, traffic: Traffic, cfg: ThroughputSearchConfig, purpose: str, repetition: int = 1
) -> ThroughputAnswer:
    """One binary search; every trial goes through `log` tagged with `purpose`."""
    line = traffic.line_rate_fps
    first = len(log.trials)
    lo, hi = cfg.min_rate_percent, cfg.max_rate_percent
    floor = max(cfg.min_rate_percent, MIN_LOAD_PERCENT)  # lowest rate worth a trial
    best: TrialResult | None = None
    lowest_failure: TrialResult | None = None
    ceiling: float | None = None
    tested: set[float] = set()
    rate = hi
    resolution = cfg.resolution_percent
    rescaled = False
    exhausted = True
    for _ in range(MAX_SEARCH_TRIALS):
        trial = log.rate(traffic, rate * line / 100.0, cfg.duration_s, purpose)
        tested.add(rate)
        effective = rate
        if trial.under_delivered:
            # What the generator sent is the most that can be tested: the new ceiling.
            effective = percent_of(trial.actual_tx_rate_fps, line)
            ceiling = effective if ceiling is None else min(ceiling, effective)
        if trial_passed(trial, cfg.loss_rate_percent):
            if best is None or trial.actual_tx_rate_fps > best.actual_tx_rate_fps:
                best = trial
            lo = max(lo, effective)
            if trial.under_delivered:
                hi = lo
        else:
            if lowest_failure is None or trial.actual_tx_rate_fps < lowest_failure.actual_tx_rate_fps:
                lowest_failure = trial
            hi = max(lo, min(hi, effective))
        if hi - lo <= resolution + _EPSILON_PERCENT:
            # Nothing passed yet and less than a resolution step is left (e.g. a generator whose
            # ceiling is a fraction of the step): ending here would answer 0. The rest is searched
            # once more with the same resolution relative to what is left, as if its top were the
            # line rate.
            relative = cfg.resolution_percent * hi / 100.0
            if best is not None or rescaled or hi <= floor + _EPSILON_PERCENT or relative >= resolution:
                exhausted = False
                break
            resolution, rescaled = relative, True
        rate = (lo + hi) / 2.0
    if best is None and cfg.min_rate_percent > 0 and cfg.min_rate_percent not in tested:
        # The bisection assumed the lower bound passes; nothing did, so check it.
        trial = log.rate(traffic, cfg.min_rate_percent * line / 100.0, cfg.duration_s, purpose)
        if trial_passed(trial, cfg.loss_rate_percent):
            best = trial
        else:
            lowest_failure = trial
    return ThroughputAnswer(
        repetition=repetition,
        best=best,
        lowest_failure=lowest_failure,
        lower_bound_percent=lo,
        upper_bound_percent=hi,
        generator_ceiling_percent=ceiling,
        trials=tuple(log.trials[first:]),
        exhausted=exhausted,
    )


def _verify(
    log: TrialLog, traffic: Traffic, cfg: ThroughputSearchConfig, rate_percent: float, anomalies: Anomalies
) -> tuple[dict[str, Any], TrialResult | None]:
    """Verification trial(s) at the answer; returns details and the trial to report (if any)."""
    line = traffic.line_rate_fps
    attempts: list[dict[str, Any]] = []
    rates = [rate_percent]
    lower = max(cfg.min_rate_percent, rate_percent - cfg.resolution_percent)
    if 0 < lower < rate_percent:
        rates.append(lower)
    for attempt, pct in enumerate(rates, start=1):
        purpose = "verification" if attempt == 1 else f"verification {attempt}"
        trial = log.rate(traffic, pct * line / 100.0, cfg.verify_duration_s, purpose)
        ok = trial_passed(trial, cfg.loss_rate_percent)
        attempts.append({"rate_percent": pct, "loss_percent": trial.loss_percent, "passed": ok})
        if ok:
            if attempt > 1:
                anomalies.add(
                    f"throughput reported at {pct:.3f} % of line rate, one resolution step below the "
                    "search's answer, where the verification trial passed"
                )
            return {"confirmed": True, "attempts": attempts}, trial
        anomalies.add(
            f"verification trial at {pct:.3f} % of line rate lost {trial.loss_percent:.4f} % "
            f"(allowed {cfg.loss_rate_percent} %) over {cfg.verify_duration_s:g} s"
        )
    anomalies.add("throughput not confirmed by verification: the reported value is the search's answer")
    return {"confirmed": False, "attempts": attempts}, None


def _generator_anomalies(
    log: TrialLog, answers: Sequence[ThroughputAnswer], traffic: Traffic, anomalies: Anomalies
) -> None:
    short = [t for t in log.trials if t.under_delivered]
    if not short:
        return
    lowest = min(short, key=lambda t: t.actual_tx_rate_fps)
    lowest_percent = percent_of(lowest.actual_tx_rate_fps, traffic.line_rate_fps)
    anomalies.add(
        f"generator under-delivered in {len(short)} of {len(log.trials)} trials (lowest: sent "
        f"{lowest.actual_tx_rate_fps:.0f} fps = {lowest_percent:.3f} % of line rate when asked for "
        f"{lowest.requested_rate_fps:.0f} fps); rates above what it sent were not tested and its "
        "shortfall is not counted as DUT loss"
    )
    if any(a.limited_by_generator and a.best is not None for a in answers):
        ceiling = min(a.generator_ceiling_percent for a in answers if a.generator_ceiling_percent is not None)
        anomalies.add(
            "the traffic generator was the limit: the search's upper bound is the highest rate it could "
            f"send ({ceiling:.3f} % of line rate), so the DUT may forward more than the reported throughput"
        )


def learning_trial(log: TrialLog, traffic: Traffic, max_rate_percent: float, duration_s: float) -> float | None:
    """VSPERF's learning trial before a search, so that the DUT has learned the flows: `duration_s`
    at LEARNING_RATE_PERCENT of line rate (at most `max_rate_percent`). Returns that rate, % of
    line rate, or None when `duration_s` is 0 (no learning trial)."""
    if duration_s <= 0:
        return None
    percent = min(LEARNING_RATE_PERCENT, max_rate_percent)
    log.rate(traffic, percent * traffic.line_rate_fps / 100.0, duration_s, "learning")
    return percent


def rfc2544_throughput(
    measurer: Measurer, traffic: Traffic, cfg: ThroughputSearchConfig, on_trial: OnTrial | None = None
) -> SearchOutcome:
    """Run the RFC 2544 throughput search (with learning, repetitions and verification as
    configured) and return VSPERF's throughput metrics, every trial and the search's details."""
    log = TrialLog(measurer, on_trial)
    anomalies = Anomalies()
    line = traffic.line_rate_fps
    learning_percent = learning_trial(log, traffic, cfg.max_rate_percent, cfg.learning_duration_s)

    answers = [
        search_throughput_once(log, traffic, cfg, "search" if rep == 1 else f"repetition {rep}", rep)
        for rep in range(1, cfg.repetitions + 1)
    ]
    passing = [a.best for a in answers if a.best is not None]
    rx_values = [a.best.rx_rate_fps if a.best else 0.0 for a in answers]
    tx_values = [a.best.actual_tx_rate_fps if a.best else 0.0 for a in answers]
    if passing:
        loss_percent = mean_or_zero([t.loss_percent for t in passing])
    else:
        failures = [a.lowest_failure for a in answers if a.lowest_failure is not None]
        loss_percent = min(t.loss_percent for t in failures) if failures else 0.0
    guard = next((len(a.trials) for a in answers if a.exhausted), None)
    failure = binary_failure(cfg.loss_rate_percent, [t for a in answers for t in a.trials],
                             len(answers) - len(passing), len(answers), guard, traffic)
    if failure is not None:
        anomalies.add(f"{failure}; throughput is 0" if not passing else failure)
    tx_rate_fps = mean_or_zero(tx_values)  # the throughput
    latency = merge_latency(t.latency for t in passing)
    metrics: dict[str, MetricValue] = rate_metrics(tx_rate_fps, mean_or_zero(rx_values), loss_percent, latency, traffic)

    verification: dict[str, Any] | None = None
    if cfg.verify and passing:
        verification, reported = _verify(log, traffic, cfg, percent_of(tx_rate_fps, line), anomalies)
        if reported is not None:
            metrics.update(trial_rate_metrics(reported, traffic))
    elif cfg.verify:
        verification = {"confirmed": False, "attempts": [], "skipped": "no rate passed"}
    _generator_anomalies(log, answers, traffic, anomalies)

    metrics.update(
        {
            "throughput_rx_fps_min": min(rx_values),
            "throughput_rx_fps_max": max(rx_values),
            "type": "rfc2544_throughput",
            "packet_size": traffic.frame_size_bytes,
            "traffic_type": TRAFFIC_TYPE_UDP,
        }
    )
    details: dict[str, Any] = {
        "search": {
            "algorithm": "binary",
            **asdict(cfg),
            "line_rate_fps": line,
            "learning_rate_percent": learning_percent,
        },
        "repetitions": [a.as_dict() for a in answers],
        "verification": verification,
    }
    return replace(log.outcome(metrics, details, anomalies.as_tuple()), failure=failure)
