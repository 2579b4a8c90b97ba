"""What a search (or a continuous/burst run) hands to the results writer for one frame size."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vsperf.errors import SearchError
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
    # Why the search has no answer it stands behind (no load met a goal, its trial guard): the
    # test fails with this line, its metrics and trials are still written. None: it answered.
    failure: str | None = None

    def raise_if_failed(self, where: str) -> None:
        """SearchError("`where`: the failure") when the search failed (see `failure`); call it
        after the outcome is written, so that what was measured is kept."""
        if self.failure is not None:
            raise SearchError(f"{where}: {self.failure}")
