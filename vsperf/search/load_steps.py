"""A curve of offered loads from a maximum down in fixed steps: what RFC 2544's frame loss rate
(`vsperf.search.frame_loss`) and RFC 2889's forwarding rate (`vsperf.search.rfc2889`) both run.

`LoadSteps` holds the three parameters, each read from its setting; a test's config subclasses
it to name the setting of its step and the largest step it allows. `next_step` walks the grid
from the maximum (load = max - step * step_percent, so no float drift), skipping loads above what
the generator really sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from vsperf.search.config import check_field, from_setting

_EPS = 1e-9
LOWEST_LOAD_PERCENT = _EPS  # a load at or below this is 0: the curve ends before it


@dataclass(frozen=True)
class LoadSteps:
    """Loads from `max_rate_percent` of line rate down in steps of `step_percent`, each a trial
    of `duration_s`. A subclass gives `step_percent` its setting (and may lower the largest step)."""

    MAX_STEP_PERCENT: ClassVar[float] = 100.0
    STEP_RULE: ClassVar[str] = "in (0, 100]"

    duration_s: float = field(metadata=from_setting("TRAFFICGEN_DURATION"))  # each trial
    step_percent: float  # % of line rate between loads
    # maximum offered load (the first trial), % of line rate
    max_rate_percent: float = field(metadata=from_setting("TRAFFICGEN_RFC2544_MAX_RATE_PERCENT"))

    def __post_init__(self) -> None:
        check_field(self, "duration_s", self.duration_s > 0, "> 0")
        check_field(self, "step_percent", 0 < self.step_percent <= self.MAX_STEP_PERCENT, self.STEP_RULE)
        check_field(self, "max_rate_percent", 0 < self.max_rate_percent <= 100, "in (0, 100]")

    def next_step(self, step: int, offered_percent: float) -> tuple[int, float]:
        """The step after `step` and its load, % of line rate, skipping the loads above
        `offered_percent` (what the generator sent at `step`)."""
        step += 1
        while (percent := self.max_rate_percent - step * self.step_percent) > offered_percent + _EPS:
            step += 1
        return step, percent
