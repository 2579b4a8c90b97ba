"""Pieces the tests beyond the throughput search share when they build their outcome.

* `keep_phase`: a trial that came inside a capability result (the overload phase of a recovery
  trial, the stream of a reset trial, ...) goes into the trial log like any other, tagged with
  its purpose, and reaches the `on_trial` callback.
* `row_keys`: the keys every result row ends with (VSPERF's `type`, `packet_size`, `traffic_type`).
* `not_measured`: the outcome of a test that could not measure at this frame size (no throughput
  to run at, throughput at line rate, ...): its metrics are None (not measured), never a guess,
  and an anomaly says why.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from vsperf.search.measurer import TrialResult
from vsperf.search.outcome import MetricValue, SearchOutcome
from vsperf.search.select import KnownThroughput
from vsperf.search.trials import TRAFFIC_TYPE_UDP, TrialLog, under_delivery_note
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
    return {"type": traffic_type, "packet_size": traffic.frame_size_bytes, "traffic_type": TRAFFIC_TYPE_UDP}


def under_delivery_notes(trials: Iterable[TrialResult]) -> list[str]:
    """One anomaly per trial the generator could not send at the requested rate."""
    return [under_delivery_note(t) for t in trials if t.under_delivered]


def not_measured(
    traffic_type: str,
    traffic: Traffic,
    metric_names: Sequence[str],
    reason: str,
    throughput: KnownThroughput,
    details: dict[str, Any] | None = None,
) -> SearchOutcome:
    """The outcome of a test that measured nothing at this frame size, and why."""
    trials = throughput.trials
    metrics: dict[str, MetricValue] = dict.fromkeys(metric_names)
    metrics["throughput_fps"] = throughput.rate_fps
    metrics.update(row_keys(traffic_type, traffic))
    return SearchOutcome(
        metrics=metrics,
        trials=trials,
        details={
            **(details or {}),
            "throughput": throughput.as_dict(),
            "not_measured": reason,
            "trial_count": len(trials),
            "trial_time_s": sum(t.duration_s for t in trials),
        },
        anomalies=(*throughput.anomalies, reason),
    )
