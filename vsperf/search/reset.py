"""RFC 2544 reset (section 26.6), with RFC 6201's two methods: stream at the throughput, reset
the DUT, measure how long it forwarded nothing.

The generator streams at the throughput (see `vsperf.search.select`; RFC 2544 asks for the
smallest frame size) for `duration_s` and, `reset_at_s` seconds in, calls the DUT's restart (the
deployment's `DutControl.restart`, e.g. restarting ovs-vswitchd or re-creating the bridge):

* `reset_time_s` (RFC 6201 timestamp method): from the last frame received before the reset to
  the first one received after it, as the generator dates them;
* `reset_time_frame_loss_s` (RFC 6201 frame-loss method): frames lost / offered rate.

The test runs `repetitions` times (mean, minimum and maximum are reported). A DUT that forwards
nothing again before the stream ends gives a lower bound, and an anomaly says so. This needs a
`ResetMeasurer`; any other generator fails the test before its first trial.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from vsperf.search.at_throughput import AtThroughputTest
from vsperf.search.config import check_field, config_from_settings, from_setting
from vsperf.search.measurer import DutControl, Measurer, ResetMeasurer, missing_capability
from vsperf.search.outcome import MetricValue, SearchOutcome
from vsperf.search.outcome_build import AtThroughput, keep_phase, under_delivery_notes
from vsperf.search.trials import mean_or_zero, percent_of

TRAFFIC_TYPE = "rfc2544_reset"
METRICS = ("reset_time_s", "reset_time_s_min", "reset_time_s_max", "reset_time_frame_loss_s")


@dataclass(frozen=True)
class ResetConfig:
    """The stream around each reset: `duration_s` long (it must outlast the DUT's restart), the
    reset starting `reset_at_s` seconds into it, `repetitions` times."""

    duration_s: float = field(metadata=from_setting("TRAFFICGEN_RESET_DURATION_S"))
    reset_at_s: float = field(metadata=from_setting("TRAFFICGEN_RESET_AT_S"))
    repetitions: int = field(metadata=from_setting("TRAFFICGEN_RESET_REPETITIONS"))

    def __post_init__(self) -> None:
        check_field(self, "duration_s", self.duration_s > 0, "> 0")
        check_field(self, "reset_at_s", 0 <= self.reset_at_s < self.duration_s,
                    f"in [0, TRAFFICGEN_RESET_DURATION_S={self.duration_s:g})")
        check_field(self, "repetitions", self.repetitions >= 1, ">= 1")


def reset_config_from_settings(settings: Mapping[str, Any]) -> ResetConfig:
    return config_from_settings(ResetConfig, settings)


def _reset_measurer(measurer: Measurer) -> ResetMeasurer:
    """`measurer` if it can stream through a reset and date the gap at the receiver; checked, like
    every capability, before the throughput search's first trial."""
    if not isinstance(measurer, ResetMeasurer):
        raise missing_capability(measurer, TRAFFIC_TYPE, "reset_trial")
    return measurer


def _measure(run: AtThroughput, measurer: ResetMeasurer, cfg: ResetConfig, dut: DutControl | None) -> SearchOutcome:
    """Stream, reset the DUT through `dut`, date the silence, `cfg.repetitions` times."""
    log, anomalies = run.log, run.anomalies
    line = run.traffic.line_rate_fps
    restart = dut.restart if dut is not None else None
    gaps: list[float] = []
    loss_times: list[float] = []
    per_trial: list[dict[str, Any]] = []
    for rep in range(1, cfg.repetitions + 1):
        result = measurer.reset_trial(run.traffic, run.known.rate_fps, cfg.duration_s, cfg.reset_at_s, restart)
        trial = keep_phase(log, result.trial, f"reset {rep}/{cfg.repetitions}")
        rate = trial.actual_tx_rate_fps
        loss_time = trial.loss_frames / rate if rate > 0 else 0.0
        gaps.append(result.gap_s)
        loss_times.append(loss_time)
        per_trial.append({"reset_time_s": result.gap_s, "reset_time_frame_loss_s": loss_time,
                          "lost_frames": trial.loss_frames, "recovered": result.recovered,
                          "resolution_s": result.resolution_s, "reset_at_s": result.reset_at_s})
        if not result.recovered:
            anomalies.add(
                f"the DUT forwarded nothing after a reset before the {cfg.duration_s:g} s stream ended: the reset "
                "time is at least the gap reported (a lower bound); raise TRAFFICGEN_RESET_DURATION_S"
            )
    for note in under_delivery_notes(log.trials):
        anomalies.add(note)
    trials = list(log.trials)
    tx_rate = mean_or_zero([t.actual_tx_rate_fps for t in trials])
    metrics: dict[str, MetricValue] = {
        "reset_time_s": mean_or_zero(gaps),
        "reset_time_s_min": min(gaps),
        "reset_time_s_max": max(gaps),
        "reset_time_frame_loss_s": mean_or_zero(loss_times),
        "reset_time_resolution_s": max(r["resolution_s"] for r in per_trial),
        "reset_lost_frames": mean_or_zero([float(t.loss_frames) for t in trials]),
        "tx_rate_fps": tx_rate,
        "tx_rate_percent": percent_of(tx_rate, line),
    }
    details: dict[str, Any] = {
        "parameters": {**asdict(cfg), "line_rate_fps": line, "reset_action": "given" if dut else "none"},
        "reset_trials": per_trial,
    }
    return run.outcome(metrics, details)


# Measure the reset time `cfg.repetitions` times (see the module docstring).
rfc2544_reset: AtThroughputTest[ResetConfig, ResetMeasurer] = AtThroughputTest(
    TRAFFIC_TYPE, METRICS, _reset_measurer, _measure, no_rate="no throughput (no rate passed): reset not measured"
)
