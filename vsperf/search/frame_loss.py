"""RFC 2544 frame loss rate (section 26.3): the loss curve from the maximum load down.

The first trial is at TRAFFICGEN_RFC2544_MAX_RATE_PERCENT (100 % of line rate by default), the
next ones `step_percent` lower each (RFC 2544: steps of at most 10 %), until two successive trials
lose no frame (or the load would reach 0). Every trial lasts TRAFFICGEN_DURATION.

A load the generator could not send is measured at the rate it did send (its loss is counted
against the frames sent) and the curve continues with the next step below that rate; the
anomalies say so. The curve is a result: `details["curve"]` lists every point, and each point
is also a metric `frame_loss_percent_at_<offered load>_percent` (the offered load as a percentage
of line rate, e.g. `frame_loss_percent_at_90_percent`) so that the CSV has one column per load.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from vsperf.search.config import config_from_settings, from_setting
from vsperf.search.load_steps import LOWEST_LOAD_PERCENT, LoadSteps
from vsperf.search.measurer import Measurer
from vsperf.search.outcome import MetricValue, SearchOutcome
from vsperf.search.outcome_build import row_keys
from vsperf.search.trials import Anomalies, OnTrial, TrialLog, percent_of
from vsperf.search.upper_bound import LoadCeiling, generator_limit_notes
from vsperf.traffic import Traffic

TRAFFIC_TYPE = "rfc2544_frame_loss"
ZERO_LOSS_STREAK = 2  # RFC 2544: stop after two successive trials without loss


@dataclass(frozen=True)
class FrameLossConfig(LoadSteps):
    """The frame loss rate curve (RFC 2544: steps of at most 10 % of line rate)."""

    MAX_STEP_PERCENT: ClassVar[float] = 10.0
    STEP_RULE: ClassVar[str] = "in (0, 10] (RFC 2544: steps of at most 10 %)"

    step_percent: float = field(metadata=from_setting("TRAFFICGEN_FRAME_LOSS_STEP_PERCENT"))


def frame_loss_config_from_settings(settings: Mapping[str, Any]) -> FrameLossConfig:
    return config_from_settings(FrameLossConfig, settings)


def load_key(offered_percent: float) -> str:
    """The metric name of one point of the curve."""
    return f"frame_loss_percent_at_{round(offered_percent, 3):g}_percent"


def rfc2544_frame_loss(
    measurer: Measurer, traffic: Traffic, cfg: FrameLossConfig, on_trial: OnTrial | None = None
) -> SearchOutcome:
    """Measure the frame loss curve (see the module docstring)."""
    log = TrialLog(measurer, on_trial)
    anomalies = Anomalies()
    line = traffic.line_rate_fps
    ceiling = LoadCeiling(cfg.max_rate_percent * line / 100.0, measurer)
    curve: list[dict[str, Any]] = []
    step, streak = 0, 0
    percent = cfg.max_rate_percent
    while percent > LOWEST_LOAD_PERCENT and streak < ZERO_LOSS_STREAK:
        trial = log.rate(traffic, ceiling.clamp(percent * line / 100.0), cfg.duration_s, f"{percent:g} % load")
        offered_percent = percent_of(ceiling.observe(trial), line)
        curve.append(
            {
                "requested_percent": percent,
                "offered_percent": offered_percent,
                "offered_fps": trial.actual_tx_rate_fps,
                "rx_rate_fps": trial.rx_rate_fps,
                "frame_loss_percent": trial.loss_percent,
                "tx_frames": trial.tx_frames,
                "rx_frames": trial.rx_frames,
            }
        )
        streak = streak + 1 if trial.tx_frames > 0 and trial.loss_frames == 0 else 0
        step, percent = cfg.next_step(step, offered_percent)
    for note in generator_limit_notes(ceiling, log.trials, traffic, answered_at_max=False):
        anomalies.add(note)
    if streak < ZERO_LOSS_STREAK:
        anomalies.add(
            f"the curve reached the lowest load ({curve[-1]['offered_percent']:.3f} % of line rate) "
            "without two successive trials free of loss"
        )
    zero = [p["offered_percent"] for p in curve if p["tx_frames"] > 0 and p["frame_loss_percent"] == 0]
    first = curve[0]
    metrics: dict[str, MetricValue] = {
        "frame_loss_percent": first["frame_loss_percent"],
        "tx_rate_fps": first["offered_fps"],
        "tx_rate_percent": first["offered_percent"],
        "throughput_rx_fps": first["rx_rate_fps"],
        "max_zero_loss_rate_percent": max(zero) if zero else None,
        "frame_loss_points": len(curve),
    }
    for point in curve:
        metrics[load_key(point["offered_percent"])] = point["frame_loss_percent"]
    metrics.update(row_keys(TRAFFIC_TYPE, traffic))
    details: dict[str, Any] = {
        "parameters": {**asdict(cfg), "line_rate_fps": line},
        "curve": curve,
    }
    return log.outcome(metrics, details, anomalies.as_tuple())
