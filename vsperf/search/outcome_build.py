"""Pieces the tests beyond the throughput search share when they build their outcome.

* `keep_phase`: a trial that came inside a capability result (the overload phase of a recovery
  trial, the stream of a reset trial, ...) goes into the trial log like any other, tagged with
  its purpose, and reaches the `on_trial` callback.
* `row_keys`: the keys every result row ends with (VSPERF's `type`, `packet_size`, `traffic_type`).
* `AtThroughput` (with `known_anomalies` and `after_throughput`): a test that runs at the
  throughput starts its anomalies with the throughput search's and ends its outcome with the
  throughput, its trials and VSPERF's row keys.
* `not_measured`: the outcome of a test that could not measure at this frame size (no throughput
  to run at, throughput at line rate, ...): its metrics are None (not measured), never a guess,
  and an anomaly says why.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from vsperf.search.measurer import UNDER_DELIVERY_TOLERANCE, Measurer, TrialResult
from vsperf.search.outcome import MetricValue, SearchOutcome
from vsperf.search.select import KnownThroughput
from vsperf.search.trials import TRAFFIC_TYPE_UDP, Anomalies, OnTrial, TrialLog, trial_totals, under_delivery_note
from vsperf.traffic import Traffic


def keep_phase(log: TrialLog, trial: TrialResult, purpose: str) -> TrialResult:
    """Record `trial` in `log` with `purpose`, as `TrialLog.rate` does for a trial it ran."""
    tagged = replace(trial, purpose=purpose)
    log.trials.append(tagged)
    if log.on_trial is not None:
        log.on_trial(tagged)
    return tagged


def row_keys(traffic_type: str, traffic: Traffic) -> dict[str, MetricValue]:
    """VSPERF's per-row attributes."""
    return {"type": traffic_type, "packet_size": traffic.packet_size, "traffic_type": TRAFFIC_TYPE_UDP}


def under_delivery_notes(trials: Iterable[TrialResult]) -> list[str]:
    """One anomaly per trial the generator could not send at the requested rate."""
    return [under_delivery_note(t) for t in trials if t.under_delivered]


def known_anomalies(throughput: KnownThroughput) -> Anomalies:
    """The anomalies of a test run at `throughput`, starting with those of its search."""
    anomalies = Anomalies()
    for note in throughput.anomalies:
        anomalies.add(note)
    return anomalies


def after_throughput(
    traffic_type: str,
    traffic: Traffic,
    throughput: KnownThroughput,
    trials: Sequence[TrialResult],
    metrics: dict[str, MetricValue],
    details: dict[str, Any],
    anomalies: Iterable[str],
) -> SearchOutcome:
    """The outcome of a test that ran `trials` at `throughput`: its trials and trial count include
    the throughput search's, its metrics end with the throughput and VSPERF's row keys."""
    all_trials = (*throughput.trials, *trials)
    return SearchOutcome(
        metrics={**metrics, "throughput_fps": throughput.rate_fps, **row_keys(traffic_type, traffic)},
        trials=all_trials,
        details={**details, "throughput": throughput.as_dict(), **trial_totals(all_trials)},
        anomalies=tuple(anomalies),
        failure=throughput.failure,  # no throughput to run at: the test fails with its search
    )


def not_measured(
    traffic_type: str,
    traffic: Traffic,
    metric_names: Sequence[str],
    reason: str,
    throughput: KnownThroughput,
    details: dict[str, Any] | None = None,
) -> SearchOutcome:
    """The outcome of a test that measured nothing at this frame size, and why."""
    return after_throughput(
        traffic_type, traffic, throughput, (), dict.fromkeys(metric_names), {**(details or {}), "not_measured": reason},
        (*throughput.anomalies, reason),
    )


@dataclass(frozen=True)
class AtThroughput:
    """A test that runs at the throughput (latency, recovery, reset): the throughput, the log of
    its own trials and its anomalies (the throughput search's first), and how its outcome ends."""

    traffic_type: str
    metric_names: tuple[str, ...]
    traffic: Traffic
    known: KnownThroughput
    log: TrialLog
    anomalies: Anomalies

    @classmethod
    def start(
        cls,
        traffic_type: str,
        metric_names: Sequence[str],
        measurer: Measurer,
        traffic: Traffic,
        throughput: Callable[[], KnownThroughput],
        on_trial: OnTrial | None,
    ) -> AtThroughput:
        """Get the throughput (given, configured, or measured now)."""
        known = throughput()
        log = TrialLog(measurer, on_trial)
        return cls(traffic_type, tuple(metric_names), traffic, known, log, known_anomalies(known))

    @property
    def at_line_rate(self) -> bool:
        """The throughput is the line rate: nothing above it to overload, no buffer filled."""
        return self.known.rate_fps >= self.traffic.line_rate_fps * (1 - UNDER_DELIVERY_TOLERANCE)

    def not_measured(self, reason: str) -> SearchOutcome:
        """See `not_measured`."""
        return not_measured(self.traffic_type, self.traffic, self.metric_names, reason, self.known)

    def outcome(self, metrics: dict[str, MetricValue], details: dict[str, Any]) -> SearchOutcome:
        """See `after_throughput`: the outcome of the trials in `log`."""
        return after_throughput(
            self.traffic_type, self.traffic, self.known, self.log.trials, metrics, details, self.anomalies.as_tuple()
        )
