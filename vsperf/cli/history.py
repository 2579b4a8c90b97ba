"""`vsperf history ...`, `vsperf trend` and `vsperf dashboard`: the results store's commands.

Each opens the store of HISTORY_DB (or --db) and turns its problems into one line and exit 2
(main's handling of UserError); `trend --gate` exits 1 when a series' newest run is a regression.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from vsperf.config import load_settings
from vsperf.errors import UserError
from vsperf.history.analysis import trends
from vsperf.history.dashboard.server import serve
from vsperf.history.dashboard.site import SiteOptions, write_site
from vsperf.history.db import Store, open_store, parse_url
from vsperf.history.export import FORMATS, export
from vsperf.history.importer import import_dirs
from vsperf.history.query import Filters, find_run, list_runs, run_results
from vsperf.history.recorder import Recorded
from vsperf.history.trend import TrendLine, is_gate_failure
from vsperf.results.model import as_number
from vsperf.results.sizes import size_label

EXIT_OK, EXIT_REGRESSION = 0, 1
F = TypeVar("F", bound=Callable[..., Any])
_CONTEXT = {"help_option_names": ["-h", "--help"]}


def _store_options(func: F) -> F:
    func = click.option("--db", metavar="URL", help="The results store (sets HISTORY_DB; no password in it).")(func)
    return click.option("--conf-file", type=click.Path(path_type=Path), metavar="FILE",
                        help="User settings (YAML or VSPERF's Python form).")(func)


def _split(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


def _filter_options(func: F) -> F:
    for name, help_text in (
        ("--tag", "A tag of the runs: KEY or KEY=VALUE (repeatable; every one must match)."),
        ("--testbed", "Testbed name(s): the testbed file's stem, or local."),
        ("--version", "Runs whose vswitch, VNF, generator or vsperf version starts with this."),
        ("--vswitch", "vswitch name(s), e.g. ovs, linux_bridge, simulated."),
        ("--metric", "Metric(s), e.g. throughput_rx_fps; 'all' for every one (default HISTORY_METRICS)."),
        ("--size", "Frame size(s) in bytes."),
        ("--test", "Test name(s), e.g. phy2phy_tput (repeatable or comma-separated)."),
    ):
        func = click.option(name, multiple=True, metavar="VALUE", help=help_text)(func)
    return func


def _filters(opts: dict[str, Any], settings: Any) -> Filters:
    sizes = []
    for size in _split(opts["size"]):
        try:
            sizes.append(int(size.removesuffix("B").strip()))
        except ValueError:
            raise UserError(f"--size {size!r}: write a frame size in bytes, e.g. 64") from None
    return Filters(tests=_split(opts["test"]), sizes=tuple(sizes),
                   metrics=_split(opts["metric"]) or tuple(settings["HISTORY_METRICS"]),
                   vswitches=_split(opts["vswitch"]), versions=_split(opts["version"]),
                   testbeds=_split(opts["testbed"]), tags=tuple(opts["tag"]))


def _settings(opts: dict[str, Any]) -> Any:
    settings = load_settings(opts["conf_file"], env=os.environ)
    if opts.get("db") is not None:
        settings = settings.merged({"HISTORY_DB": opts["db"]}, "--db")
    return settings


@contextmanager
def _store(settings: Any, *, create: bool = False) -> Iterator[Store]:
    url = parse_url(str(settings["HISTORY_DB"]), str(settings["LOG_DIR"]))
    with open_store(url, create=create) as store:
        yield store


@click.group(name="history", context_settings=_CONTEXT)
def history_command() -> None:
    """The results store: import run directories, list and show runs, export measurements."""


@history_command.command(name="import", context_settings=_CONTEXT)
@click.argument("dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@_store_options
def import_command(dirs: tuple[Path, ...], **opts: Any) -> None:
    """Record run directories (or folders of them, such as LOG_DIR); idempotent by run id."""
    settings = _settings(opts)

    def said(run_dir: Path, recorded: Recorded) -> None:
        if recorded.action != "unchanged":
            click.echo(f"{recorded.action} {recorded.run_id} ({recorded.tests} tests, {recorded.measurements} values) "
                       f"from {run_dir}")

    with _store(settings, create=True) as store:
        report = import_dirs(store, dirs, said)
    for problem in report.problems:
        click.echo(f"vsperf: error: {problem}", err=True)
    click.echo(f"{report.summary()} into {store.where}")
    if report.problems:
        sys.exit(2)


@history_command.command(name="list", context_settings=_CONTEXT)
@click.option("-n", "--last", type=click.IntRange(min=1), metavar="N", help="Only the newest N runs.")
@click.option("--test", multiple=True, metavar="NAME", help="Runs with this test.")
@click.option("--testbed", multiple=True, metavar="NAME", help="Runs on this testbed.")
@click.option("--tag", multiple=True, metavar="KEY[=VALUE]", help="Runs with this tag.")
@_store_options
def list_command(last: int | None, test: tuple[str, ...], testbed: tuple[str, ...], tag: tuple[str, ...],
                 **opts: Any) -> None:
    """The recorded runs, newest first."""
    with _store(_settings(opts)) as store, store.connect() as connection:
        runs = list_runs(connection, Filters(tests=_split(test), testbeds=_split(testbed), tags=tag), last)
    click.echo(f"{'run':<24} {'started (UTC)':<19} {'status':<11} {'tests':>5} {'values':>7}  testbed   tags")
    for run in runs:
        tags = " ".join(f"{k}={v}" for k, v in sorted(run.tags.items()))
        click.echo(f"{run.run_id:<24} {run.started_at:%Y-%m-%d %H:%M:%S} {run.status:<11} {run.tests:>5} "
                   f"{run.measurements:>7}  {run.testbed:<9} {tags}")
    click.echo(f"{len(runs)} run(s) in {store.where}")


@history_command.command(name="show", context_settings=_CONTEXT)
@click.argument("run_id")
@_store_options
def show_command(run_id: str, **opts: Any) -> None:
    """One recorded run: its facts, tags, tests and headline values."""
    with _store(_settings(opts)) as store, store.connect() as connection:
        run = find_run(connection, run_id)
        results = run_results(connection, run.run_id)
    click.echo(f"run:        {run.run_id}\nstatus:     {run.status}\nstarted:    {run.started_at:%Y-%m-%d %H:%M:%S} UTC"
               f"\nvsperf:     {run.vsperf_version}\nhost:       {run.hostname}\ntestbed:    {run.testbed}"
               f"\nsimulated:  {'yes' if run.simulated else 'no'}\nresults:    {run.results_dir}")
    for key, value in sorted(run.tags.items()):
        click.echo(f"tag:        {key}={value}")
    for test in results.tests:
        versions = ", ".join(f"{c.role} {c.name} {c.version}" for c in test.components
                             if c.role in ("vswitch", "vnf", "trafficgen"))
        click.echo(f"\n{test.index}: {test.name} ({test.deployment}) {test.status}  [{versions}]")
        for result in test.results:
            shown = ", ".join(f"{k}={_number(as_number(v))}" for k, v in result.metrics.items()
                              if k in ("throughput_rx_fps", "b2b_frames", "frame_loss_percent", "avg_latency_ns"))
            click.echo(f"    {size_label(result.packet_size):>7}  {shown}")


@history_command.command(name="export", context_settings=_CONTEXT)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="csv", help="csv (default) or json.")
@click.option("-o", "--out", type=click.Path(path_type=Path), metavar="FILE", help="Write to FILE (default stdout).")
@_filter_options
@_store_options
def export_command(fmt: str, out: Path | None, **opts: Any) -> None:
    """Every measurement (one row per run, test, frame size and metric) for analysis elsewhere."""
    settings = _settings(opts)
    if not opts["metric"]:
        opts["metric"] = ("all",)  # export everything unless told otherwise
    filters = _filters(opts, settings)
    with _store(settings) as store, store.connect() as connection:
        if out is None:
            export(connection, filters, sys.stdout, fmt)
            return
        with out.open("w", encoding="utf-8", newline="") as handle:
            rows = export(connection, filters, handle, fmt)
    click.echo(f"export: {rows} rows to {out}", err=True)


def _number(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.4g}"


def format_trend(lines: Sequence[TrendLine]) -> str:
    """The trend table and, per series, its latest classification."""
    header = ("series", "setup", "runs", "latest", "group avg", "change", "classification")
    rows = [(t.label, t.setup, str(t.runs), _number(t.latest_value), _number(t.group_average),
             "n/a" if t.change_percent is None else f"{t.change_percent:+.2f} %",
             t.classification.upper() if t.classification == "regression" else t.classification) for t in lines]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    right = {2, 3, 4, 5}

    def fmt(row: Sequence[str]) -> str:
        return "  ".join(c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(row)).rstrip()

    return "\n".join([fmt(header), *(fmt(r) for r in rows)]) + "\n"


@click.command(name="trend", context_settings=_CONTEXT)
@click.option("-n", "--last", type=click.IntRange(min=3, max=1000), metavar="N",
              help="Classify the newest N runs of each series (default HISTORY_TREND_RUNS).")
@click.option("--gate", is_flag=True, help="Exit 1 when the newest run of any selected series is a regression.")
@click.option("--json", "json_path", type=click.Path(path_type=Path), metavar="FILE", help="Also write JSON.")
@_filter_options
@_store_options
def trend_command(last: int | None, gate: bool, json_path: Path | None, **opts: Any) -> None:
    """Each series' latest value, its group's average and jumpavg's classification."""
    settings = _settings(opts)
    filters = _filters(opts, settings)
    with _store(settings) as store, store.connect() as connection:
        lines = [t.line() for t in trends(connection, filters, last or int(settings["HISTORY_TREND_RUNS"]))]
    if not lines:
        raise UserError(f"no series in {store.where} matches the filters: vsperf history list shows what is recorded")
    click.echo(format_trend(lines), nl=False)
    failing = [t for t in lines if is_gate_failure(t)]
    if json_path is not None:
        json_path.write_text(json.dumps({"series": [t.__dict__ for t in lines],
                                         "regressions": len(failing)}, indent=2) + "\n", encoding="utf-8")
    click.echo(f"\n{len(lines)} series; {len(failing)} with a regression in the newest run")
    if gate and failing:
        for t in failing:
            change = "n/a" if t.change_percent is None else f"{t.change_percent:+.2f} %"
            click.echo(f"GATE: {t.label} ({t.setup}): regression ({change}) in run {t.latest_run}", err=True)
        sys.exit(EXIT_REGRESSION)


@click.command(name="dashboard", context_settings=_CONTEXT)
@click.option("--out", type=click.Path(path_type=Path), metavar="DIR", help="Write the static site into DIR.")
@click.option("--serve", "serve_live", is_flag=True, help="Serve the pages live from the store (Ctrl-C stops).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address --serve binds.")
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True, help="Port of --serve.")
@_filter_options
@_store_options
def dashboard_command(out: Path | None, serve_live: bool, host: str, port: int, **opts: Any) -> None:
    """The trend dashboard: a static site (--out DIR) or live pages (--serve)."""
    if (out is None) == (not serve_live):
        raise UserError("vsperf dashboard: give --out DIR (a static site) or --serve (live pages), one of them")
    settings = _settings(opts)
    options = SiteOptions(filters=_filters(opts, settings), trend_runs=int(settings["HISTORY_TREND_RUNS"]),
                          report_url=str(settings["HISTORY_REPORT_URL"]))
    with _store(settings) as store:
        if out is not None:
            written = write_site(store, out, options)
            click.echo(f"dashboard: {written.series} series, {written.runs} runs, {written.pages} pages "
                       f"in {written.seconds:.1f} s: {out / 'index.html'}")
            return
        serve(store, options, host, port, announce=lambda url: click.echo(f"dashboard: serving {url} (Ctrl-C stops)"))
