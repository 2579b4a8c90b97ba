"""A run's outputs, checked before anything runs, and the files written after it.

Before: the results directory (--results-dir, or LOG_DIR/results_<timestamp>) and the xUnit
directory are checked through vsperf.outputs (a directory, writable, with room), so that a bad
place is a one-line error (exit 2) before anything is created, not a traceback after the run.
After: matrix.rst, xunit.xml and --mode trafficgen's result.csv; a write that fails then (the
disk filled during the run) is one line and exit 1, the run's results being kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vsperf.config import Settings
from vsperf.errors import UserError
from vsperf.outputs import FILE_MIN_FREE_BYTES, OutputError, check_output_dir, lost
from vsperf.report.matrix import write_matrix
from vsperf.results.load import load_results
from vsperf.results.model import RESULTS_FILENAME
from vsperf.verdicts.criteria import evaluate_run
from vsperf.verdicts.xunit import XUNIT_FILE, write_xunit


@dataclass(frozen=True)
class RunOutputs:
    """Where a run writes: absolute, checked paths."""

    results_dir: Path
    xunit_dir: Path | None  # None: no xunit.xml; the results directory with --xunit alone


def check_run_outputs(opts: dict[str, Any], settings: Settings) -> RunOutputs:
    """The run's output locations, checked (see the module's doc); OutputError otherwise."""
    if opts["results_dir"] is not None:
        results_dir = check_output_dir(opts["results_dir"], "--results-dir")
    else:
        stamp = time.strftime("%Y-%m-%d_%H-%M-%S")
        log_dir = check_output_dir(settings["LOG_DIR"], f"LOG_DIR (from {settings.source('LOG_DIR')})")
        results_dir = log_dir / f"results_{stamp}"
    if (results_dir / RESULTS_FILENAME).exists():
        raise OutputError(f"--results-dir {results_dir} already holds a run ({RESULTS_FILENAME}); choose an empty "
                          f"directory")
    xunit_dir = None
    if opts["xunit_dir"] is not None:
        xunit_dir = check_output_dir(opts["xunit_dir"], "--xunit-dir", min_free_bytes=FILE_MIN_FREE_BYTES)
    elif opts["xunit"]:
        xunit_dir = results_dir
    if xunit_dir is not None and (xunit_dir / XUNIT_FILE).is_dir():
        raise OutputError(f"--xunit-dir {xunit_dir}: {XUNIT_FILE} there is a directory; remove it or choose another "
                          f"place")
    return RunOutputs(results_dir, xunit_dir)


class MatrixMetricError(UserError):
    """--matrix with a metric that no test of the run reported (after a run: exit 1)."""


def _written(what: str, write: Callable[[], Any]) -> Any:
    try:
        return write()
    except OSError as exc:
        raise lost(what, exc) from None


def write_matrix_file(results_dir: Path, metric: str) -> str:
    """matrix.rst of the run and its text for the terminal; MatrixMetricError when no test of
    the run reported `metric` (a typo must not print an empty matrix and pass)."""
    run = load_results(results_dir)
    reported = sorted({k for t in run.tests for r in t.results for k in r.metrics})
    if run.tests and metric not in reported:
        raise MatrixMetricError(f"MATRIX_METRIC {metric!r}: no test of this run reported it; metrics reported: "
                                f"{', '.join(reported) or 'none'}")
    _, text = _written("matrix.rst", lambda: write_matrix(run, results_dir, metric))
    return str(text)


def write_xunit_file(xunit_dir: Path, results_dir: Path) -> None:
    """xunit.xml of the run in `results_dir` (from its results.json) into `xunit_dir` (checked
    before the run)."""
    def write() -> None:
        xunit_dir.mkdir(parents=True, exist_ok=True)
        run = load_results(results_dir)
        write_xunit(xunit_dir / XUNIT_FILE, run, evaluate_run(run))
    _written(str(xunit_dir / XUNIT_FILE), write)


def write_after(what: str, write: Callable[[], Any]) -> Any:
    """`write()`'s result; a failed write (OSError) becomes vsperf.outputs.OutputLost."""
    return _written(what, write)

