"""A warm start: frames sent right before each trial's counted frames, and never counted.

Many trials lose frames in their first milliseconds (cold caches, flow setup, a poll-mode thread
that wakes up) and a search then blames the device for it. With a warm start (the
TRAFFICGEN_WARM_START setting) every trial begins with a lead-in at a low rate, or a ramp up to
the trial's rate, for `duration_s`; the trial's counting window starts after it, with no pause.
A generator that cannot chain the two without a pause says so in the trial (see
`vsperf.trafficgen.base.lead_in`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

WarmMode = Literal["lead-in", "ramp"]
WARM_MODES: tuple[str, ...] = ("off", "lead-in", "ramp")


@dataclass(frozen=True)
class WarmStart:
    """What each trial sends before it is counted."""

    mode: WarmMode  # lead-in: a constant low rate; ramp: from that rate up to the trial's
    duration_s: float  # > 0
    rate_percent: float  # the lead-in's rate (a ramp's first rate), % of the trial's rate, 0 < x <= 100

    def __post_init__(self) -> None:
        if self.mode not in ("lead-in", "ramp"):
            raise ValueError(f"warm start mode {self.mode!r} is neither lead-in nor ramp")
        if not self.duration_s > 0:
            raise ValueError(f"a warm start needs a duration > 0 s, got {self.duration_s}")
        if not 0 < self.rate_percent <= 100:
            raise ValueError(f"a warm start's rate must be in (0, 100] % of the trial's rate, got {self.rate_percent}")

    def start_rate_fps(self, trial_rate_fps: float) -> float:
        """The rate the warm start begins at (the lead-in's whole rate)."""
        return trial_rate_fps * self.rate_percent / 100.0

    def frames(self, trial_rate_fps: float) -> int:
        """Frames the warm start sends before a trial at `trial_rate_fps` (aggregate), at least 1."""
        start = self.start_rate_fps(trial_rate_fps)
        mean = start if self.mode == "lead-in" else (start + trial_rate_fps) / 2.0
        return max(1, round(mean * self.duration_s))

    def describe(self) -> str:
        """E.g. "a 0.1 s lead-in at 10 % of the trial's rate"."""
        if self.mode == "lead-in":
            return f"a {self.duration_s:g} s lead-in at {self.rate_percent:g} % of the trial's rate"
        return f"a {self.duration_s:g} s ramp from {self.rate_percent:g} % to 100 % of the trial's rate"


def warm_start_from_setting(value: Mapping[str, Any]) -> WarmStart | None:
    """The TRAFFICGEN_WARM_START setting (validated) as a WarmStart; None when its mode is off."""
    mode = str(value["mode"])
    if mode == "off":
        return None
    return WarmStart(mode="ramp" if mode == "ramp" else "lead-in", duration_s=float(value["duration_s"]),
                     rate_percent=float(value["rate_percent"]))
