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

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from vsperf.search.config import check, integer, number
from vsperf.search.measurer import DutControl, Measurer, ResetMeasurer, missing_capability
from vsperf.search.outcome import MetricValue, SearchOutcome
from vsperf.search.outcome_build import keep_phase, not_measured, row_keys, under_delivery_notes
from vsperf.search.select import KnownThroughput
from vsperf.search.trials import Anomalies, OnTrial, TrialLog, percent_of
from vsperf.traffic import Traffic

TRAFFIC_TYPE = "rfc2544_reset"
METRICS = ("reset_time_s", "reset_time_s_min", "reset_time_s_max", "reset_time_frame_loss_s")


@dataclass(frozen=True)
class ResetConfig:
    """The stream around each reset."""

    duration_s: float  # the whole stream; must outlast the reset
    reset_at_s: float  # when the reset starts, seconds into the stream
    repetitions: int

    def __post_init__(self) -> None:
        check(self.duration_s > 0, "TRAFFICGEN_RESET_DURATION_S", self.duration_s, "> 0")
        check(0 <= self.reset_at_s < self.duration_s, "TRAFFICGEN_RESET_AT_S", self.reset_at_s,
              f"in [0, TRAFFICGEN_RESET_DURATION_S={self.duration_s:g})")
        check(self.repetitions >= 1, "TRAFFICGEN_RESET_REPETITIONS", self.repetitions, ">= 1")


def reset_config_from_settings(settings: Mapping[str, Any]) -> ResetConfig:
    return ResetConfig(
        duration_s=number(settings, "TRAFFICGEN_RESET_DURATION_S"),
        reset_at_s=number(settings, "TRAFFICGEN_RESET_AT_S"),
        repetitions=integer(settings, "TRAFFICGEN_RESET_REPETITIONS"),
    )


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def rfc2544_reset(
    measurer: Measurer,
    traffic: Traffic,
    cfg: ResetConfig,
    throughput: Callable[[], KnownThroughput],
    on_trial: OnTrial | None = None,
    dut: DutControl | None = None,
) -> SearchOutcome:
    """Measure the reset time `cfg.repetitions` times (see the module docstring)."""
    if not isinstance(measurer, ResetMeasurer):
        raise missing_capability(measurer, TRAFFIC_TYPE, "reset_trial")
    known = throughput()
    line = traffic.line_rate_fps
    if known.rate_fps <= 0:
        return not_measured(TRAFFIC_TYPE, traffic, METRICS, "no throughput (no rate passed): reset not measured",
                            known)
    log = TrialLog(measurer, on_trial)
    anomalies = Anomalies()
    for note in known.anomalies:
        anomalies.add(note)
    restart = dut.restart if dut is not None else None
    gaps: list[float] = []
    loss_times: list[float] = []
    per_trial: list[dict[str, Any]] = []
    for rep in range(1, cfg.repetitions + 1):
        result = measurer.reset_trial(traffic, known.rate_fps, cfg.duration_s, cfg.reset_at_s, restart)
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
    tx_rate = _mean([t.actual_tx_rate_fps for t in trials])
    metrics: dict[str, MetricValue] = {
        "reset_time_s": _mean(gaps),
        "reset_time_s_min": min(gaps),
        "reset_time_s_max": max(gaps),
        "reset_time_frame_loss_s": _mean(loss_times),
        "reset_time_resolution_s": max(r["resolution_s"] for r in per_trial),
        "reset_lost_frames": _mean([float(t.loss_frames) for t in trials]),
        "tx_rate_fps": tx_rate,
        "tx_rate_percent": percent_of(tx_rate, line),
        "throughput_fps": known.rate_fps,
        **row_keys(TRAFFIC_TYPE, traffic),
    }
    all_trials = (*known.trials, *log.trials)
    details: dict[str, Any] = {
        "parameters": {**asdict(cfg), "line_rate_fps": line, "reset_action": "given" if dut else "none"},
        "throughput": known.as_dict(),
        "reset_trials": per_trial,
        "trial_count": len(all_trials),
        "trial_time_s": sum(t.duration_s for t in all_trials),
    }
    return SearchOutcome(metrics=metrics, trials=all_trials, details=details, anomalies=anomalies.as_tuple())
