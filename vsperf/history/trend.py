"""Change detection over a series with CSIT's jumpavg, and `vsperf trend`'s verdicts.

jumpavg groups a series into runs of equal average by minimum description length: a new group
starts where the values moved by more than their noise explains. Each group after the first is
a regression or a progression by the direction of its average against the group before, in the
metric's own sense of better (throughput up, latency and loss down). Only the newest
HISTORY_TREND_RUNS points are classified: jumpavg's cost grows with the square of a series' length.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import jumpavg

from vsperf.verdicts.compare import RULES

NORMAL, REGRESSION, PROGRESSION = "normal", "regression", "progression"
# Metrics not in `vsperf compare`'s rules whose smaller values are better.
_LOWER_SUFFIXES = ("_ns", "_us", "_s", "loss_percent", "_loss_frames", "_err")


def better_direction(metric: str) -> Literal["higher", "lower"]:
    """Which way `metric` improves: `vsperf compare`'s rule when it has one, else by its unit."""
    if metric in RULES:
        return RULES[metric].better
    return "lower" if metric.endswith(_LOWER_SUFFIXES) else "higher"


@dataclass(frozen=True)
class Group:
    """Consecutive points of equal average (indices into the classified values)."""

    start: int  # first point, inclusive
    end: int  # last point, exclusive
    average: float
    classification: str  # normal (the first group), regression or progression

    @property
    def size(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class Classified:
    """A series' newest values, grouped and classified."""

    values: tuple[float, ...]
    groups: tuple[Group, ...]
    better: Literal["higher", "lower"]

    @property
    def latest(self) -> Group | None:
        """The group of the newest value."""
        return self.groups[-1] if self.groups else None

    @property
    def classification(self) -> str:
        """The newest value's: the classification of its group (normal without data)."""
        return self.latest.classification if self.latest else NORMAL

    @property
    def change_percent(self) -> float | None:
        """The newest group's average against the previous group's, in % of it (None: one group)."""
        if len(self.groups) < 2 or self.groups[-2].average == 0:
            return None
        before, after = self.groups[-2].average, self.groups[-1].average
        return 100.0 * (after - before) / abs(before)


def _verdict(before: float, after: float, better: str) -> str:
    if after == before:
        return NORMAL
    up = after > before
    return PROGRESSION if up == (better == "higher") else REGRESSION


def classify(values: Sequence[float], better: Literal["higher", "lower"]) -> Classified:
    """Group `values` (oldest first) with jumpavg and classify each group against the one before."""
    data = tuple(float(v) for v in values)
    if not data:
        return Classified(data, (), better)
    low = min(data)
    # jumpavg measures values in units of (largest value / 2^13): they must be positive and not all zero.
    shifted = [v - low + 1.0 for v in data] if low < 0 or max(data) <= 0 else list(data)
    groups: list[Group] = []
    start = 0
    for found in jumpavg.classify(shifted):
        size = len(found.run_list)
        chunk = data[start:start + size]
        average = sum(chunk) / size
        verdict = NORMAL if not groups else _verdict(groups[-1].average, average, better)
        groups.append(Group(start, start + size, average, verdict))
        start += size
    return Classified(data, tuple(groups), better)


@dataclass(frozen=True)
class TrendLine:
    """One series as `vsperf trend` prints it."""

    label: str
    setup: str
    runs: int  # points classified
    latest_value: float
    latest_run: str
    group_average: float
    change_percent: float | None
    classification: str


def is_gate_failure(line: TrendLine) -> bool:
    """Whether `--gate` fails on this series: its newest run is in a regression group."""
    return line.classification == REGRESSION
