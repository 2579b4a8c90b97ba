"""Single-trial traffic types: continuous (a fixed rate for a duration) and burst (N frames).

Neither searches: each runs one trial and reports what it measured, with VSPERF's keys.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from vsperf.search.config import BurstConfig, ContinuousConfig
from vsperf.search.measurer import Measurer
from vsperf.search.outcome import MetricValue, SearchOutcome
from vsperf.search.outcome_build import row_keys, under_delivery_notes
from vsperf.search.trials import OnTrial, TrialLog, latency_metrics, trial_rate_metrics
from vsperf.traffic import Traffic


def rfc2544_continuous(
    measurer: Measurer, traffic: Traffic, cfg: ContinuousConfig, on_trial: OnTrial | None = None
) -> SearchOutcome:
    """One trial at `cfg.rate_percent` of the traffic's line rate for `cfg.duration_s`."""
    log = TrialLog(measurer, on_trial)
    line = traffic.line_rate_fps
    trial = log.rate(traffic, cfg.rate_percent * line / 100.0, cfg.duration_s, "continuous")
    metrics: dict[str, MetricValue] = {**trial_rate_metrics(trial, traffic), **row_keys("rfc2544_continuous", traffic)}
    details = {"parameters": {**asdict(cfg), "line_rate_fps": line}}
    return log.outcome(metrics, details, under_delivery_notes(log.trials))


def burst(
    measurer: Measurer, traffic: Traffic, frames: int, on_trial: OnTrial | None = None
) -> SearchOutcome:
    """One burst of `frames` frames (aggregate) at line rate, reported with VSPERF's burst keys.

    `payload_err` and `seq_err` are VSPERF's keys for payload and sequence errors; no measurer
    counts them yet, so they are None (not measured).
    """
    cfg = BurstConfig(frames=frames)
    log = TrialLog(measurer, on_trial)
    trial = log.burst(traffic, cfg.frames, "burst")
    size = traffic.mean_frame_bytes  # a frame mix: its mean size
    metrics: dict[str, MetricValue] = {
        "tx_frames": trial.tx_frames,
        "rx_frames": trial.rx_frames,
        "tx_bytes": round(trial.tx_frames * size),
        "rx_bytes": round(trial.rx_frames * size),
        "frame_loss_percent": trial.loss_percent,
        "payload_err": None,
        "seq_err": None,
        **latency_metrics(trial.latency),
        **row_keys("burst", traffic),
    }
    details: dict[str, Any] = {"parameters": {**asdict(cfg), "line_rate_fps": traffic.line_rate_fps}}
    return log.outcome(metrics, details, under_delivery_notes(log.trials))
