"""The report in RST, Markdown, HTML and PDF: the same content in every format, from results only."""

from __future__ import annotations

import base64
import io
import re
import shutil
import zlib
from pathlib import Path

import pytest
from report_fixtures import B2B_64, STATISTICS, THROUGHPUT_64, THROUGHPUT_1518, WARNING, make_run

from vsperf.collectors.pidstat import PIDSTAT_COLUMNS
from vsperf.errors import ConfigError, PrerequisiteError
from vsperf.report import formats
from vsperf.report.formats import check_formats, render_report
from vsperf.report.markup import format_value

docutils_core = pytest.importorskip("docutils.core", reason="docutils renders the report")
from docutils import nodes  # noqa: E402


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results directory holding results.json and overall.log only, rendered in all formats."""
    results = make_run(tmp_path_factory.mktemp("report") / "run")
    written = render_report(results, ("pdf", "html", "md", "rst"), strict=True)
    assert [p.name for p in written] == ["report.rst", "report.md", "report.html", "report.pdf"]
    return results


def _doctree(text: str) -> nodes.document:
    stream = io.StringIO()
    doc = docutils_core.publish_doctree(text, settings_overrides={"report_level": 2, "halt_level": 5,
                                                                   "warning_stream": stream})
    problems = [m.astext() for m in doc.findall(nodes.system_message) if m["level"] >= 2]
    assert not problems and not stream.getvalue(), (problems, stream.getvalue())
    return doc


def _expected_cells() -> list[str]:
    """Every metric key and value, and every statistic, the report must show."""
    cells: list[str] = []
    for outcome in (THROUGHPUT_64, THROUGHPUT_1518, B2B_64):
        for key, value in outcome.metrics.items():
            cells += [key, format_value(value)]
    for group, values in STATISTICS.items():
        cells.append(group)
        for key, value in values.items():
            if isinstance(value, dict):  # a table of rows (CPU lines, ports): its cells
                cells += [c for column, v in value.items() for c in (column, format_value(v))]
            else:
                cells += [key, format_value(value)]
    return cells


def test_the_rst_is_valid_and_complete(rendered: Path) -> None:
    text = (rendered / "report.rst").read_text()
    doc = _doctree(text)
    cells = {" ".join(e.astext().split()) for e in doc.findall(nodes.entry)}
    for cell in _expected_cells():
        if cell.startswith("Process:") or cell == "System CPU" or cell == "Interface counters":
            assert f"{cell}:" in text
        else:
            assert cell in cells, cell
    # process statistics with exactly pidstat's columns, in order, as seeds/001
    block = text[text.index("Process: ovs-vswitchd:"):]
    rows = re.findall(r"^\| (\S+)\s+\|", block, re.MULTILINE)[1 : 1 + len(PIDSTAT_COLUMNS)]
    assert [r.replace("\\", "") for r in rows] == list(PIDSTAT_COLUMNS)
    # tables of statistics groups: few CPU lines become columns
    assert "| Statistic | CPU all | CPU 0  | CPU 1  |" in text
    assert "| Statistic  | port 0 (g0 in ns0) | port 1 (g1 in ns1) |" in text
    figures = [f["uri"] for f in doc.findall(nodes.image)]
    assert figures == [
        "plots/test00_phy2phy_tput_throughput.png",
        "plots/test00_phy2phy_tput_latency.png",
        "plots/test00_phy2phy_tput_trajectory.png",
        "plots/test00_phy2phy_tput_persecond_64.png",
        "plots/test01_back2back_back2back.png",
        "plots/test01_back2back_trajectory.png",
    ]
    assert all((rendered / uri).is_file() for uri in figures)


def test_anomalies_in_the_report(rendered: Path) -> None:
    doc = _doctree((rendered / "report.rst").read_text())
    sections = {}
    for section in doc.findall(nodes.section):
        if section[0].astext().startswith("Test ID"):
            anomalies = next(s for s in section.findall(nodes.section) if s[0].astext() == "Anomalies")
            sections[section[0].astext()] = " ".join(anomalies.astext().split())
    assert "spread 10.00 %" in sections["Test ID: PHY2PHY_TPUT"]
    assert "the verification trial (trial 4) lost 0.2000 %" in sections["Test ID: PHY2PHY_TPUT"]
    assert WARNING in sections["Test ID: PHY2PHY_TPUT"]
    assert sections["Test ID: BACK2BACK"].endswith("No anomalies were detected during the course of this test.")
    assert "The test failed: testpmd died." in sections["Test ID: PVP_TPUT"]
    text = (rendered / "report.rst").read_text()
    assert "Warnings logged outside the tests (see overall.log):" in text
    assert "removed leftover of a killed run: netns vspdead" in text


def test_markdown_has_the_same_content(rendered: Path) -> None:
    md = (rendered / "report.md").read_text()
    assert md.startswith("# vsperf Level Test Report\n")
    assert "\x00" not in md  # docutils' marks of RST escapes never leak
    plain = md.replace("\\", "")
    for cell in _expected_cells():
        assert cell in plain, cell
    assert "| Metric | Result |\n|---|---|\n| tx_rate_fps | 10000000.000 |" in md
    assert "![Throughput against frame size](plots/test00_phy2phy_tput_throughput.png)" in md
    assert '<a id="test-id-phy2phy-tput"></a>\n### Test ID: PHY2PHY_TPUT\n' in md
    assert "- [Test ID: PHY2PHY_TPUT](#test-id-phy2phy-tput)" in md


def test_html_is_one_self_contained_file(rendered: Path) -> None:
    html = (rendered / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>")
    images = re.findall(r'<img [^>]*src="data:image/png;base64,([^"]+)"', html)
    assert len(images) == 6
    assert all(base64.b64decode(i)[:8] == b"\x89PNG\r\n\x1a\n" for i in images)
    assert "@bottom-center" in html  # the page numbers of the PDF come from the embedded CSS
    text = re.sub(r"<[^>]+>", "", html)
    for cell in _expected_cells():
        assert cell in text, cell


def _pdf_objects(pdf: bytes) -> bytes:
    """The PDF's objects as text, compressed object streams inflated."""
    parts = [pdf]
    for stream in re.findall(rb"stream\r?\n(.*?)endstream", pdf, re.DOTALL):
        try:
            parts.append(zlib.decompress(stream))
        except zlib.error:
            continue  # an image or a font: not objects
    return b"\n".join(parts)


def test_pdf(rendered: Path) -> None:
    pdf = (rendered / "report.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF")
    objects = _pdf_objects(pdf)
    pages = len(re.findall(rb"/Type\s*/Page\b", objects))
    assert pages >= 5
    assert len(re.findall(rb"/Subtype\s*/Image", objects)) >= 6


def test_rerender_from_results_alone(rendered: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(rendered / "results.json", copy / "results.json")
    written = render_report(copy, ("rst", "md"), plots=False)
    assert [p.name for p in written] == ["report.rst", "report.md"]
    text = (copy / "report.rst").read_text()
    assert ".. figure::" not in text and not (copy / "plots").exists()
    assert "Warnings logged outside the tests" not in text  # there is no overall.log here


def test_formats_are_checked_and_missing_tools_reported(rendered: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert check_formats(["pdf", "rst"]) == ("rst", "pdf")
    with pytest.raises(ConfigError, match="report format 'docx' is not supported; use one of: rst, md, html, pdf"):
        check_formats(["docx"])

    def no_weasyprint(html: bytes, base_dir: Path, out: Path, **options: object) -> None:
        raise PrerequisiteError(formats.PDF_PREREQUISITES)

    monkeypatch.setattr(formats, "html_to_pdf", no_weasyprint)
    with pytest.raises(PrerequisiteError, match="pip install weasyprint"):
        render_report(rendered, ("pdf",), plots=False, strict=True)
    written = render_report(rendered, ("html", "pdf"), plots=False)  # not strict: skipped, logged
    assert [p.name for p in written] == ["report.rst", "report.html"]


def test_report_command_formats(rendered: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vsperf.cli.main import main

    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(rendered / "results.json", copy / "results.json")
    with pytest.raises(SystemExit) as exc:
        main(["report", str(copy), "--format", "rst,md"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.split() == ["report:", str(copy / "report.rst"), "report:", str(copy / "report.md")]
    with pytest.raises(SystemExit) as exc:
        main(["report", str(copy), "--format", "docx"])
    assert exc.value.code == 2
    assert "report format 'docx' is not supported" in capsys.readouterr().err
