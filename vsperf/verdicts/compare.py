"""`vsperf compare RUN_A RUN_B`: did RUN_B regress against RUN_A? (For CI jobs.)

Both runs are read from their results files only. Tests are matched by name and deployment
(the n-th occurrence in A with the n-th in B), frame sizes by size. For each key metric the
change from A to B is computed: relative, in % of A's value, or in percentage points for loss
metrics (a loss going from 0 % to 2 % has no relative change). A change in the worse direction
(throughput and back-to-back frames down, loss and latency up) beyond the threshold is a
regression; so is a test that passed in A and failed in B. The CLI exits 1 when any is found.

A comparison that compared nothing (no test, frame size and metric measured in both runs: an
unrelated run, a run with no tests) is an error, not a pass: a CI gate must not go green on it.
So is a threshold that is not a finite number in (0, MAX_THRESHOLD_PERCENT], and a metric
that is not a finite number (results.json never holds NaN; a damaged or edited file might).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from vsperf.errors import ConfigError
from vsperf.results.model import RunResults, TestResult, as_number
from vsperf.results.sizes import PacketSize, size_label

DEFAULT_THRESHOLD_PERCENT = 5.0  # as conf/04_report.yaml
# Above this no change is a regression: a drop in throughput is at most 100 %, a loss at most
# 100 pp; latency may grow more, but a gate that lets a 10x latency through guards nothing.
MAX_THRESHOLD_PERCENT = 1000.0


@dataclass(frozen=True)
class MetricRule:
    """How a metric is compared."""

    key: str
    better: Literal["higher", "lower"]
    points: bool = False  # True: the change is B - A in percentage points (loss metrics)


KEY_METRICS = (
    MetricRule("throughput_rx_fps", "higher"),
    MetricRule("b2b_frames", "higher"),
    MetricRule("frame_loss_percent", "lower", points=True),
    MetricRule("b2b_frame_loss_percent", "lower", points=True),
    MetricRule("min_latency_ns", "lower"),
    MetricRule("avg_latency_ns", "lower"),
    MetricRule("max_latency_ns", "lower"),
)
RULES = {rule.key: rule for rule in KEY_METRICS}


@dataclass(frozen=True)
class Change:
    """One metric of one frame size of one test, in both runs."""

    test: str
    deployment: str
    packet_size: PacketSize
    metric: str
    before: float | None  # RUN_A's value
    after: float | None  # RUN_B's value
    change: float | None  # % of A's value, or percentage points (unit "pp"); None: not comparable
    unit: str  # "%" or "pp"
    regression: bool
    improvement: bool


@dataclass(frozen=True)
class Comparison:
    """Everything `vsperf compare` found."""

    run_a: str
    run_b: str
    threshold_percent: float
    changes: tuple[Change, ...]
    status_regressions: tuple[str, ...] = ()  # tests that passed in A and did not in B
    notes: tuple[str, ...] = ()  # what could not be compared, and why
    metrics: tuple[str, ...] = field(default_factory=tuple)

    @property
    def regressions(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.regression)

    @property
    def compared(self) -> bool:
        """True when at least one metric was measured in both runs, or a test's status compared."""
        return bool(self.status_regressions) or any(
            c.before is not None and c.after is not None for c in self.changes)

    @property
    def regressed(self) -> bool:
        """True when B regressed anywhere (the CLI then exits 1)."""
        return bool(self.regressions or self.status_regressions)

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_a": self.run_a,
            "run_b": self.run_b,
            "threshold_percent": self.threshold_percent,
            "metrics": list(self.metrics),
            "regressed": self.regressed,
            "changes": [asdict(c) for c in self.changes],
            "status_regressions": list(self.status_regressions),
            "notes": list(self.notes),
        }


def compare_values(rule: MetricRule, before: float | None, after: float | None, threshold: float) -> tuple[
    float | None, bool, bool
]:
    """(change, regression, improvement) of one metric from `before` to `after`."""
    if before is None or after is None:
        return None, False, False
    if rule.points:
        change = after - before
    elif before != 0:
        change = 100.0 * (after - before) / abs(before)
    else:
        # Nothing to take a percentage of: only a move away from zero in the worse direction counts.
        worse = after < 0 if rule.better == "higher" else after > 0
        better = after > 0 if rule.better == "higher" else after < 0
        return None, worse, better
    worse_by = -change if rule.better == "higher" else change
    return change, worse_by > threshold, -worse_by > threshold


def _key(test: TestResult) -> tuple[str, str]:
    return test.name, test.deployment


def _pairs(a: RunResults, b: RunResults) -> tuple[list[tuple[TestResult, TestResult]], list[str]]:
    notes: list[str] = []
    remaining: dict[tuple[str, str], list[TestResult]] = {}
    for test in b.tests:
        remaining.setdefault(_key(test), []).append(test)
    pairs = []
    for test in a.tests:
        candidates = remaining.get(_key(test))
        if candidates:
            pairs.append((test, candidates.pop(0)))
        else:
            notes.append(f"{test.name} ({test.deployment}) is only in run A")
    for tests in remaining.values():
        notes += [f"{t.name} ({t.deployment}) is only in run B" for t in tests]
    return pairs, notes


def compare_runs(
    a: RunResults,
    b: RunResults,
    threshold_percent: float = DEFAULT_THRESHOLD_PERCENT,
    metrics: Iterable[str] | None = None,
    *,
    names: tuple[str, str] = ("A", "B"),
) -> Comparison:
    """Compare run `b` against run `a` (see the module doc). `metrics`: keys of KEY_METRICS to
    compare (all by default); raises ConfigError for a key vsperf does not know how to compare."""
    check_threshold(threshold_percent)
    keys = list(metrics) if metrics is not None else [r.key for r in KEY_METRICS]
    unknown = [k for k in keys if k not in RULES]
    if unknown:
        raise ConfigError(f"cannot compare metric {unknown[0]!r}; comparable metrics: {', '.join(RULES)}")
    if not keys:
        raise ConfigError(f"no metric to compare; comparable metrics: {', '.join(RULES)}")
    pairs, notes = _pairs(a, b)
    if a.simulated != b.simulated:
        notes.append("one run was simulated and the other was not: their figures are not comparable")
    changes: list[Change] = []
    status: list[str] = []
    for test_a, test_b in pairs:
        if test_a.status == "passed" and test_b.status != "passed":
            status.append(f"{test_b.name} ({test_b.deployment}) passed in run A but is {test_b.status} in run B"
                          + (f": {test_b.error}" if test_b.error else ""))
        sizes_b = {r.packet_size: r for r in test_b.results}
        for result_a in test_a.results:
            result_b = sizes_b.pop(result_a.packet_size, None)
            if result_b is None:
                notes.append(f"{test_a.name} {size_label(result_a.packet_size)} is only in run A")
                continue
            for key in keys:
                rule = RULES[key]
                before = _finite(result_a.metrics.get(key), names[0], test_a, result_a.packet_size, key)
                after = _finite(result_b.metrics.get(key), names[1], test_b, result_b.packet_size, key)
                if before is None and after is None:
                    continue
                change, worse, better = compare_values(rule, before, after, threshold_percent)
                changes.append(Change(test_a.name, test_a.deployment, result_a.packet_size, key, before, after,
                                      change, "pp" if rule.points else "%", worse, better))
        notes += [f"{test_b.name} {size_label(size)} is only in run B" for size in sizes_b]
    return Comparison(names[0], names[1], threshold_percent, tuple(changes), tuple(status), tuple(notes), tuple(keys))


def check_threshold(threshold_percent: float) -> float:
    """`threshold_percent` when it is a finite number in (0, MAX_THRESHOLD_PERCENT]; ConfigError otherwise."""
    if not (isinstance(threshold_percent, int | float) and math.isfinite(threshold_percent)
            and 0 < threshold_percent <= MAX_THRESHOLD_PERCENT):
        raise ConfigError(f"the compare threshold must be a number above 0 and at most {MAX_THRESHOLD_PERCENT:g} %, "
                          f"got {threshold_percent}")
    return float(threshold_percent)


def _finite(raw: Any, run: str, test: TestResult, size: PacketSize, key: str) -> float | None:
    """A metric's value as a number (None: not measured); ConfigError for NaN or infinity."""
    if isinstance(raw, float) and not math.isfinite(raw):
        raise ConfigError(f"{run}: test {test.name} {size_label(size)}: {key} is {raw}, not a measurement; the results "
                          f"file is damaged")
    return as_number(raw)


def _cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.3f}"


def format_comparison(comparison: Comparison) -> str:
    """The comparison as a plain-text table and a verdict line, for a terminal or a CI log."""
    header = ("test", "deployment", "size", "metric", "A", "B", "change", "")
    rows: list[Sequence[str]] = []
    for c in comparison.changes:
        change = "n/a" if c.change is None else f"{c.change:+.3f} {c.unit}"
        verdict = "REGRESSION" if c.regression else ("improved" if c.improvement else "")
        rows.append((c.test, c.deployment, str(c.packet_size), c.metric, _cell(c.before), _cell(c.after), change,
                     verdict))
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    numeric = {2, 4, 5, 6}

    def line(row: Sequence[str]) -> str:
        cells = [str(v).rjust(widths[i]) if i in numeric else str(v).ljust(widths[i]) for i, v in enumerate(row)]
        return "  ".join(cells).rstrip()

    out = [f"A: {comparison.run_a}", f"B: {comparison.run_b}",
           f"threshold: {comparison.threshold_percent:g} % (percentage points for loss metrics)", ""]
    out += [line(header), *(line(r) for r in rows)] if rows else ["no metric in common to compare"]
    out += [""] + [f"note: {n}" for n in comparison.notes]
    out += [f"REGRESSION: {s}" for s in comparison.status_regressions]
    regressions = len(comparison.regressions) + len(comparison.status_regressions)
    if regressions:
        out.append(f"{regressions} regression(s) beyond {comparison.threshold_percent:g} %: run B is worse than run A")
    else:
        out.append(f"no regression beyond {comparison.threshold_percent:g} %")
    return "\n".join(out).replace("\n\n\n", "\n\n") + "\n"
