"""Optional pass criteria per test (setting CRITERIA), checked against the results files.

CRITERIA maps a test name, or '*' for every test, to metric -> {min: x, max: y}. A test case's
Parameters may set CRITERIA for that test alone (it then replaces the run's). Each criterion is
checked at every frame size the test measured. A criterion named for the test whose metric the
test never reported fails (a typo must not pass silently); a '*' criterion applies only to the
tests that report its metric (a throughput minimum does not fail a back-to-back test).

The verdict turns a result into pass/fail for CI: the CLI's exit code, xUnit and the report.
It is computed from results.json alone, so `vsperf report DIR` shows the same verdicts.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from vsperf.errors import ConfigError
from vsperf.results.model import RunResults, TestResult, as_number
from vsperf.results.sizes import PacketSize, size_label

ALL_TESTS = "*"


def format_value(value: float | None) -> str:
    """A bound or a measured value as the verdict prints it: 3 decimals, whole numbers plainly."""
    if value is None:
        return "n/a"
    return str(int(value)) if float(value).is_integer() else f"{value:.3f}"


@dataclass(frozen=True)
class Criterion:
    """One bound (or two) on one metric of one test."""

    scope: str  # the test name, or '*'
    metric: str  # a result key, e.g. throughput_rx_fps
    min_value: float | None = None  # inclusive, in the metric's own unit
    max_value: float | None = None  # inclusive, in the metric's own unit

    def __post_init__(self) -> None:
        if self.min_value is None and self.max_value is None:
            raise ValueError(f"criterion on {self.metric} needs min or max")

    def describe(self) -> str:
        """e.g. "throughput_rx_fps >= 1000000" or "10 <= x <= 20"."""
        low, high = self.min_value, self.max_value
        if low is not None and high is not None:
            return f"{format_value(low)} <= {self.metric} <= {format_value(high)}"
        if low is not None:
            return f"{self.metric} >= {format_value(low)}"
        return f"{self.metric} <= {format_value(high)}"

    def holds(self, value: float) -> bool:
        """True when `value` is within the bounds."""
        return (self.min_value is None or value >= self.min_value) and (
            self.max_value is None or value <= self.max_value
        )


@dataclass(frozen=True)
class Check:
    """A criterion at one frame size (packet_size None: the metric was never reported)."""

    criterion: Criterion
    packet_size: PacketSize | None
    value: float | None
    passed: bool

    def describe(self) -> str:
        """One line for the report and CI, e.g. "64 B: throughput_rx_fps = 4.5e6, needs >= 5e6"."""
        verdict = "met" if self.passed else "NOT met"
        if self.packet_size is None:
            return f"{self.criterion.describe()}: NOT met, the test reported no {self.criterion.metric}"
        shown = format_value(self.value)
        return (f"{size_label(self.packet_size)}: {self.criterion.metric} = {shown}, "
                f"needs {self.criterion.describe()}: {verdict}")


@dataclass(frozen=True)
class Verdict:
    """The pass criteria of one test and how its results fared."""

    test_index: int
    test_name: str
    checks: tuple[Check, ...]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failures(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if not c.passed)

    def summary(self) -> str:
        """One line: "pass criteria met (3 checks)" or the failures."""
        if self.passed:
            return f"pass criteria met ({len(self.checks)} check{'s' if len(self.checks) != 1 else ''})"
        return "pass criteria not met: " + "; ".join(c.describe() for c in self.failures)


def check_criteria_names(criteria: Mapping[str, Any], known_tests: Collection[str], origin: str) -> None:
    """ConfigError when CRITERIA names a test that does not exist (it would never apply: a typo
    must not pass silently); '*' is every test."""
    for scope in criteria:
        if scope != ALL_TESTS and scope not in known_tests:
            close = difflib.get_close_matches(str(scope), list(known_tests), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{origin}: no test is called {scope!r}{hint}; name a test of `vsperf --list` or "
                              f"'*' for every test")


def criteria_for(test: TestResult, settings: Mapping[str, Any]) -> list[Criterion]:
    """The criteria that apply to `test`: its own Parameters' CRITERIA, else the run's."""
    source = test.parameters.get("CRITERIA")
    if not isinstance(source, Mapping):
        source = settings.get("CRITERIA")
    if not isinstance(source, Mapping):
        return []
    found: list[Criterion] = []
    for scope in (ALL_TESTS, test.name):
        metrics = source.get(scope)
        if not isinstance(metrics, Mapping):
            continue
        for metric, bounds in metrics.items():
            if not isinstance(bounds, Mapping):
                continue
            low, high = as_number(bounds.get("min")), as_number(bounds.get("max"))
            if low is not None or high is not None:
                found.append(Criterion(scope, str(metric), low, high))
    return found


def evaluate_test(test: TestResult, settings: Mapping[str, Any]) -> Verdict | None:
    """The verdict of `test` against its criteria; None when it has none."""
    criteria = criteria_for(test, settings)
    if not criteria:
        return None
    checks: list[Check] = []
    for criterion in criteria:
        measured = [
            (r.packet_size, as_number(r.metrics.get(criterion.metric)))
            for r in test.results
            if criterion.metric in r.metrics
        ]
        if not measured:
            if criterion.scope != ALL_TESTS:
                checks.append(Check(criterion, None, None, False))
            continue
        for size, value in measured:
            checks.append(Check(criterion, size, value, value is not None and criterion.holds(value)))
    return Verdict(test.index, test.name, tuple(checks)) if checks else None


def evaluate_run(run: RunResults) -> list[Verdict | None]:
    """The verdict of every test of `run`, by test index (None: no criterion applies)."""
    return [evaluate_test(test, run.settings) for test in run.tests]
