"""The Level Test Report in every format, rendered from a run's result files only.

`render_report(results_dir, formats)` loads results.json, draws the plots (DIR/plots/*.png),
renders report.rst from the template, and converts that one text into the other formats:
- md: Markdown, from the RST's docutils tree (vsperf.report.markdown);
- html: docutils' HTML5 writer with templates/report.css, plots embedded (one self-contained file);
- pdf: WeasyPrint from that HTML (A4, page numbers, table of contents with page numbers),
  laid out in parts side by side and merged (vsperf.report.pdfbuild).
The RST is always written (every other format comes from it), and parsed once for the others.

The plots and the PDF take most of the time: with `parallel` (the default) they run in worker
processes (vsperf.report.workers) while the text formats are written, and the PDF lays out
its text while the plots are still being drawn. The files are the same either way.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from contextlib import ExitStack
from pathlib import Path

from vsperf.errors import ConfigError, PrerequisiteError
from vsperf.outputs import RUN_MIN_FREE_BYTES, OutputError, check_output_dir, lost
from vsperf.report.anomalies import read_log_warnings
from vsperf.report.html import doctree_to_html, embed_images, for_pdf, html_to_pdf, linked_plots
from vsperf.report.markdown import MarkdownWriter, parse_rst
from vsperf.report.pdflayout import PDF_PREREQUISITES
from vsperf.report.plots import Plot, draw_plot, plot_plan, quiet_plot_logs
from vsperf.report.rst import REPORT_BASENAME, render_rst
from vsperf.report.workers import (
    FAILED_MARKER,
    PDF_PROCESSES,
    PdfWorker,
    PlotWorkers,
    fork_context,
    remove_partial_files,
)
from vsperf.results.atomic import write_text_atomic
from vsperf.results.load import load_results, results_file
from vsperf.results.model import RunResults
from vsperf.signals import interruptible, stop_reason, stops_raised

log = logging.getLogger(__name__)

FORMATS = ("rst", "md", "html", "pdf")
OVERALL_LOG = "overall.log"  # as vsperf.run.runner writes it
__all__ = ["FORMATS", "PDF_PREREQUISITES", "check_formats", "html_to_pdf", "render_report", "report_after_run"]


def check_formats(formats: Sequence[str]) -> tuple[str, ...]:
    """`formats` validated and in the order they are written; raises ConfigError on an unknown one."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ConfigError(f"report format {unknown[0]!r} is not supported; use one of: {', '.join(FORMATS)}")
    return tuple(f for f in FORMATS if f in formats)


def _plan(run: RunResults, plots: bool, strict: bool) -> dict[int, list[Plot]]:
    """The plots to draw by test index ({} without plots or without matplotlib)."""
    if not plots:
        return {}
    try:
        import matplotlib  # noqa: F401  # drawn in workers: fail here, with the fix, when missing
    except ImportError as exc:
        if strict:
            raise PrerequisiteError(f"plots need matplotlib: pip install matplotlib ({exc})") from exc
        log.warning("report without plots: matplotlib is missing (pip install matplotlib)")
        return {}
    return {test.index: plot_plan(run, test) for test in run.tests}


def _pdf_job(html: bytes, base_dir: Path, out: Path, pending: Collection[Path]) -> None:
    # In the PDF worker, which forks helpers of its own; html_to_pdf looked up here, at call
    # time (tests replace it).
    html_to_pdf(html, base_dir, out, pending=pending, processes=PDF_PROCESSES)


def render_report(
    results_dir: Path,
    formats: Sequence[str] = FORMATS,
    *,
    plots: bool = True,
    strict: bool = False,
    parallel: bool = True,
) -> list[Path]:
    """Write the Level Test Report of the run in `results_dir` (from its results.json alone)
    in `formats`; returns the files written.

    `plots`: draw plots (needs matplotlib). A format whose tool is missing (PDF without
    WeasyPrint) is skipped with a warning naming what to install, unless `strict`, where it
    raises PrerequisiteError. Raises ConfigError when the results cannot be loaded.
    `parallel`: draw the plots and the PDF in worker processes (where the platform can fork).
    Interrupted (a signal: KeyboardInterrupt; a failed write: vsperf.outputs.OutputLost), it
    stops its workers at once and removes its temporary files before the exception goes on.
    """
    wanted = check_formats(formats)
    source = results_file(results_dir)
    run = load_results(source)
    out_dir = source.parent
    # The report is work a further signal may abandon (vsperf.signals); what it leaves behind
    # is cleaned up, and a write that fails (a full disk) stops it as an interruption.
    with interruptible():
        try:
            return _render(run, source, wanted, plots=plots, strict=strict, parallel=parallel)
        except OSError as exc:
            if exc.errno is None:
                raise
            remove_partial_files(out_dir)
            raise lost(f"the report in {out_dir}", exc) from None
        except BaseException:
            remove_partial_files(out_dir)
            raise


def _render(run: RunResults, source: Path, wanted: tuple[str, ...], *, plots: bool, strict: bool,
            parallel: bool) -> list[Path]:
    out_dir = source.parent
    plan = _plan(run, plots, strict)
    planned = [p for test_plots in plan.values() for p in test_plots]
    context = fork_context() if parallel else None
    with ExitStack() as stack:
        pdf_worker = None
        if context is not None and "pdf" in wanted:
            pdf_worker = stack.enter_context(PdfWorker(context))
        plot_workers = None
        if planned:
            # A re-rendered run: old files must not pass for new ones (the PDF waits for them).
            for plot in planned:
                (out_dir / plot.path).unlink(missing_ok=True)
            (out_dir / "plots" / FAILED_MARKER).unlink(missing_ok=True)
            if context is not None:
                plot_workers = stack.enter_context(PlotWorkers(context, source, out_dir, plan))
            else:
                _draw_serially(run, plan, out_dir)
        rst_path = out_dir / f"{REPORT_BASENAME}.rst"
        rst_text = render_rst(run, source, plan, read_log_warnings(out_dir / OVERALL_LOG))
        write_text_atomic(rst_path, rst_text)
        written = [rst_path]
        if wanted == ("rst",):
            if plot_workers is not None:
                plot_workers.wait()
            return written
        document = parse_rst(rst_text)
        # The Markdown comes from the tree too, but after the HTML: the PDF, the longest part,
        # starts from that HTML. (The HTML writer leaves the tree as the Markdown writer needs it.)
        html = doctree_to_html(document) if "html" in wanted or "pdf" in wanted else ""
        pdf_path = out_dir / f"{REPORT_BASENAME}.pdf"
        pdf_html = for_pdf(html).encode("utf-8")
        pending = linked_plots(html, out_dir) if plot_workers is not None else []
        if pdf_worker is not None:
            pdf_worker.submit(_pdf_job, pdf_html, out_dir, pdf_path, pending)
        if "md" in wanted:
            path = out_dir / f"{REPORT_BASENAME}.md"
            write_text_atomic(path, MarkdownWriter().render(document))
            written.append(path)
        if plot_workers is not None:
            plot_workers.wait()
        if "html" in wanted:
            path = out_dir / f"{REPORT_BASENAME}.html"
            write_text_atomic(path, embed_images(html, out_dir))
            written.append(path)
        if "pdf" in wanted:
            try:
                if pdf_worker is not None:
                    pdf_worker.wait()
                else:
                    html_to_pdf(pdf_html, out_dir, pdf_path)
                written.append(pdf_path)
            except PrerequisiteError as exc:
                if strict:
                    raise
                log.warning("report.pdf not written: %s", exc)
    return written


def report_after_run(results_dir: Path, formats: Sequence[str], *, plots: bool) -> tuple[list[Path], bool]:
    """The runner's report: (files written, whether it was interrupted). Never raises: a report
    bug must not lose the run (results.json is written already; `vsperf report DIR` retries), and
    a signal or a full disk during the report ends it, logged, as an interruption of the run."""
    try:
        check_output_dir(results_dir, "report directory", min_free_bytes=RUN_MIN_FREE_BYTES)
    except OutputError as exc:  # a disk that filled during the run: the report would fail half-way
        log.error("report not written: %s; then `vsperf report %s`", exc, results_dir)
        return [], True
    before = stops_raised()
    try:
        files = render_report(results_dir, formats, plots=plots)
        if stops_raised() != before:  # the signal's exception was lost (in a GC callback): still a stop
            log.error("run stopped by a signal during the report (the report was finished)")
            return files, True
        return files, False
    except KeyboardInterrupt as exc:
        log.error("report not finished: %s; `vsperf report %s` renders it", stop_reason(exc), results_dir)
        return [], True
    except Exception:
        log.exception("could not render the report; `vsperf report %s` retries", results_dir)
        return [], False


def _draw_serially(run: RunResults, plan: dict[int, list[Plot]], out_dir: Path) -> None:
    quiet_plot_logs()
    for test in run.tests:
        for plot in plan.get(test.index, ()):
            draw_plot(run, test, plot, out_dir)
