"""The report in HTML (one self-contained file) and in PDF (WeasyPrint), from its docutils tree.

One HTML text is written from the tree, with the plots as links (plots/*.png):
- `embed_images` turns it into report.html, every plot inline as a data: URI;
- `for_pdf` lightens it for WeasyPrint, which then reads the plot files itself: no base64 to
  encode and decode again, and fewer boxes to lay out (the look is unchanged).
"""

from __future__ import annotations

import base64
import io
import re
from collections.abc import Collection
from pathlib import Path

from docutils import nodes
from docutils.core import publish_from_doctree
from docutils.writers.html5_polyglot import Writer

from vsperf.paths import data_dir
from vsperf.report.pdfbuild import build_pdf

STYLESHEET = "report.css"
_HEAD_CELL = re.compile(r"(<th\b[^>]*>)(.*?)(</th>)", re.DOTALL)
_LINKED_PLOT = re.compile(r'(<img\b[^>]*?\bsrc=")(plots/[A-Za-z0-9_.-]+\.png)(")')
# White space before a table part, a list (item) or a section tag: not rendered (no inline
# content around it), yet WeasyPrint makes a box of it first.
_BETWEEN_BLOCKS = re.compile(r">\s+<(?=/?(?:table|thead|tbody|tr|td|th|ul|ol|li|section)\b)")
# A table cell holding one paragraph: <td><p>text</p></td> (text without another paragraph).
_CELL_PARAGRAPH = re.compile(r"(<(td|th)\b[^>]*>)<p>((?:(?!</?p\b).)*)</p>(\s*</\2>)", re.DOTALL)


def doctree_to_html(document: nodes.document) -> str:
    """The HTML5 page of the report: stylesheet embedded, plots linked (plots/*.png)."""
    overrides = {
        "stylesheet_path": str(data_dir("templates") / STYLESHEET),
        "embed_stylesheet": True,
        "image_loading": "link",
        "report_level": 5,
        "halt_level": 5,
        "warning_stream": io.StringIO(),
        "_disable_config": True,
        "output_encoding": "utf-8",
        "section_self_link": False,
        "toc_backlinks": False,
    }
    html = publish_from_doctree(document, writer=Writer(), settings_overrides=overrides)
    page = html.decode("utf-8") if isinstance(html, bytes) else str(html)
    # Column heads are result keys (throughput_rx_percent): let them wrap after an underscore
    # rather than widen a table beyond the page.
    return _HEAD_CELL.sub(lambda m: m.group(1) + m.group(2).replace("_", "_<wbr>") + m.group(3), page)


def embed_images(html: str, base_dir: Path) -> str:
    """`html` with every linked plot (relative to `base_dir`) inlined as a data: URI."""

    def inline(match: re.Match[str]) -> str:
        data = base64.b64encode((base_dir / match.group(2)).read_bytes()).decode("ascii")
        return f"{match.group(1)}data:image/png;base64,{data}{match.group(3)}"

    return _LINKED_PLOT.sub(inline, html)


def linked_plots(html: str, base_dir: Path) -> list[Path]:
    """The plot files `html` links to."""
    return [base_dir / m.group(2) for m in _LINKED_PLOT.finditer(html)]


def for_pdf(html: str) -> str:
    """`html` lightened for WeasyPrint: a table cell's lone paragraph (margin 0 in report.css)
    becomes the cell's text, one box fewer for each of the thousands of cells; the white space
    between table cells, rows, list items and sections (never drawn) goes, a text box fewer
    each (5-7 % of the layout time of seed 001's report)."""
    return _BETWEEN_BLOCKS.sub("><", _CELL_PARAGRAPH.sub(r"\1\3\4", html))


def html_to_pdf(
    html: bytes, base_dir: Path, out: Path, *, pending: Collection[Path] = (), processes: int = 1
) -> None:
    """Render the report's HTML into a PDF with WeasyPrint, laid out in parts on up to
    `processes` processes and merged (vsperf.report.pdfbuild); raises PrerequisiteError
    without WeasyPrint or pypdf. The file appears whole or not at all.

    `pending`: image files still being drawn; WeasyPrint waits for each when it reaches it.
    """
    data = build_pdf(html.decode("utf-8"), base_dir, pending, processes)
    tmp = out.with_name(f".{out.name}.tmp")
    try:
        tmp.write_bytes(data)
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
