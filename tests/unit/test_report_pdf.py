"""The PDF laid out in parts and merged: the same pages, outline, contents and links as the
report laid out as one document, page numbers running over the whole report, on one process
or several (the same file), and no file at all when a part fails."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from report_fixtures import make_run

from vsperf.report import pdfbuild
from vsperf.report.formats import render_report
from vsperf.report.html import doctree_to_html, for_pdf, html_to_pdf
from vsperf.report.markdown import parse_rst
from vsperf.report.pdflayout import Bookmark, PartLayout, layout_part
from vsperf.report.pdfmerge import merge_parts, outline_tree
from vsperf.report.pdfparts import PAGE_PLACEHOLDER, front_html, furniture_html, split_report
from vsperf.report.workers import fork_context

pytest.importorskip("docutils.core", reason="docutils renders the report")


def _test(name: str, body: str = "") -> str:
    return (f'<section class="vsperf-test" id="test-{name}">\n<h3>Test {name}</h3>\n'
            f'<section id="env-{name}"><h4>Environment</h4><p>{body or name}</p></section>\n</section>\n')


def _page(tests: list[str]) -> str:
    toc = "".join(f'<li><a class="reference internal" href="#test-{t}">{t}</a></li>' for t in tests)
    return ('<!DOCTYPE html><html><head><title>T</title><style>p {}</style></head>\n<body class="x">\n'
            '<main id="report">\n<h1 class="title">Report</h1>\n'
            '<dl class="docinfo simple"><dt>Document identifier</dt><dd><p>DOC-1</p></dd></dl>\n'
            f'<nav class="contents" id="contents"><ul><li><a href="#intro">Intro</a></li>{toc}'
            '<li><a href="#back">Back</a></li></ul></nav>\n'
            '<section id="intro"><h2>Intro</h2><p>front</p></section>\n'
            '<section id="details">\n<h2>Details</h2>\n'
            + "".join(_test(t, "x" * (500 if t == "a" else 10)) for t in tests)
            + '</section>\n<section id="back"><h2>Back</h2><p>after the tests</p></section>\n'
            '</main>\n</body>\n</html>\n')


def test_the_html_is_cut_before_each_group_of_tests() -> None:
    html = _page(["a", "b", "c"])
    parts = split_report(html)
    assert parts is not None
    assert "<h3>" not in parts.front and parts.front.rstrip().endswith("</body></html>")
    assert parts.front.count("<section") == parts.front.count("</section>")
    # The long first test alone, then the others with the back matter; each a whole document.
    assert [re.findall(r"<h3>Test (\w)", g) for g in parts.groups] == [["a"], ["b", "c"]]
    assert "after the tests" in parts.groups[-1] and "after the tests" not in parts.groups[0]
    for group in parts.groups:
        assert group.startswith("<!DOCTYPE html>") and "<style>p {}</style>" in group
        assert group.count("<section") == group.count("</section>")
        assert 'id="report"' not in group and 'id="details"' not in group  # wrappers reopened without ids
    assert parts.external_targets == {"test-a", "test-b", "test-c", "back"}  # "#intro" is in the front
    assert "DOC-1" in parts.docinfo


def test_front_links_carry_page_numbers_and_furniture_has_every_page() -> None:
    parts = split_report(_page(["a", "b"]))
    assert parts is not None
    placeholder = front_html(parts, None)
    assert placeholder.count(f'data-page="{PAGE_PLACEHOLDER}"') == 3
    numbered = front_html(parts, {"test-a": 3, "test-b": 5, "back": 6})
    assert 'href="#test-a" data-page="3"' in numbered and 'href="#back" data-page="6"' in numbered
    assert 'href="#intro">' in numbered  # in the front itself: WeasyPrint numbers it
    furniture = furniture_html(parts, 7)
    assert furniture.count("break-before: page") == 6 and "DOC-1" in furniture


def test_a_report_that_cannot_be_cut_is_laid_out_whole() -> None:
    assert split_report(_page(["a"])) is None
    assert split_report("<html><body><p>no tests</p></body></html>") is None


def test_outline_nests_by_level_as_weasyprint_does() -> None:
    marks = [Bookmark(level, str(level), 0, 0.0, 0.0, True) for level in (1, 2, 4, 2, 3, 1)]
    tree = outline_tree(marks)
    assert [n.bookmark.label for n in tree if n.bookmark] == ["1", "1"]
    first = tree[0].children
    assert [n.bookmark.label for n in first if n.bookmark] == ["2", "2"]
    assert [n.bookmark.label for n in first[0].children if n.bookmark] == ["4"]  # h2 then h4: one deeper
    assert [n.bookmark.label for n in first[1].children if n.bookmark] == ["3"]


def test_furniture_must_match_the_pages() -> None:
    part = PartLayout(b"", 2, {}, (), ())
    with pytest.raises(RuntimeError, match="furniture has 3 pages for 2 report pages"):
        merge_parts([part], PartLayout(b"", 3, {}, (), ()))


@pytest.fixture(scope="module")
def report_html(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    pytest.importorskip("weasyprint", reason="the PDF needs WeasyPrint")
    results = make_run(tmp_path_factory.mktemp("pdf") / "run")
    render_report(results, ("rst",), plots=False)
    html = for_pdf(doctree_to_html(parse_rst((results / "report.rst").read_text())))
    return html, results


def _words(page: object) -> list[str]:
    return sorted(page.extract_text().split())  # type: ignore[attr-defined]


def _outline(reader: object) -> list[tuple[int, str, int]]:
    out: list[tuple[int, str, int]] = []

    def walk(items: list[object], depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
            else:
                out.append((depth, item.title, reader.get_destination_page_number(item)))  # type: ignore[attr-defined]

    walk(reader.outline, 0)  # type: ignore[attr-defined]
    return out


def test_merged_pdf_is_the_whole_documents(report_html: tuple[str, Path]) -> None:
    pypdf = pytest.importorskip("pypdf", reason="the PDF's parts are merged with pypdf")
    html, results = report_html
    assert split_report(html) is not None  # three tests: cut in parts
    whole = pypdf.PdfReader(io.BytesIO(layout_part(html, results).pdf))
    merged_bytes = pdfbuild.build_pdf(html, results, processes=1)
    merged = pypdf.PdfReader(io.BytesIO(merged_bytes))
    count = len(whole.pages)
    assert len(merged.pages) == count >= 4
    for number, (a, b) in enumerate(zip(whole.pages, merged.pages, strict=True), start=1):
        assert _words(a) == _words(b), f"page {number} differs"
        assert f"Page {number} of {count}" in b.extract_text()  # numbers run over the whole report
    outline = _outline(merged)
    assert outline == _outline(whole)
    tests = [(title, page) for depth, title, page in outline if title.startswith("Test ID:")]
    assert [t for t, _ in tests] == ["Test ID: PHY2PHY_TPUT", "Test ID: BACK2BACK", "Test ID: PVP_TPUT"]
    contents = merged.pages[0].extract_text() + merged.pages[1].extract_text()
    for title, page in tests:  # the contents print each test's page, as the bookmarks lead there
        assert re.search(re.escape(title) + r"[ .]*" + str(page + 1) + r"\b", contents), title
    assert set(merged.named_destinations) == set(whole.named_destinations)

    def links(reader: object) -> list[tuple[int, str]]:
        return sorted((i, str(a.get_object()["/Dest"])) for i, p in enumerate(reader.pages)  # type: ignore[attr-defined]
                      for a in p.get("/Annots") or ())

    assert links(merged) == links(whole) and len(links(merged)) >= 3
    assert merged.metadata == whole.metadata


@pytest.mark.skipif(fork_context() is None, reason="helper processes are forked: no fork here")
def test_two_processes_write_the_same_file(report_html: tuple[str, Path]) -> None:
    pytest.importorskip("pypdf", reason="the PDF's parts are merged with pypdf")
    html, results = report_html
    assert pdfbuild.build_pdf(html, results, processes=2) == pdfbuild.build_pdf(html, results, processes=1)


def test_a_failed_part_leaves_no_file(report_html: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    html, results = report_html
    out = results / "report.pdf"
    out.unlink(missing_ok=True)
    calls: list[str] = []

    def broken(text: str, *args: object) -> PartLayout:
        calls.append(text)
        if len(calls) == 2:
            raise ValueError("layout broke")
        return layout_part(text, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(pdfbuild, "layout_part", broken)
    with pytest.raises(ValueError, match="layout broke"):
        html_to_pdf(html.encode(), results, out)
    assert not out.exists() and not list(results.glob(".report.pdf*"))
