"""Anomalies of a test, computed from its results (and the run's log): real findings only.

Every finding comes from the data: the test's status and error, the search's own findings,
flagged trials (generator under-delivery, rx > tx), loss in a verification trial, repetitions
that spread more than REPORT_SPREAD_THRESHOLD_PERCENT, pass criteria not met, frame sizes
without any metric, and warnings logged while the test ran (overall.log). "No anomalies were
detected" is printed only when this finds nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vsperf.report.markup import format_value
from vsperf.results.model import FrameSizeResult, RunResults, TestResult, as_number
from vsperf.results.sizes import PacketSize
from vsperf.search.measurer import FLAG_RX_EXCEEDS_TX, FLAG_UNDER_DELIVERY, TrialResult
from vsperf.verdicts.criteria import evaluate_test

FLAG_MEANINGS = {
    FLAG_UNDER_DELIVERY: (
        "the generator sent fewer frames per second than requested, so the generator, not the "
        "device under test, limited these trials"
    ),
    FLAG_RX_EXCEEDS_TX: (
        "more frames were received than sent (foreign frames on the test ports or a counter error)"
    ),
}
DEFAULT_SPREAD_THRESHOLD_PERCENT = 5.0  # as conf/04_report.yaml
MAX_WARNINGS_LISTED = 10

# overall.log lines (vsperf.ui.logsetup's file format), the line that starts a test
# (vsperf.ui.progress.Progress.test_started) and the runner's line that ends it.
_LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (?P<level>[A-Z]+)\s+(?P<logger>\S+): (?P<msg>.*)$")
_TEST_START = re.compile(r"^test \S+ \(\S+\): \d+ frame size")
_TEST_END = re.compile(r"^test \S+ (finished|failed)")  # vsperf.run.runner, after the test's teardown
# The progress logger's name, now and in the logs of runs from before issue 13's restructure
# (vsperf report DIR re-renders those too).
_PROGRESS_LOGGERS = ("vsperf.ui.progress", "vsperf.progress")
_WARNING_LEVELS = ("WARNING", "ERROR", "CRITICAL")


@dataclass(frozen=True)
class LoggedWarnings:
    """Warnings and errors of overall.log, by the test that was running when they were logged."""

    outside_tests: tuple[str, ...] = ()  # between tests (setup, leftovers of killed runs, report)
    by_test: tuple[tuple[str, ...], ...] = ()  # index = test index

    def of_test(self, index: int) -> tuple[str, ...]:
        return self.by_test[index] if 0 <= index < len(self.by_test) else ()


def _already_reported(logger: str, message: str) -> bool:
    # The runner's own lines about a failed test or a stopped run repeat the test's status and
    # error, which are findings already.
    return logger == "vsperf.run.runner" and (message.startswith("test ") or message.startswith("run stopped"))


def parse_log_warnings(text: str) -> LoggedWarnings:
    """Split the WARNING/ERROR lines of an overall.log by test (tests in the order they ran)."""
    outside: list[str] = []
    by_test: list[list[str]] = []
    current: list[str] | None = None  # the running test's list; None between tests
    for line in text.splitlines():
        match = _LOG_LINE.match(line)
        if match is None:
            continue  # a traceback or a message's continuation line
        logger, message = match["logger"], match["msg"].strip()
        if logger in _PROGRESS_LOGGERS and _TEST_START.match(message):
            current = []
            by_test.append(current)
            continue
        if logger == "vsperf.run.runner" and _TEST_END.match(message):
            current = None  # what follows (the next test's setup, the report) is not this test's
        if match["level"] not in _WARNING_LEVELS or _already_reported(logger, message):
            continue
        (current if current is not None else outside).append(message)
    return LoggedWarnings(tuple(outside), tuple(tuple(w) for w in by_test))


def read_log_warnings(path: Path) -> LoggedWarnings:
    """`parse_log_warnings` of the file at `path`; nothing when it is missing or unreadable."""
    try:
        return parse_log_warnings(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return LoggedWarnings()


def _trial_numbers(positions: list[int]) -> str:
    shown = ", ".join(str(p) for p in positions[:10])
    more = len(positions) - 10
    return f"{shown} and {more} more" if more > 0 else shown


def _flag_finding(packet_size: PacketSize, flag: str, flagged: list[tuple[int, TrialResult]], total: int) -> str:
    positions = [pos for pos, _ in flagged]
    noun = "trial" if len(positions) == 1 else "trials"
    text = (
        f"Packet size {packet_size}: {len(positions)} of {total} trials flagged {flag} "
        f"({noun} {_trial_numbers(positions)} of the trial log)"
    )
    meaning = FLAG_MEANINGS.get(flag)
    if meaning:
        text += f": {meaning}"
    if flag == FLAG_UNDER_DELIVERY:
        ratios = [
            100.0 * t.actual_tx_rate_fps / t.requested_rate_fps
            for _, t in flagged
            if t.requested_rate_fps > 0
        ]
        if ratios:
            text += f"; the lowest sent/offered rate was {format_value(min(ratios))} %"
    return text + "."


def _setting(test: TestResult, settings: Mapping[str, Any], name: str) -> Any:
    # A test case's Parameters override the run's settings for that test.
    return test.parameters.get(name, settings.get(name))


def allowed_loss_percent(test: TestResult, result: FrameSizeResult, settings: Mapping[str, Any]) -> float:
    """The loss the search accepted at this frame size (its own record first, then the settings)."""
    search = result.details.get("search")
    if isinstance(search, Mapping) and isinstance(search.get("loss_rate_percent"), int | float):
        return float(search["loss_rate_percent"])
    value = _setting(test, settings, "TRAFFICGEN_LOSSRATE")
    return float(value) if isinstance(value, int | float) else 0.0


def _verification_findings(test: TestResult, result: FrameSizeResult, settings: Mapping[str, Any]) -> list[str]:
    if any("verification" in a for a in result.anomalies):
        return []  # the search said it already, with its own numbers
    allowed = allowed_loss_percent(test, result, settings)
    findings = []
    for position, trial in enumerate(result.trials, start=1):
        if trial.purpose.startswith("verification") and trial.loss_percent > allowed:
            findings.append(
                f"Packet size {result.packet_size}: the verification trial (trial {position}) lost "
                f"{trial.loss_percent:.4f} % of {trial.tx_frames} frames at "
                f"{format_value(float(trial.requested_rate_fps))} fps, more than the {format_value(allowed)} % "
                "allowed: the throughput found by the search did not hold over the longer trial."
            )
    return findings


def _spread_findings(result: FrameSizeResult, threshold_percent: float) -> list[str]:
    findings = []
    repetitions = result.details.get("repetitions")
    count = len(repetitions) if isinstance(repetitions, list) else None
    for key, low in result.metrics.items():
        if not key.endswith("_min"):
            continue
        base = key.removesuffix("_min")
        least, most = as_number(low), as_number(result.metrics.get(f"{base}_max"))
        mean = as_number(result.metrics.get(base))
        if least is None or most is None or mean is None or mean <= 0:
            continue
        spread = 100.0 * (most - least) / mean
        if spread > threshold_percent:
            runs = f"the {count} repetitions" if count else "the repetitions"
            findings.append(
                f"Packet size {result.packet_size}: {runs} of {base} spread {spread:.2f} % of their mean "
                f"(from {format_value(least)} to {format_value(most)}), more than "
                f"REPORT_SPREAD_THRESHOLD_PERCENT ({format_value(threshold_percent)} %): the result is not stable."
            )
    return findings


def _status_findings(test: TestResult) -> list[str]:
    if test.status == "failed":
        error = (test.error or "no error message was recorded").rstrip(". ")
        return [f"The test failed: {error}."]
    if test.status == "interrupted":
        reason = test.error or "no reason was recorded"
        return [f"The test was interrupted ({reason}); only the packet sizes reported above were measured."]
    if test.status == "running":
        return [
            "The test had not finished when these results were written (the run is still going on or "
            "vsperf was killed); only the packet sizes reported above were measured."
        ]
    if not test.results:
        return ["The test passed but recorded no packet size."]
    return []


def _warning_findings(warnings: Sequence[str]) -> list[str]:
    if not warnings:
        return []
    counted: dict[str, int] = {}
    for message in warnings:
        counted[message] = counted.get(message, 0) + 1
    shown = [f"{m} (x{n})" if n > 1 else m for m, n in list(counted.items())[:MAX_WARNINGS_LISTED]]
    more = len(counted) - len(shown)
    text = f"{len(warnings)} warning(s) were logged while the test ran: " + "; ".join(shown)
    if more > 0:
        text += f"; and {more} more (see overall.log)"
    return [text.rstrip(".") + "."]


def anomalies_of(
    test: TestResult, run: RunResults | None = None, warnings: Sequence[str] = ()
) -> list[str]:
    """Everything unusual about `test` (see the module doc). `run` gives the settings the
    thresholds come from; `warnings` are the log lines logged while the test ran."""
    settings: Mapping[str, Any] = run.settings if run is not None else {}
    threshold = _setting(test, settings, "REPORT_SPREAD_THRESHOLD_PERCENT")
    if not isinstance(threshold, int | float):
        threshold = DEFAULT_SPREAD_THRESHOLD_PERCENT
    findings = _status_findings(test)
    for result in test.results:
        findings.extend(f"Packet size {result.packet_size}: {a}" for a in result.anomalies)
        by_flag: dict[str, list[tuple[int, TrialResult]]] = {}
        for position, trial in result.flagged_trials:
            for flag in trial.flags:
                by_flag.setdefault(flag, []).append((position, trial))
        for flag, flagged in by_flag.items():
            findings.append(_flag_finding(result.packet_size, flag, flagged, len(result.trials)))
        findings.extend(_verification_findings(test, result, settings))
        findings.extend(_spread_findings(result, float(threshold)))
        if result.metrics and all(v is None for v in result.metrics.values()):
            findings.append(f"Packet size {result.packet_size}: no metric could be measured.")
    verdict = evaluate_test(test, settings)
    if verdict is not None and not verdict.passed:
        findings.extend(f"Pass criterion not met: {c.describe()}." for c in verdict.failures)
    findings.extend(_warning_findings(warnings))
    return findings
