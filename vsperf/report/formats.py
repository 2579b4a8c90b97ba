"""The Level Test Report in every format, rendered from a run's result files only.

`render_report(results_dir, formats)` loads results.json, draws the plots (DIR/plots/*.png),
renders report.rst from the template, and converts that one text into the other formats:
- md: Markdown, from the RST's docutils tree (vsperf.report.markdown);
- html: docutils' HTML5 writer with templates/report.css, plots embedded (one self-contained file);
- pdf: WeasyPrint from that HTML (A4, page numbers, table of contents with page numbers).
The RST is always written (every other format comes from it).
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Sequence
from pathlib import Path

from vsperf.errors import ConfigError, PrerequisiteError
from vsperf.paths import data_dir
from vsperf.report.anomalies import read_log_warnings
from vsperf.report.markdown import rst_to_markdown
from vsperf.report.plots import write_plots
from vsperf.report.rst import REPORT_BASENAME, render_rst
from vsperf.results.atomic import write_text_atomic
from vsperf.results.load import load_results, results_file

log = logging.getLogger(__name__)

FORMATS = ("rst", "md", "html", "pdf")
_HEAD_CELL = re.compile(r"(<th\b[^>]*>)(.*?)(</th>)", re.DOTALL)
STYLESHEET = "report.css"
OVERALL_LOG = "overall.log"  # as vsperf.runner writes it
PDF_PREREQUISITES = (
    "PDF reports need WeasyPrint and Pango: pip install weasyprint; "
    "apt-get install libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core"
)


def check_formats(formats: Sequence[str]) -> tuple[str, ...]:
    """`formats` validated and in the order they are written; raises ConfigError on an unknown one."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ConfigError(f"report format {unknown[0]!r} is not supported; use one of: {', '.join(FORMATS)}")
    return tuple(f for f in FORMATS if f in formats)


def rst_to_html(rst_text: str, source_path: Path) -> bytes:
    """The HTML5 document of the report (stylesheet and images embedded), as UTF-8 bytes.

    `source_path` is where the RST lives: image paths in it are relative to its folder.
    """
    from docutils.core import publish_string

    overrides = {
        "stylesheet_path": str(data_dir("templates") / STYLESHEET),
        "embed_stylesheet": True,
        "image_loading": "embed",
        "report_level": 5,
        "halt_level": 5,
        "warning_stream": io.StringIO(),
        "_disable_config": True,
        "input_encoding": "utf-8",
        "output_encoding": "utf-8",
        "section_self_link": False,
        "toc_backlinks": False,
    }
    # Embedding reads image files relative to the working directory: give docutils absolute
    # paths for that, the RST on disk keeps its relative ones.
    text = rst_text.replace(".. figure:: plots/", f".. figure:: {source_path.parent.resolve()}/plots/")
    html = publish_string(text, source_path=str(source_path), writer="html5", settings_overrides=overrides)
    page = html.decode("utf-8") if isinstance(html, bytes) else str(html)
    # Column heads are result keys (throughput_rx_percent): let them wrap after an underscore
    # rather than widen a table beyond the page.
    page = _HEAD_CELL.sub(lambda m: m.group(1) + m.group(2).replace("_", "_<wbr>") + m.group(3), page)
    return page.encode("utf-8")


def html_to_pdf(html: bytes, base_dir: Path, out: Path) -> None:
    """Render the report's HTML into a PDF with WeasyPrint (raises PrerequisiteError without it)."""
    # WeasyPrint logs every CSS property it ignores (docutils' stylesheet has a few) and its
    # progress, from its import on; fontTools its font subsetting.
    for name in ("weasyprint", "weasyprint.progress"):
        logging.getLogger(name).setLevel(logging.ERROR)
    logging.getLogger("fontTools").setLevel(logging.WARNING)
    try:
        import weasyprint  # type: ignore[import-untyped]
    except (ImportError, OSError) as exc:  # OSError: WeasyPrint installed but Pango missing
        raise PrerequisiteError(f"{PDF_PREREQUISITES} ({exc})") from exc
    tmp = out.with_name(f".{out.name}.tmp")
    try:
        weasyprint.HTML(string=html.decode("utf-8"), base_url=str(base_dir.resolve()) + "/").write_pdf(tmp)
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)


def render_report(
    results_dir: Path,
    formats: Sequence[str] = FORMATS,
    *,
    plots: bool = True,
    strict: bool = False,
) -> list[Path]:
    """Write the Level Test Report of the run in `results_dir` (from its results.json alone)
    in `formats`; returns the files written.

    `plots`: draw plots (needs matplotlib). A format whose tool is missing (PDF without
    WeasyPrint) is skipped with a warning naming what to install, unless `strict`, where it
    raises PrerequisiteError. Raises ConfigError when the results cannot be loaded.
    """
    wanted = check_formats(formats)
    source = results_file(results_dir)
    run = load_results(source)
    out_dir = source.parent
    drawn = {}
    if plots:
        try:
            drawn = write_plots(run, out_dir)
        except ImportError as exc:
            if strict:
                raise PrerequisiteError(f"plots need matplotlib: pip install matplotlib ({exc})") from exc
            log.warning("report without plots: matplotlib is missing (pip install matplotlib)")
    rst_path = out_dir / f"{REPORT_BASENAME}.rst"
    rst_text = render_rst(run, source, drawn, read_log_warnings(out_dir / OVERALL_LOG))
    write_text_atomic(rst_path, rst_text)
    written = [rst_path]
    if "md" in wanted:
        path = out_dir / f"{REPORT_BASENAME}.md"
        write_text_atomic(path, rst_to_markdown(rst_text))
        written.append(path)
    if "html" in wanted or "pdf" in wanted:
        html = rst_to_html(rst_text, rst_path)
        if "html" in wanted:
            path = out_dir / f"{REPORT_BASENAME}.html"
            write_text_atomic(path, html.decode("utf-8"))
            written.append(path)
        if "pdf" in wanted:
            path = out_dir / f"{REPORT_BASENAME}.pdf"
            try:
                html_to_pdf(html, out_dir, path)
                written.append(path)
            except PrerequisiteError as exc:
                if strict:
                    raise
                log.warning("report.pdf not written: %s", exc)
    return written
