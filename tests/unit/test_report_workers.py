"""The report rendered in worker processes: the same files as serially, plots planned before
they are drawn, and a failed plot that stops the PDF instead of leaving it waiting."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from report_fixtures import make_run

from vsperf.report import workers
from vsperf.report.formats import render_report
from vsperf.report.plots import plot_plan, plots_for_test
from vsperf.report.workers import fork_context, wait_for_file
from vsperf.results.load import load_results

pytest.importorskip("matplotlib", reason="plots need matplotlib")
pytest.importorskip("docutils.core", reason="docutils renders the report")
needs_fork = pytest.mark.skipif(fork_context() is None, reason="worker processes are forked: no fork here")
REPORTS = ("report.rst", "report.md", "report.html", "report.pdf")


def _files(results: Path) -> dict[str, bytes]:
    names = [*REPORTS, *(f"plots/{p.name}" for p in sorted((results / "plots").glob("*.png")))]
    return {name: (results / name).read_bytes() for name in names}


@needs_fork
def test_parallel_writes_the_same_files_as_serial(tmp_path: Path) -> None:
    pytest.importorskip("weasyprint", reason="the PDF needs WeasyPrint")
    results = make_run(tmp_path / "run")
    serial = render_report(results, parallel=False, strict=True)
    serial_files = _files(results)
    parallel = render_report(results, parallel=True, strict=True)  # again, in the same folder
    assert serial == parallel == [results / name for name in REPORTS]
    parallel_files = _files(results)
    assert len([n for n in serial_files if n.startswith("plots/")]) == 6
    assert parallel_files.keys() == serial_files.keys()
    for name, data in serial_files.items():
        assert parallel_files[name] == data, f"{name} differs between serial and parallel rendering"


def test_the_plan_is_what_is_drawn(tmp_path: Path) -> None:
    results = make_run(tmp_path / "run")
    run = load_results(results)
    for test in run.tests:
        planned = plot_plan(run, test)
        assert plots_for_test(run, test, results) == planned  # nothing was drawn to plan them
        for plot in planned:
            assert (results / plot.path).is_file() and plot.kind in plot.path
    assert [p.kind for p in plot_plan(run, run.tests[0])] == ["throughput", "latency", "trajectory", "persecond_64"]
    assert not list((results / "plots").glob(".*"))  # no temporary file left behind


@needs_fork
def test_a_failed_plot_stops_the_pdf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("weasyprint", reason="the PDF needs WeasyPrint")
    results = make_run(tmp_path / "run")

    def broken(*args: object) -> None:
        raise ValueError("matplotlib broke")

    monkeypatch.setattr(workers, "draw_plot", broken)  # forked workers inherit it
    with pytest.raises(ValueError, match="matplotlib broke"):
        render_report(results, ("pdf",), parallel=True, strict=True)
    assert not (results / "report.pdf").exists()
    assert (results / "plots" / workers.FAILED_MARKER).exists()
    # The next rendering starts afresh (the marker of the failed one does not stop it).
    monkeypatch.undo()
    assert render_report(results, ("pdf",), parallel=True, strict=True)[-1] == results / "report.pdf"


def test_wait_for_file(tmp_path: Path) -> None:
    target, marker = tmp_path / "plot.png", tmp_path / ".failed"
    writer = threading.Timer(0.05, target.write_bytes, args=(b"png",))
    writer.start()
    wait_for_file(target, marker, timeout_s=30)
    writer.join()
    assert target.read_bytes() == b"png"
    marker.touch()
    with pytest.raises(RuntimeError, match=r"other\.png was not drawn: a plot job failed"):
        wait_for_file(tmp_path / "other.png", marker, timeout_s=30)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"late.png was not drawn within 0 s"):
        wait_for_file(tmp_path / "late.png", tmp_path / "no-marker", timeout_s=0.1)
    assert time.monotonic() - start >= 0.1
