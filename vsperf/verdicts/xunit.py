"""xUnit XML of a run, for CI jobs (`--xunit`)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from vsperf.run.runner import TestOutcome

XUNIT_FILE = "xunit.xml"


def write_xunit(path: Path, tests: Sequence[TestOutcome]) -> Path:
    """One testcase per test; a failed or interrupted test is a <failure> with its error."""
    failures = sum(1 for t in tests if t.status != "passed")
    suite = ET.Element(
        "testsuite",
        name="vsperf",
        tests=str(len(tests)),
        failures=str(failures),
        errors="0",
        time=f"{sum(t.duration_s for t in tests):.3f}",
    )
    for test in tests:
        case = ET.SubElement(
            suite, "testcase", classname=f"vsperf.{test.deployment}", name=test.name, time=f"{test.duration_s:.3f}"
        )
        if test.status != "passed":
            failure = ET.SubElement(case, "failure", message=f"{test.status}: {test.error or ''}")
            failure.text = test.error or test.status
        out = ET.SubElement(case, "system-out")
        out.text = "\n".join(f"{size} B: {key} = {value}" for size, key, value in test.headline)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)
    return path
