"""The Level Test Report, rendered from a run's result files only (never from runner state).

`render_report(results_dir, formats)` writes `results_dir/report.{rst,md,html,pdf}`; the runner
calls it after a run and `vsperf report DIR` to re-render any past run.
"""

from vsperf.report.formats import render_report
from vsperf.report.rst import REPORT_BASENAME

__all__ = ["REPORT_BASENAME", "render_report"]
