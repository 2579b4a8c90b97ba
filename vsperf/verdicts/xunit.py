"""xUnit XML of a run, for CI jobs (`--xunit`), from its result files."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from vsperf.results.model import RunResults, TestResult
from vsperf.results.sizes import size_label
from vsperf.verdicts.criteria import Verdict

XUNIT_FILE = "xunit.xml"


def _status(test: TestResult, verdict: Verdict | None) -> tuple[str, str | None]:
    """The test's status and error, a missed pass criterion (setting CRITERIA) counting as failed."""
    if verdict is not None and not verdict.passed and test.status == "passed":
        return "failed", verdict.summary()
    return test.status, test.error


def _headline(test: TestResult) -> str:
    lines = []
    for result in test.results:
        value = result.metrics.get(test.headline_metric) if test.headline_metric else None
        lines.append(f"{size_label(result.packet_size)}: {test.headline_metric} = "
                     f"{value if isinstance(value, int | float) else None}")
    return "\n".join(lines)


def write_xunit(path: Path, run: RunResults, verdicts: Sequence[Verdict | None] = ()) -> Path:
    """One testcase per test; a failed or interrupted test (or one that missed its pass criteria,
    `verdicts` from vsperf.verdicts.criteria.evaluate_run) is a <failure> with its error."""
    statuses = [_status(t, verdicts[i] if i < len(verdicts) else None) for i, t in enumerate(run.tests)]
    durations = [t.duration_s or 0.0 for t in run.tests]
    suite = ET.Element(
        "testsuite",
        name="vsperf",
        tests=str(len(run.tests)),
        failures=str(sum(1 for status, _ in statuses if status != "passed")),
        errors="0",
        time=f"{sum(durations):.3f}",
    )
    for test, (status, error), duration in zip(run.tests, statuses, durations, strict=True):
        case = ET.SubElement(suite, "testcase", classname=f"vsperf.{test.deployment}", name=test.name,
                             time=f"{duration:.3f}")
        if status != "passed":
            failure = ET.SubElement(case, "failure", message=f"{status}: {error or ''}")
            failure.text = error or status
        out = ET.SubElement(case, "system-out")
        out.text = _headline(test)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)
    return path
