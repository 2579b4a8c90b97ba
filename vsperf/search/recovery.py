"""RFC 2544 system recovery (section 26.5): overload, drop the rate, date the last lost frame.

From the throughput (see `vsperf.search.select`), the generator sends at `overload_percent` of it
(RFC 2544: 110 %, at most line rate) for `overload_s` (RFC 2544: at least 60 s), then at
`drop_percent` of that rate (RFC 2544: 50 %) for `after_s`. The recovery time is the time from
the drop (Timestamp A) to the last frame lost among those sent after it (Timestamp B), 0 when
none was; the test runs `repetitions` times and reports the mean, minimum and maximum.

This needs a generator that dates lost frames (`RecoveryMeasurer`); any other fails the test
with a TrafficGenError before the first trial. When the throughput is the line rate, the DUT
cannot be overloaded and nothing is measured (the metrics are None and an anomaly says why).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from vsperf.search.at_throughput import AtThroughputTest
from vsperf.search.config import check_field, config_from_settings, from_setting
from vsperf.search.measurer import DutControl, Measurer, RecoveryMeasurer, missing_capability
from vsperf.search.outcome import MetricValue, SearchOutcome
from vsperf.search.outcome_build import AtThroughput, keep_phase
from vsperf.search.trials import mean_or_zero, percent_of

TRAFFIC_TYPE = "rfc2544_recovery"
METRICS = ("recovery_time_s", "recovery_time_s_min", "recovery_time_s_max", "overload_rate_fps")


@dataclass(frozen=True)
class RecoveryConfig:
    """The overload-then-drop trials: `overload_percent` of the throughput (at most line rate) for
    `overload_s`, then `drop_percent` of that rate for `after_s`, `repetitions` times."""

    overload_percent: float = field(metadata=from_setting("TRAFFICGEN_RECOVERY_OVERLOAD_PERCENT"))
    overload_s: float = field(metadata=from_setting("TRAFFICGEN_RECOVERY_OVERLOAD_S"))
    drop_percent: float = field(metadata=from_setting("TRAFFICGEN_RECOVERY_DROP_PERCENT"))
    # traffic after the drop; a longer recovery is reported as a lower bound
    after_s: float = field(metadata=from_setting("TRAFFICGEN_RECOVERY_AFTER_S"))
    repetitions: int = field(metadata=from_setting("TRAFFICGEN_RECOVERY_REPETITIONS"))

    def __post_init__(self) -> None:
        check_field(self, "overload_percent", self.overload_percent > 100, "> 100")
        check_field(self, "overload_s", self.overload_s > 0, "> 0")
        check_field(self, "drop_percent", 0 < self.drop_percent < 100, "in (0, 100)")
        check_field(self, "after_s", self.after_s > 0, "> 0")
        check_field(self, "repetitions", self.repetitions >= 1, ">= 1")


def recovery_config_from_settings(settings: Mapping[str, Any]) -> RecoveryConfig:
    return config_from_settings(RecoveryConfig, settings)


def _recovery_measurer(measurer: Measurer) -> RecoveryMeasurer:
    """`measurer` if it dates lost frames; checked before the throughput search runs, so that a
    generator that cannot run the test fails before its first trial."""
    if not isinstance(measurer, RecoveryMeasurer):
        raise missing_capability(measurer, TRAFFIC_TYPE, "recovery_trial")
    return measurer


def _measure(
    run: AtThroughput, measurer: RecoveryMeasurer, cfg: RecoveryConfig, _dut: DutControl | None
) -> SearchOutcome:
    """Overload, drop, date the last loss, `cfg.repetitions` times."""
    traffic, log, anomalies = run.traffic, run.log, run.anomalies
    line = traffic.line_rate_fps
    if run.at_line_rate:
        return run.not_measured(
            "the throughput is the line rate: the DUT cannot be overloaded, so recovery is not measured"
        )
    overload_fps = min(run.known.rate_fps * cfg.overload_percent / 100.0, line)
    recovery_fps = overload_fps * cfg.drop_percent / 100.0
    times: list[float] = []
    resolutions: list[float] = []
    per_trial: list[dict[str, Any]] = []
    for rep in range(1, cfg.repetitions + 1):
        result = measurer.recovery_trial(traffic, overload_fps, cfg.overload_s, recovery_fps, cfg.after_s)
        overload = keep_phase(log, result.overload, f"recovery {rep}/{cfg.repetitions}: overload")
        after = keep_phase(log, result.recovery, f"recovery {rep}/{cfg.repetitions}: after the drop")
        times.append(result.last_loss_after_drop_s)
        resolutions.append(result.resolution_s)
        per_trial.append({"recovery_time_s": result.last_loss_after_drop_s, "resolution_s": result.resolution_s,
                          "overload_loss_percent": overload.loss_percent, "after_loss_percent": after.loss_percent})
        if overload.under_delivered:
            anomalies.add(
                f"the generator sent {percent_of(overload.actual_tx_rate_fps, line):.3f} % of line rate instead of "
                f"the overload's {percent_of(overload_fps, line):.3f} %: the DUT may not have been overloaded"
            )
        if overload.tx_frames > 0 and overload.loss_frames == 0:
            anomalies.add(
                f"the overload phase at {percent_of(overload_fps, line):.3f} % of line rate lost no frame: the DUT "
                "was not overloaded (its throughput may be higher than the one used)"
            )
        if result.last_loss_after_drop_s >= cfg.after_s - result.resolution_s:
            anomalies.add(
                f"frames were still lost at the end of the {cfg.after_s:g} s after the drop: the recovery time is "
                "at least that (a lower bound); raise TRAFFICGEN_RECOVERY_AFTER_S"
            )
    phases = list(log.trials)
    overloads, afters = phases[0::2], phases[1::2]
    metrics: dict[str, MetricValue] = {
        "recovery_time_s": mean_or_zero(times),
        "recovery_time_s_min": min(times),
        "recovery_time_s_max": max(times),
        "recovery_time_resolution_s": max(resolutions),
        "overload_rate_fps": overload_fps,
        "overload_rate_percent": percent_of(overload_fps, line),
        "recovery_rate_fps": recovery_fps,
        "recovery_rate_percent": percent_of(recovery_fps, line),
        "overload_frame_loss_percent": mean_or_zero([t.loss_percent for t in overloads]),
        "recovery_frame_loss_percent": mean_or_zero([t.loss_percent for t in afters]),
        "recovery_lost_frames": mean_or_zero([float(t.loss_frames) for t in afters]),
    }
    details: dict[str, Any] = {"parameters": {**asdict(cfg), "line_rate_fps": line}, "recovery_trials": per_trial}
    return run.outcome(metrics, details)


# Measure the system recovery time `cfg.repetitions` times (see the module docstring).
rfc2544_recovery: AtThroughputTest[RecoveryConfig, RecoveryMeasurer] = AtThroughputTest(
    TRAFFIC_TYPE, METRICS, _recovery_measurer, _measure,
    no_rate="no throughput (no rate passed): recovery not measured",
)
