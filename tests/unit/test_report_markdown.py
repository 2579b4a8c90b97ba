"""RST to Markdown: structure kept, text rendered exactly as written (no accidental markup)."""

from __future__ import annotations

from vsperf.report.markdown import escape_text, rst_to_markdown

DOC = """\
=====
Title
=====

:Run: abc123

.. warning::

   SIMULATED RUN: nothing was sent.

Section
=======

A *word*, a **strong** one, ``literal_code`` and a_b and _edge and 2 * 3 [x] <y> |z|.

- item one
- item two

  - nested item

1. first

Sub section
-----------

+--------+-------+
| Metric | Value |
+========+=======+
| a_b    | 1.500 |
+--------+-------+
| c      |   n/a |
+--------+-------+

.. figure:: plots/p.png
   :width: 100%

   Throughput against frame size: the caption.

::

    literal * text
"""


def test_structure() -> None:
    md = rst_to_markdown(DOC)
    assert md.startswith("# Title\n\n- **Run:** abc123\n")
    assert "> **Warning:** SIMULATED RUN: nothing was sent." in md
    assert '<a id="section"></a>\n## Section\n' in md
    assert '<a id="sub-section"></a>\n### Sub section\n' in md
    assert "- item one\n- item two\n  - nested item\n" in md
    assert "1. first\n" in md
    assert "| Metric | Value |\n|---|---:|\n| a_b | 1.500 |\n| c | n/a |\n" in md
    assert "![Throughput against frame size](plots/p.png)\n\n*Throughput against frame size: the caption.*" in md
    assert "```\nliteral * text\n```" in md


def test_text_is_escaped_only_where_markdown_would_see_markup() -> None:
    md = rst_to_markdown(DOC)
    assert "A *word*, a **strong** one, `literal_code` and a_b and \\_edge and 2 \\* 3 \\[x\\] \\<y\\> \\|z\\|." in md
    assert escape_text("throughput_rx_fps") == "throughput_rx_fps"
    assert escape_text("_x_ `y` *z*") == "\\_x\\_ \\`y\\` \\*z\\*"


def test_paragraphs_that_look_like_lists_or_headings_stay_text() -> None:
    md = rst_to_markdown("\\- not a list\n\n\\# not a heading\n")
    assert "\\- not a list" in md and "\\# not a heading" in md
