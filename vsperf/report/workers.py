"""The report's slow parts in worker processes: matplotlib plots and the WeasyPrint PDF.

A machine has few cores (two on ours) and the report has two slow, independent parts that
are pure Python, so each gets processes of its own:
- the plots, one job per test, on `PLOT_WORKERS` processes;
- the PDF, in one process that imports WeasyPrint while the text formats are written, then
  lays the PDF out as soon as its HTML is ready, in parts, with a helper process it forks
  (PDF_PROCESSES in all; vsperf.report.pdfbuild): it does not wait for the plots, only an
  image it reaches blocks until that plot's file exists (plots are written atomically).
Workers are forked (they start in milliseconds with vsperf imported); where fork is not
available the caller renders serially. A worker's exception is raised again in the caller.
They are vsperf.report.pool's workers: a report that is interrupted (a signal, a full disk)
stops them at once, none outlives vsperf, and none prints a traceback of its own.
"""

from __future__ import annotations

import contextlib
import logging
import time
import urllib.parse
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future
from multiprocessing.context import BaseContext
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from vsperf.report.plots import Plot, draw_plot, quiet_plot_logs
from vsperf.report.pool import WorkerPool, fork_context
from vsperf.results.load import load_results
from vsperf.results.model import RunResults

log = logging.getLogger(__name__)

PLOT_WORKERS = 2
PDF_PROCESSES = 2  # the PDF worker and a helper it forks lay out parts of the PDF side by side
PLOT_WAIT_S = 600.0  # the PDF gives up on a plot file after this long (a dead plot worker)
FAILED_MARKER = ".failed"  # in the plots folder: a plot job failed, the PDF stops waiting

_RUNS: dict[str, RunResults] = {}  # a plot worker loads the results once


__all__ = ["FAILED_MARKER", "PDF_PROCESSES", "PLOT_WORKERS", "PdfWorker", "PlotWorkers", "fork_context",
           "mark_plots_failed", "remove_partial_files", "wait_for_file", "waiting_fetcher"]


def _draw_test_plots(results_path: str, out_dir: str, test_index: int, plots: Sequence[Plot]) -> None:
    run = _RUNS.get(results_path)
    if run is None:
        run = _RUNS[results_path] = load_results(Path(results_path))
    test = next(t for t in run.tests if t.index == test_index)
    quiet_plot_logs()
    for plot in plots:
        draw_plot(run, test, plot, Path(out_dir))


class _Workers:
    """Worker processes of the report: waited for at a normal end, stopped at once otherwise
    (and, through PR_SET_PDEATHSIG, what they forked)."""

    _pool: WorkerPool

    def close(self) -> None:
        """The normal end: wait for the workers (cancelling jobs not started yet)."""
        self._pool.close()

    @property
    def pids(self) -> list[int]:
        """The worker processes' PIDs."""
        return self._pool.pids

    def _stopped(self) -> None:
        """What else an abandoned job needs (nothing by default)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc is None:
            self.close()
            return
        self._pool.stop()
        self._stopped()


class PlotWorkers(_Workers):
    """Draws planned plots on worker processes; `wait()` returns when every file is written."""

    def __init__(self, context: BaseContext, results_path: Path, out_dir: Path, plan: dict[int, list[Plot]]) -> None:
        self._out_dir = out_dir
        self._pool = WorkerPool(context, PLOT_WORKERS)
        self._futures: list[Future[None]] = [
            self._pool.submit(_draw_test_plots, str(results_path), str(out_dir), index, plots)
            for index, plots in plan.items()
            if plots
        ]

    def wait(self) -> None:
        """Block until every plot is drawn; raises a job's exception (and marks the failure so a
        PDF waiting for a plot stops)."""
        try:
            for future in self._futures:
                future.result()
        except BaseException:
            mark_plots_failed(self._out_dir)
            raise

    def _stopped(self) -> None:
        # interrupted, or a job failed: the workers end now, and the PDF worker stops waiting
        with contextlib.suppress(OSError):  # a full disk: nothing waits for the marker any more
            mark_plots_failed(self._out_dir)


def mark_plots_failed(out_dir: Path) -> None:
    """Tell a PDF worker waiting for plot files that they will not come."""
    folder = out_dir / "plots"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / FAILED_MARKER).touch()


def wait_for_file(path: Path, failed_marker: Path, timeout_s: float = PLOT_WAIT_S) -> None:
    """Return once `path` exists; raises RuntimeError when `failed_marker` appears first or
    after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    delay = 0.005
    while not path.exists():
        if failed_marker.exists():
            raise RuntimeError(f"{path.name} was not drawn: a plot job failed")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{path.name} was not drawn within {timeout_s:.0f} s")
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def waiting_fetcher(weasyprint: Any, pending: Collection[Path], failed_marker: Path) -> Any:
    """A WeasyPrint URL fetcher that, for a file in `pending`, first waits for it to exist;
    None when this WeasyPrint has no fetcher class (older than 68: wait for every file first)."""
    base = getattr(weasyprint, "URLFetcher", None)
    if base is None or not isinstance(base, type):
        for path in pending:
            wait_for_file(path, failed_marker)
        return None
    waiting = {str(p.resolve()) for p in pending}

    class WaitingFetcher(base):  # type: ignore[misc, valid-type]
        def fetch(self, url: str, headers: Any = None) -> Any:
            parsed = urllib.parse.urlsplit(url)
            if parsed.scheme == "file":
                local = urllib.parse.unquote(parsed.path)
                if local in waiting:
                    wait_for_file(Path(local), failed_marker)
            return super().fetch(url, headers)

    # Fail on errors: WeasyPrint would otherwise leave a plot that never came out of the PDF.
    return WaitingFetcher(fail_on_errors=True)


def quiet_pdf_logs() -> None:
    """Quieten WeasyPrint (before its import: it logs as it parses its own stylesheets)."""
    # WeasyPrint logs every CSS property it ignores (docutils' stylesheet has a few) and its
    # progress; fontTools its font subsetting.
    for name in ("weasyprint", "weasyprint.progress"):
        logging.getLogger(name).setLevel(logging.ERROR)
    logging.getLogger("fontTools").setLevel(logging.WARNING)


def _warm_up() -> None:
    # Importing WeasyPrint (and Pango through it) takes a while: done while the text is written,
    # and before the worker forks its layout helper; pypdf (the merge) likewise.
    quiet_pdf_logs()
    with contextlib.suppress(ImportError, OSError):  # html_to_pdf reports it, with the fix
        import weasyprint  # type: ignore[import-untyped]  # noqa: F401
    with contextlib.suppress(ImportError):
        import pypdf  # noqa: F401


class PdfWorker(_Workers):
    """One process that writes the PDF: start it early, `submit` the job when its HTML is ready.
    As a context manager it stops the process at once when the block raises."""

    def __init__(self, context: BaseContext) -> None:
        self._pool = WorkerPool(context, 1)
        self._pool.submit(_warm_up)
        self._future: Future[None] | None = None

    def submit(self, job: Callable[..., None], *args: Any) -> None:
        """Run `job(*args)` in the worker (after the warm-up)."""
        self._future = self._pool.submit(job, *args)

    def wait(self) -> None:
        """Block until the job ends; raises its exception."""
        if self._future is not None:
            self._future.result()



def remove_partial_files(out_dir: Path) -> None:
    """Remove the temporary files of an interrupted report (plots and the PDF are written to a
    temporary name, then renamed)."""
    for pattern in (".*.tmp", "plots/.*.tmp"):
        for path in out_dir.glob(pattern):
            with contextlib.suppress(OSError):
                path.unlink()
