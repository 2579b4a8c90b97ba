"""`vsperf report DIR` and `vsperf compare RUN_A RUN_B`: commands over past runs' result files.

Both check where they write before they read anything big: `report` that DIR can take the
report (a probe, free space), `compare --json FILE` that FILE can be written. A comparison that
compared nothing is an error (exit 2), not a pass; settings come from the environment only with
--load-env, as for a run.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from vsperf.config import load_settings
from vsperf.errors import ConfigError
from vsperf.outputs import RUN_MIN_FREE_BYTES, check_output_dir, check_output_file, lost
from vsperf.report.formats import FORMATS, check_formats, render_report
from vsperf.results.atomic import write_text_atomic
from vsperf.results.load import load_results, results_file
from vsperf.signals import stoppable
from vsperf.verdicts.compare import Comparison, check_threshold, compare_runs, format_comparison

EXIT_OK, EXIT_FAILED = 0, 1


def _formats(text: str | None, stored: object) -> list[str]:
    if text is None:
        return list(stored) if isinstance(stored, list) else list(FORMATS)
    wanted = [f.strip() for f in text.split(",") if f.strip()]
    if not wanted:
        raise ConfigError(f"--format {text!r} names no format; use some of: {', '.join(FORMATS)}")
    check_formats(wanted)
    return wanted


@click.command(name="report", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("results_dir", type=click.Path(path_type=Path))
@click.option("--format", "formats", metavar="LIST",
              help="Formats to write, e.g. rst,md,html,pdf (default: the run's REPORT_FORMATS).")
@stoppable
def report_command(results_dir: Path, formats: str | None) -> None:
    """Re-render the Level Test Report of a past run from its result files."""
    stored = load_results(results_dir).settings
    wanted = _formats(formats, stored.get("REPORT_FORMATS"))
    check_output_dir(results_file(results_dir).parent, "report directory", min_free_bytes=RUN_MIN_FREE_BYTES)
    for path in render_report(results_dir, wanted, plots=bool(stored.get("REPORT_PLOTS", True)),
                              strict=formats is not None):
        click.echo(f"report: {path}")


def _nothing_compared(comparison: Comparison) -> ConfigError:
    notes = "; ".join(comparison.notes[:3]) + ("; ..." if len(comparison.notes) > 3 else "")
    return ConfigError(f"nothing compared: no test, frame size and metric measured in both runs"
                       f"{f' ({notes})' if notes else ''}; compare two runs of the same tests")


@click.command(name="compare", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("run_a", type=click.Path(path_type=Path))
@click.argument("run_b", type=click.Path(path_type=Path))
@click.option("--threshold", type=float, metavar="PCT",
              help="Regression threshold in % (default COMPARE_THRESHOLD_PERCENT).")
@click.option("--metrics", metavar="LIST", help="Metrics to compare, e.g. throughput_rx_fps,b2b_frames.")
@click.option("--json", "json_path", type=click.Path(path_type=Path), metavar="FILE",
              help="Also write the comparison as JSON.")
@click.option("--conf-file", type=click.Path(path_type=Path), metavar="FILE",
              help="User settings: YAML, or VSPERF's Python form (10_custom.conf; read, never executed).")
@click.option("--load-env", is_flag=True, help="Read settings from environment variables named like them.")
@stoppable
def compare_command(
    run_a: Path, run_b: Path, threshold: float | None, metrics: str | None, json_path: Path | None,
    conf_file: Path | None, load_env: bool,
) -> None:
    """Compare RUN_B against RUN_A: exit 1 when a key metric regressed beyond the threshold, 2
    when nothing could be compared."""
    if threshold is None:
        settings = load_settings(conf_file, env=os.environ if load_env else {})
        threshold = float(settings["COMPARE_THRESHOLD_PERCENT"])
    check_threshold(threshold)
    keys = [k.strip() for k in metrics.split(",") if k.strip()] if metrics is not None else None
    target = check_output_file(json_path, "--json") if json_path is not None else None
    comparison = compare_runs(load_results(run_a), load_results(run_b), threshold, keys,
                              names=(str(run_a), str(run_b)))
    if not comparison.compared:
        raise _nothing_compared(comparison)
    if target is not None:
        try:
            write_text_atomic(target, json.dumps(comparison.as_dict(), indent=2) + "\n")
        except OSError as exc:
            raise lost(str(target), exc) from None
    click.echo(format_comparison(comparison), nl=False)
    sys.exit(EXIT_FAILED if comparison.regressed else EXIT_OK)
