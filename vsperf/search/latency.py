"""RFC 2544 latency (section 26.2): trials at the throughput rate, repeated, with the latency the
generator timestamps.

The rate is the throughput (see `vsperf.search.select`: given by the runner, set by
TRAFFICGEN_THROUGHPUT_PERCENT, or measured first). Each of `repetitions` trials (RFC 2544: 20)
runs `duration_s` (RFC 2544: at least 120 s). RFC 2544 timestamps one tagged frame per trial and
reports the average over the trials; a generator that timestamps every frame gives the latency
of all of them. Both are the same computation here: `avg_latency_ns` is the mean of the trials'
averages (for one tagged frame per trial, exactly RFC 2544's value), `min_latency_ns` the lowest
and `max_latency_ns` the highest value seen, `<p>_latency_ns` (e.g. `p99_latency_ns`) the mean of
each percentile the generator reported. `latency_method` says which method the generator used:
"all frames" when every received frame was timestamped, else "tagged frames".

A generator that returns no latency cannot run this test: it fails with a TrafficGenError
(never a number it did not measure).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from vsperf.errors import TrafficGenError
from vsperf.search.at_throughput import AtThroughputTest, any_measurer
from vsperf.search.config import check_field, config_from_settings, from_setting
from vsperf.search.measurer import DutControl, LatencyStats, Measurer, TrialResult, generator_name
from vsperf.search.outcome import MetricValue, SearchOutcome
from vsperf.search.outcome_build import AtThroughput, under_delivery_notes
from vsperf.search.trials import mean_or_zero, percent_of

TRAFFIC_TYPE = "rfc2544_latency"
METRICS = ("min_latency_ns", "avg_latency_ns", "max_latency_ns", "tx_rate_fps", "tx_rate_percent")


@dataclass(frozen=True)
class LatencyConfig:
    """RFC 2544 latency trials."""

    duration_s: float = field(metadata=from_setting("TRAFFICGEN_LATENCY_DURATION_S"))  # one trial (RFC 2544: >= 120 s)
    repetitions: int = field(metadata=from_setting("TRAFFICGEN_LATENCY_REPETITIONS"))  # trials (RFC 2544: 20)

    def __post_init__(self) -> None:
        check_field(self, "duration_s", self.duration_s > 0, "> 0")
        check_field(self, "repetitions", self.repetitions >= 1, ">= 1")


def latency_config_from_settings(settings: Mapping[str, Any]) -> LatencyConfig:
    return config_from_settings(LatencyConfig, settings)


def latency_summary(stats: list[LatencyStats], trials: list[TrialResult]) -> dict[str, MetricValue]:
    """The latency metrics over the trials (see the module docstring)."""
    averages = [s.avg_ns for s in stats]
    out: dict[str, MetricValue] = {
        "min_latency_ns": min(s.min_ns for s in stats),
        "avg_latency_ns": mean_or_zero(averages),
        "max_latency_ns": max(s.max_ns for s in stats),
        "avg_latency_ns_min": min(averages),
        "avg_latency_ns_max": max(averages),
    }
    for name in sorted({key for s in stats for key in s.percentiles_ns}):
        values = [s.percentiles_ns[name] for s in stats if name in s.percentiles_ns]
        out[f"{name}_latency_ns"] = mean_or_zero(values)
    out["latency_samples"] = sum(s.samples for s in stats)
    every_frame = all(s.samples >= t.rx_frames > 0 for s, t in zip(stats, trials, strict=True))
    out["latency_method"] = "all frames" if every_frame else "tagged frames"
    return out


def _measure(run: AtThroughput, measurer: Measurer, cfg: LatencyConfig, _dut: DutControl | None) -> SearchOutcome:
    """`cfg.repetitions` latency trials at the throughput."""
    traffic, anomalies = run.traffic, run.anomalies
    line = traffic.line_rate_fps
    trials: list[TrialResult] = []
    stats: list[LatencyStats] = []
    for rep in range(1, cfg.repetitions + 1):
        trial = run.log.rate(traffic, run.known.rate_fps, cfg.duration_s, f"latency {rep}/{cfg.repetitions}")
        if trial.latency is None:
            raise TrafficGenError(
                f"generator {generator_name(measurer)} measured no latency: it cannot run {TRAFFIC_TYPE} trials"
            )
        trials.append(trial)
        stats.append(trial.latency)
    sent = sum(t.tx_frames for t in trials)
    lost = sum(t.loss_frames for t in trials)
    loss_percent = 100.0 * lost / sent if sent else 100.0
    if lost:
        anomalies.add(
            f"the latency trials lost {loss_percent:.4f} % of their frames: the rate is above what the DUT "
            "forwards without loss, so the latency includes queueing in a full buffer"
        )
    for note in under_delivery_notes(trials):
        anomalies.add(note)
    tx_rate = mean_or_zero([t.actual_tx_rate_fps for t in trials])
    metrics: dict[str, MetricValue] = {
        **latency_summary(stats, trials),
        "tx_rate_fps": tx_rate,
        "tx_rate_percent": percent_of(tx_rate, line),
        "frame_loss_percent": loss_percent,
    }
    details: dict[str, Any] = {
        "parameters": {**asdict(cfg), "line_rate_fps": line},
        "latency_trials": [
            {"min_ns": s.min_ns, "avg_ns": s.avg_ns, "max_ns": s.max_ns, "samples": s.samples,
             "loss_percent": t.loss_percent}
            for s, t in zip(stats, trials, strict=True)
        ],
    }
    return run.outcome(metrics, details)


# `cfg.repetitions` latency trials at the throughput `throughput()` returns.
rfc2544_latency: AtThroughputTest[LatencyConfig, Measurer] = AtThroughputTest(
    TRAFFIC_TYPE, METRICS, any_measurer, _measure,
    no_rate="no throughput to run at (no rate passed): latency not measured",
)
