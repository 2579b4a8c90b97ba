"""docs/from-vsperf.rst's table of VSPERF's integration tests: every upstream test once, and the
counts the text gives are the table's."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from vsperf.config.testfiles import read_test_files

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = ROOT.parent / "shared" / "vsperf-upstream" / "conf" / "integration"
DOC = ROOT / "docs" / "from-vsperf.rst"
ROW = re.compile(r"^``([A-Za-z0-9_]+)``\s+(runs|testbed|refused|fails)(?:\s|$)")
COUNTS = re.compile(r"The table: (\d+) run here, (\d+) need a testbed, (\d+) are refused, (\d+) fail \(all (\d+)\)")


def table() -> list[tuple[str, str]]:
    section = DOC.read_text().split("VSPERF's integration tests\n", 1)[1]
    return [(m.group(1), m.group(2)) for line in section.splitlines() if (m := ROW.match(line))]


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason=f"upstream VSPERF's integration files not found in {UPSTREAM}")
def test_every_upstream_integration_test_has_one_row() -> None:
    names = [t["Name"] for f in read_test_files(sorted(UPSTREAM.glob("01*.conf"))) for t in f.integration]
    rows = [name for name, _ in table()]
    assert [n for n, k in Counter(rows).items() if k > 1] == []
    assert sorted(rows) == sorted(names)


def test_the_counts_in_the_text_are_the_tables() -> None:
    found = COUNTS.search(" ".join(DOC.read_text().split()))
    assert found, "the sentence with the table's counts is missing"
    runs, testbed, refused, fails, total = map(int, found.groups())
    statuses = Counter(status for _, status in table())
    assert (statuses["runs"], statuses["testbed"], statuses["refused"], statuses["fails"]) == (
        runs, testbed, refused, fails)
    assert sum(statuses.values()) == total
