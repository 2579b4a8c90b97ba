"""The Level Test Report, rendered from a run's result files only (never from runner state).

`render_report(results_dir)` writes `results_dir/report.rst`; `vsperf report DIR` calls it
to re-render any past run.
"""

from vsperf.report.rst import REPORT_BASENAME, render_report

__all__ = ["REPORT_BASENAME", "render_report"]
