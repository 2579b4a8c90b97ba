"""What every search shares: the trial log and the VSPERF metrics of a rate trial.

`TrialLog` runs each trial through the measurer, tags it with its purpose ("search",
"learning", "verification", "repetition 2", ...), keeps it in order for the audit trail and
hands it to the `on_trial` callback (progress display, results written early).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from statistics import fmean
from typing import Any

from vsperf.search import hdr
from vsperf.search.measurer import LatencyStats, Measurer, TrialResult
from vsperf.search.outcome import MetricValue, SearchOutcome
from vsperf.traffic import Traffic
from vsperf.units import l2_mbps


def mean_or_zero(values: Sequence[float]) -> float:
    """The mean of `values`; 0.0 for none (a metric over no trial)."""
    return fmean(values) if values else 0.0


def traffic_time_s(trials: Iterable[TrialResult]) -> float:
    """Traffic time of `trials` (their durations, without the generator's waits)."""
    return sum(trial.duration_s for trial in trials)


def trial_totals(trials: Sequence[TrialResult]) -> dict[str, float | int]:
    """The count and traffic time of `trials`, as an outcome's details and a repetition's record say them."""
    return {"trial_count": len(trials), "trial_time_s": traffic_time_s(trials)}


OnTrial = Callable[[TrialResult], None]

# The only traffic the generators build is IPv4/UDP (see `vsperf.traffic.L3`).
TRAFFIC_TYPE_UDP = "udp"


class TrialLog:
    """Runs trials for one search and remembers them in the order they ran."""

    def __init__(self, measurer: Measurer, on_trial: OnTrial | None = None) -> None:
        self.measurer = measurer
        self.on_trial = on_trial
        self.trials: list[TrialResult] = []

    def _keep(self, trial: TrialResult, purpose: str) -> TrialResult:
        tagged = replace(trial, purpose=purpose)
        self.trials.append(tagged)
        if self.on_trial is not None:
            self.on_trial(tagged)
        return tagged

    def rate(self, traffic: Traffic, rate_fps: float, duration_s: float, purpose: str) -> TrialResult:
        """One trial at aggregate `rate_fps` for `duration_s`."""
        return self._keep(self.measurer.trial(traffic, rate_fps, duration_s), purpose)

    def burst(self, traffic: Traffic, frames: int, purpose: str) -> TrialResult:
        """One burst of `frames` frames at line rate."""
        return self._keep(self.measurer.burst(traffic, frames), purpose)

    @property
    def trial_time_s(self) -> float:
        """Traffic time of every trial so far (durations, without the generator's waits)."""
        return traffic_time_s(self.trials)

    def summary(self) -> dict[str, float | int]:
        """The count and total traffic time of the trials, for an outcome's details."""
        return trial_totals(self.trials)

    def outcome(
        self, metrics: dict[str, MetricValue], details: dict[str, Any], anomalies: Iterable[str]
    ) -> SearchOutcome:
        """The outcome of a search whose trials are all in this log (its details end with their
        count and traffic time)."""
        details = {**details, **self.summary()}
        return SearchOutcome(metrics=metrics, trials=tuple(self.trials), details=details, anomalies=tuple(anomalies))


def percent_of(rate_fps: float, line_fps: float) -> float:
    """`rate_fps` as a percentage of `line_fps`."""
    return 100.0 * rate_fps / line_fps if line_fps > 0 else 0.0


def latency_metrics(latency: LatencyStats | None) -> dict[str, MetricValue]:
    """VSPERF's latency keys (None when the generator did not measure latency), plus the
    percentiles the generator measured, as `p50_latency_ns`, `p99_latency_ns`, ..."""
    metrics: dict[str, MetricValue] = {
        "min_latency_ns": latency.min_ns if latency else None,
        "max_latency_ns": latency.max_ns if latency else None,
        "avg_latency_ns": latency.avg_ns if latency else None,
    }
    for name, value in (latency.percentiles_ns if latency else {}).items():
        metrics[f"{name}_latency_ns"] = value
    return metrics


def merge_latency(latencies: Iterable[LatencyStats | None]) -> LatencyStats | None:
    """Latency over several answers: lowest minimum, highest maximum, mean of the averages
    (and of the percentiles); when every answer kept its distribution, the distributions add up
    and the percentiles are theirs."""
    known = [lat for lat in latencies if lat is not None]
    if not known:
        return None
    # A percentile over several answers: the mean of theirs, for those every answer has.
    shared = set.intersection(*(set(lat.percentiles_ns) for lat in known))
    histogram = hdr.merge(lat.hdrh for lat in known) if all(lat.hdrh for lat in known) else ""
    return LatencyStats(
        min_ns=min(lat.min_ns for lat in known),
        avg_ns=sum(lat.avg_ns for lat in known) / len(known),
        max_ns=max(lat.max_ns for lat in known),
        percentiles_ns=hdr.percentiles(histogram) if histogram else
        {k: sum(lat.percentiles_ns[k] for lat in known) / len(known) for k in sorted(shared)},
        samples=sum(lat.samples for lat in known),
        hdrh=histogram,
    )


def rate_metrics(
    tx_rate_fps: float,
    rx_rate_fps: float,
    frame_loss_percent: float,
    latency: LatencyStats | None,
    traffic: Traffic,
) -> dict[str, MetricValue]:
    """VSPERF's keys of a rate result; *_percent against the traffic's line rate, *_mbps L2 bits."""
    line = traffic.line_rate_fps
    size = traffic.mean_frame_bytes  # a frame mix: its mean size
    return {
        "tx_rate_fps": tx_rate_fps,
        "throughput_rx_fps": rx_rate_fps,
        "tx_rate_mbps": l2_mbps(tx_rate_fps, size),
        "throughput_rx_mbps": l2_mbps(rx_rate_fps, size),
        "tx_rate_percent": percent_of(tx_rate_fps, line),
        "throughput_rx_percent": percent_of(rx_rate_fps, line),
        "frame_loss_percent": frame_loss_percent,
        **latency_metrics(latency),
    }


def trial_rate_metrics(trial: TrialResult, traffic: Traffic) -> dict[str, MetricValue]:
    """`rate_metrics` of one trial."""
    return rate_metrics(
        trial.actual_tx_rate_fps, trial.rx_rate_fps, trial.loss_percent, trial.latency, traffic
    )


def under_delivery_note(trial: TrialResult) -> str:
    """Plain-language anomaly for a trial the generator could not send at the requested rate."""
    return (
        f"generator under-delivered: asked for {trial.requested_rate_fps:.0f} fps, sent "
        f"{trial.actual_tx_rate_fps:.0f} fps ({trial.purpose or trial.kind} trial); its loss is "
        "measured against the frames actually sent, not counted as DUT loss at the requested rate"
    )


class Anomalies:
    """Anomaly messages in the order found, each once."""

    def __init__(self) -> None:
        self._items: dict[str, None] = {}

    def add(self, message: str) -> None:
        self._items.setdefault(message, None)

    def as_tuple(self) -> tuple[str, ...]:
        return tuple(self._items)
