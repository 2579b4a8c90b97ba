"""What a search (or a continuous/burst run) hands to the results writer for one frame size."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vsperf.search.measurer import TrialResult

MetricValue = float | int | str | None


@dataclass(frozen=True)
class SearchOutcome:
    """Result of one traffic type at one frame size.

    `metrics` holds VSPERF's result keys (`throughput_rx_fps`, `b2b_frames`, ...) as numbers
    (None where the generator could not measure a value, e.g. latency on a simulated DUT);
    `trials` every trial in the order it ran, so a search can be audited; `details` the search
    parameters and per-repetition answers.
    """

    metrics: dict[str, MetricValue]
    trials: tuple[TrialResult, ...]
    details: dict[str, Any] = field(default_factory=dict)
    anomalies: tuple[str, ...] = ()  # plain-language findings, e.g. generator under-delivery
