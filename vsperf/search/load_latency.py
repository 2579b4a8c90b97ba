"""Latency at chosen loads after a throughput search, as CSIT measures it (0, 10, 50, 90 % of PDR).

TRAFFICGEN_LATENCY_LOADS_PERCENT lists the loads, in % of the rate of one answer of the search
(TRAFFICGEN_LATENCY_LOADS_GOAL: a goal of ndr_pdr or mlr, e.g. pdr, whose load is its lower bound
`<goal>_tx_rate_fps`; or "throughput", the search's throughput answer `tx_rate_fps`, the binary
search's only one). A load of 0 % sends TRAFFICGEN_LATENCY_LOADS_LOW_FPS, a low fixed rate (the
DUT's latency without load). Each load is one trial of TRAFFICGEN_LATENCY_LOADS_DURATION_S with
its own latency (its own histogram with TRAFFIC latency_histogram on), added to the search's
outcome: metrics `<goal><load>_<stat>_latency_ns` (e.g. `pdr90_p99_latency_ns`,
`pdr0_avg_latency_ns`) and `<goal><load>_frame_loss_percent`, and `details["load_latency"]`,
one entry per load (its rate, its trial's position in the trials, its latency), which the report
shows together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from vsperf.errors import ConfigError
from vsperf.search.measurer import Measurer, TrialResult, generator_name
from vsperf.search.outcome import MetricValue, SearchOutcome
from vsperf.search.trials import OnTrial, TrialLog

THROUGHPUT_GOAL = "throughput"
PURPOSE_PREFIX = "latency at "


@dataclass(frozen=True)
class LoadLatencyConfig:
    """Which loads, relative to which answer."""

    loads_percent: tuple[float, ...]  # % of the goal's rate, 0..100 (0: low_rate_fps)
    goal: str  # a goal's name, or "throughput"
    low_rate_fps: float  # the 0 % load
    duration_s: float  # each load's trial

    def __post_init__(self) -> None:
        if not self.loads_percent or any(not 0 <= p <= 100 for p in self.loads_percent):
            raise ConfigError(f"TRAFFICGEN_LATENCY_LOADS_PERCENT {list(self.loads_percent)}: loads must be "
                              f"0..100 % of the {self.goal} rate")
        if self.low_rate_fps <= 0 or self.duration_s <= 0:
            raise ConfigError("TRAFFICGEN_LATENCY_LOADS_LOW_FPS and _DURATION_S must be > 0")

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], goals: Sequence[str]) -> LoadLatencyConfig | None:
        """The configuration of the settings for a search with `goals` (None: no load latency).
        A goal the search does not have is a one-line ConfigError."""
        loads = tuple(float(p) for p in settings["TRAFFICGEN_LATENCY_LOADS_PERCENT"])
        if not loads:
            return None
        goal = str(settings["TRAFFICGEN_LATENCY_LOADS_GOAL"])
        valid = (*goals, THROUGHPUT_GOAL)
        if goal not in valid:
            raise ConfigError(f"TRAFFICGEN_LATENCY_LOADS_GOAL {goal!r}: the throughput search (TRAFFICGEN_SEARCH) "
                              f"has no such answer; valid: {', '.join(valid)}")
        return cls(tuple(dict.fromkeys(loads)), goal, float(settings["TRAFFICGEN_LATENCY_LOADS_LOW_FPS"]),
                   float(settings["TRAFFICGEN_LATENCY_LOADS_DURATION_S"]))

    def load_name(self, percent: float) -> str:
        """The metric prefix of a load: "pdr90", "pdr0", "throughput50"."""
        return f"{self.goal}{percent:g}"


def goal_rate_fps(metrics: Mapping[str, MetricValue], goal: str) -> float | None:
    """The rate of `goal` in a search's metrics (None when the search found none)."""
    value = metrics.get("tx_rate_fps" if goal == THROUGHPUT_GOAL else f"{goal}_tx_rate_fps")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else None


def _entry(cfg: LoadLatencyConfig, percent: float, rate: float, position: int, trial: TrialResult) -> dict[str, Any]:
    lat = trial.latency
    return {
        "load": cfg.load_name(percent), "load_percent": percent, "goal": cfg.goal, "rate_fps": rate,
        "trial": position, "loss_percent": trial.loss_percent,
        "min_ns": lat.min_ns if lat else None, "avg_ns": lat.avg_ns if lat else None,
        "max_ns": lat.max_ns if lat else None, "percentiles_ns": dict(lat.percentiles_ns) if lat else {},
        "samples": lat.samples if lat else 0, "histogram": bool(lat and lat.hdrh),
    }


def _metrics(name: str, trial: TrialResult) -> dict[str, MetricValue]:
    lat = trial.latency
    out: dict[str, MetricValue] = {
        f"{name}_min_latency_ns": lat.min_ns if lat else None,
        f"{name}_avg_latency_ns": lat.avg_ns if lat else None,
        f"{name}_max_latency_ns": lat.max_ns if lat else None,
    }
    for key, value in (lat.percentiles_ns if lat else {}).items():
        out[f"{name}_{key}_latency_ns"] = value
    out[f"{name}_frame_loss_percent"] = trial.loss_percent
    return out


def latency_at_loads(measurer: Measurer, traffic: Any, cfg: LoadLatencyConfig, outcome: SearchOutcome,
                     on_trial: OnTrial | None = None) -> SearchOutcome:
    """`outcome` of a throughput search with one latency trial per load added (module docstring)."""
    rate = goal_rate_fps(outcome.metrics, cfg.goal)
    if rate is None:
        note = f"latency at loads not measured: the search found no {cfg.goal} rate"
        return replace(outcome, anomalies=(*outcome.anomalies, note))
    log = TrialLog(measurer, on_trial)
    metrics: dict[str, MetricValue] = {}
    entries: list[dict[str, Any]] = []
    anomalies: list[str] = []
    for percent in cfg.loads_percent:
        load_rate = cfg.low_rate_fps if percent == 0 else rate * percent / 100.0
        label = f"{percent:g} % of {cfg.goal}" if percent else f"0 % of {cfg.goal} ({cfg.low_rate_fps:g} fps)"
        trial = log.rate(traffic, load_rate, cfg.duration_s, PURPOSE_PREFIX + label)
        position = len(outcome.trials) + len(log.trials)
        metrics.update(_metrics(cfg.load_name(percent), trial))
        entries.append(_entry(cfg, percent, load_rate, position, trial))
        if trial.latency is None:
            anomalies.append(f"latency at {label}: generator {generator_name(measurer)} measured no latency")
        if trial.loss_frames:
            anomalies.append(f"latency at {label}: the trial lost {trial.loss_percent:.4f} % of its frames")
    details = {**outcome.details, "load_latency": entries}
    return replace(outcome, metrics={**outcome.metrics, **metrics}, trials=(*outcome.trials, *log.trials),
                   details=details, anomalies=(*outcome.anomalies, *dict.fromkeys(anomalies)))
