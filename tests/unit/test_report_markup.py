"""RST building blocks: escaping renders text verbatim, tables and headings are valid RST."""

from __future__ import annotations

import io

import pytest

from vsperf.report.markup import Rst, escape, finalize, format_value, grid_table, heading, item

docutils_core = pytest.importorskip("docutils.core", reason="docutils checks the RST (pip install docutils)")
from docutils import nodes  # noqa: E402

HOSTILE = [
    "*bold* and **strong** and `code` and ``literal``",
    "|substitution| and a_reference_ and [1]_ and _`target`",
    "1. looks like a list",
    "- a bullet",
    "#. auto enumerated",
    "(a) parenthesised",
    ":field: value",
    ".. directive:: x",
    ">>> doctest",
    "=====",
    "-",
    "ends with a literal block marker::",
    "back\\slash and trailing backslash\\",
    "__init__ and phy2phy_tput_ and _leading",
    "http://example.com/a_b_",
    "C:\\temp\\new",
    "名前 wide characters",
]


def _doctree(text: str) -> nodes.document:
    stream = io.StringIO()
    doc = docutils_core.publish_doctree(
        text, settings_overrides={"report_level": 2, "halt_level": 5, "warning_stream": stream}
    )
    problems = [m.astext() for m in doc.findall(nodes.system_message) if m["level"] >= 2]
    assert not problems and not stream.getvalue(), (problems, stream.getvalue(), text)
    return doc


@pytest.mark.parametrize("text", HOSTILE)
def test_escaped_text_renders_verbatim(text: str) -> None:
    doc = _doctree(escape(text) + "\n")
    assert doc.astext() == text
    doc = _doctree("Intro:\n\n" + item(text) + "\n")
    assert doc.astext().splitlines()[-1] == text


def test_escape_collapses_whitespace_and_keeps_plain_words() -> None:
    assert escape("phy2phy_tput\n  p2p") == "phy2phy_tput p2p"
    assert escape("14880952.381") == "14880952.381"


def test_long_items_wrap_and_still_render_whole() -> None:
    text = " ".join(f"word{i}_x" for i in range(60)) + " *end*"
    rst = item(text, level=1)
    assert all(len(line) <= 102 for line in rst.splitlines()) and len(rst.splitlines()) > 1
    assert all(line.startswith("    ") for line in rst.splitlines()[1:])
    doc = _doctree("- outer\n\n" + rst + "\n")
    assert " ".join(doc.astext().split()).endswith(text)


def test_heading_underline_covers_the_escaped_title() -> None:
    title = heading("Test ID: *X*_", "-")
    text, rule = title.splitlines()
    assert rule == "-" * len(text) and isinstance(title, Rst)
    doc = _doctree(str(heading("Top", "=", overline=True)) + "\n\nIntro.\n\n" + title + "\n\nBody.\n")
    assert [s.astext() for s in doc.findall(nodes.title)] == ["Top", "Test ID: *X*_"]


def test_grid_table_cells_survive_parsing() -> None:
    rows = [
        ("tx_rate_fps", 14880952.380952381),
        ("min_latency_ns", None),
        ("b2b_frames", 21713),
        ("flags", "generator_under_delivery, rx_exceeds_tx"),
        ("note", "x " * 70 + "|pipe| *star*"),
        ("negative", -1.5),
    ]
    table = grid_table(("Metric", "Result"), rows)
    doc = _doctree(table + "\n")
    entries = [" ".join(e.astext().split()) for e in doc.findall(nodes.entry)]
    assert entries[:2] == ["Metric", "Result"]
    assert entries[2:8] == ["tx_rate_fps", "14880952.381", "min_latency_ns", "n/a", "b2b_frames", "21713"]
    assert entries[8:10] == ["flags", "generator_under_delivery, rx_exceeds_tx"]
    assert entries[11] == ("x " * 70).strip() + " |pipe| *star*"
    assert entries[13] == "-1.500"


def test_grid_table_rejects_ragged_rows() -> None:
    with pytest.raises(ValueError):
        grid_table(("a", "b"), [("only one",)])


def test_values_format_like_vsperf_reports() -> None:
    assert format_value(23316602.825312) == "23316602.825"
    assert format_value(0.0) == "0.000"
    assert format_value(64) == "64"
    assert format_value(None) == "n/a"
    assert format_value(True) == "True"
    assert finalize(None) == "n/a"
    assert finalize("a_") == "a\\_"
    assert finalize(Rst("**kept**")) == "**kept**"
