"""The report's HTML: plots linked then embedded, and the lighter markup the PDF is laid out from."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from vsperf.report.html import embed_images, for_pdf, linked_plots

pytest.importorskip("docutils.core", reason="docutils renders the report")

PAGE = (
    '<table><tr><th class="head"><p>packet_<wbr>size</p></th><td><p>64</p></td>\n'
    '<td><p>one</p>\n<p>two</p></td><td><p><a href="#x">link</a></p>\n</td></tr></table>\n'
    '<ul><li><p>kept: a list item keeps its paragraph</p></li></ul>\n'
    '<img alt="plots/a_1.png" src="plots/a_1.png" style="width: 100%;" />\n'
    '<img alt="x" src="https://example.invalid/b.png" />\n'
)


def test_for_pdf_unwraps_single_paragraph_cells() -> None:
    light = for_pdf(PAGE)
    assert '<th class="head">packet_<wbr>size</th>' in light
    assert "<td>64</td>" in light
    assert "<td><p>one</p>\n<p>two</p></td>" in light  # two paragraphs: left as they are
    assert '<td><a href="#x">link</a></td>' in light
    assert "<li><p>kept: a list item keeps its paragraph</p></li>" in light
    # White space between cells, rows and list items is never drawn: gone; in text it stays.
    assert "</td><td>" in light and "</table><ul>" in light and "<p>one</p>\n<p>two</p>" in light


def test_plots_are_linked_then_embedded(tmp_path: Path) -> None:
    (tmp_path / "plots").mkdir()
    (tmp_path / "plots" / "a_1.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    assert linked_plots(PAGE, tmp_path) == [tmp_path / "plots" / "a_1.png"]
    embedded = embed_images(PAGE, tmp_path)
    data = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
    assert f'<img alt="plots/a_1.png" src="data:image/png;base64,{data}" style="width: 100%;" />' in embedded
    assert 'src="https://example.invalid/b.png"' in embedded  # not a plot of ours: untouched
    assert linked_plots(embedded, tmp_path) == []
