"""The `vsperf` run command: a thin layer over load config -> catalog -> plan -> run -> report.

Its exit codes: 0 every test ran, 1 a test failed or the run was interrupted, 2 a usage or
configuration error (one line, no traceback, nothing created); vsperf.cli.entry turns errors into
them and picks this command or a subcommand (`main` is that entry point).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from vsperf import __version__
from vsperf.backends import build_registries
from vsperf.catalog import Catalog
from vsperf.cli.entry import main as main
from vsperf.cli.modes import (
    HOLDS,
    MODES,
    VSPERF_RESULT_CSV,
    hold_until_enter_or_sigterm,
    trafficgen_mode_test,
    write_trafficgen_csv,
)
from vsperf.cli.run_outputs import (
    MatrixMetricError,
    check_run_outputs,
    write_after,
    write_matrix_file,
    write_xunit_file,
)
from vsperf.config import SETTINGS_SCHEMA, Settings, load_settings
from vsperf.config.params import split_param_sets
from vsperf.errors import ConfigError
from vsperf.executor import CommandLog
from vsperf.history.hook import RunRecorder
from vsperf.history.tags import ci_tags, parse_tags
from vsperf.host.hosts import RunHosts
from vsperf.host.workdir import new_run_id
from vsperf.pool.claim import ClaimRequest, claim_testbed, given_testbeds
from vsperf.registry import Registries
from vsperf.results.load import load_results
from vsperf.results.sizes import size_label
from vsperf.results.writer import close_abandoned
from vsperf.run.leave_out import checked, leave_out
from vsperf.run.plan import PlannedTest, plan_tests
from vsperf.run.preflight import check_plan
from vsperf.run.runner import ReportOptions, Runner, RunSummary
from vsperf.signals import abort, stoppable
from vsperf.ui.logsetup import setup_console
from vsperf.ui.progress import Progress
from vsperf.ui.progress_live import LiveProgress
from vsperf.verdicts.criteria import check_criteria_names, evaluate_run

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _print_registry(registries: Registries, family: str) -> None:
    registry = registries.families()[family]
    entries = list(registry)
    click.echo(f"Available {family} ({len(entries)}):")
    for entry in entries:
        aliases = f" (aliases: {', '.join(entry.aliases + tuple(getattr(entry.cls, 'ALIASES', ())))})"
        click.echo(f"  {entry.name:<16} {entry.description}{aliases if aliases != ' (aliases: )' else ''}")


def _print_tests(catalog: Catalog) -> None:
    click.echo(f"Available tests ({len(catalog.tests)}):")
    width = max(len(t.name) for t in catalog.tests)
    for t in catalog.tests:
        why = f"  [cannot run here: {t.unavailable}]" if t.unavailable else ""
        click.echo(f"  {t.name:<{width}}  {t.deployment:<6} {t.traffic_type:<20} {t.description}{why}")


def _print_settings(settings: Settings, verbose: bool) -> None:
    for name, value, source in settings.describe():
        click.echo(f"{name} = {value}    # {source}")
        if verbose and name in SETTINGS_SCHEMA:
            click.echo(f"    {SETTINGS_SCHEMA[name].doc}")




def _shown(value: float | int) -> str:
    """A headline value: whole numbers with thousands separators, small ones (seconds, percent)
    with three significant digits."""
    if isinstance(value, int) or abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _print_summary(summary: RunSummary) -> None:
    click.echo("")
    click.echo(f"{'test':<24} {'status':<12} results")
    for t in summary.tests:
        parts = []
        for size, _key, value in t.headline:
            shown = "n/a" if value is None else _shown(value)
            parts.append(f"{size_label(size)}: {shown}")
        key = t.headline[0][1] if t.headline else ""
        line = f"{key} " + ", ".join(parts) if parts else (t.error or "")
        click.echo(f"{t.name:<24} {t.status:<12} {line}")
        if t.error and parts:
            click.echo(f"{'':<37}{t.error}")
    click.echo(f"\nresults: {summary.results_dir}")
    for path in summary.report_files:
        click.echo(f"report:  {path}")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("tests", nargs=-1)
@click.option("-t", "--tests", "filters", metavar="LIST",
              help='Select tests: "substr,!exclude" (VSPERF syntax, ignoring case).')
@click.option("-f", "--test-spec", "test_files", multiple=True, type=click.Path(path_type=Path), metavar="FILE",
              help="A test-case file to add (VSPERF's option; adds to TEST_CASE_FILES).")
@click.option("-d", "--test-dir", "test_files", multiple=True, type=click.Path(path_type=Path), metavar="DIR",
              help="A folder of test-case files to add (VSPERF's option; adds to TEST_CASE_FILES).")
@click.option("--integration", is_flag=True,
              help="Run VSPERF's integration tests (INTEGRATION_TESTS: TestSteps, op2p, ...) instead of the "
              "performance tests.")
@click.option("--list", "--list-tests", "list_tests", is_flag=True, help="List the test cases and exit.")
@click.option("--list-trafficgens", is_flag=True, help="List the traffic generators and exit.")
@click.option("--list-vswitches", is_flag=True, help="List the virtual switches and exit.")
@click.option("--list-vnfs", is_flag=True, help="List the VNFs and exit.")
@click.option("--list-collectors", is_flag=True, help="List the statistics collectors and exit.")
@click.option("--list-loadgens", is_flag=True, help="List the load generators and exit.")
@click.option("--list-settings", is_flag=True, help="Print the merged settings and where each came from.")
@click.option("--trafficgen", metavar="NAME", help="Traffic generator (sets TRAFFICGEN).")
@click.option("--vswitch", metavar="NAME", help="Virtual switch (sets VSWITCH).")
@click.option("--vnf", metavar="NAME", help="VNF of pvp/pvvp deployments (sets VNF).")
@click.option("--loadgen", metavar="NAME", help="Load generator of tests with a Load (sets LOADGEN).")
@click.option("--conf-file", type=click.Path(path_type=Path), metavar="FILE",
              help="User settings: YAML, or VSPERF's Python form (10_custom.conf; read, never executed).")
@click.option("--test-params", metavar="'KEY=VAL;...'", multiple=True,
              help="Override settings: YAML or VSPERF Python literals; a bare KEY is KEY=True. Given several "
              "times, or as a list of such strings, the tests run once per element (VSPERF's sweep).")
@click.option("--load-env", is_flag=True, help="Read settings from environment variables named like them.")
@click.option("--testbed", type=click.Path(path_type=Path), metavar="FILE", multiple=True,
              help="Testbed file: hosts (SSH or local), DUT and generator ports; or a pool file (testbeds: "
              "[FILE, ...]). Given several times: the first free one that can run the tests (sets TESTBED).")
@click.option("--testbed-wait", type=click.FloatRange(min=0), metavar="SECONDS",
              help="Wait up to SECONDS for a busy testbed, in arrival order (sets TESTBED_WAIT_S; default: "
              "exit 2 at once, naming its holder).")
@click.option("-m", "--mode", type=click.Choice(MODES), default="normal",
              help="trafficgen: send the TRAFFIC setting once, nothing deployed; trafficgen-off: deploy, "
              "send nothing, hold until Enter or SIGTERM; trafficgen-pause: deploy, hold, then send.")
@click.option("--verbosity", type=click.Choice(["debug", "info", "warning", "error", "critical"]), default=None,
              help="Console log level (sets VERBOSITY).")
@click.option("--xunit", is_flag=True, help="Also write xunit.xml into the results directory.")
@click.option("--xunit-dir", type=click.Path(path_type=Path), metavar="DIR",
              help="Write xunit.xml into DIR instead (implies --xunit).")
@click.option("--matrix", is_flag=True, help="Print (and write matrix.rst) every test against the first by "
              "MATRIX_METRIC.")
@click.option("--report-format", metavar="LIST", help="Report formats, e.g. rst,html (sets REPORT_FORMATS).")
@click.option("--results-dir", type=click.Path(path_type=Path), metavar="DIR",
              help="Write this run's outputs into DIR (default LOG_DIR/results_<timestamp>).")
@click.option("--tag", "tags", multiple=True, metavar="KEY=VALUE",
              help="Tag the run in the results store (repeatable; adds to HISTORY_TAGS, with CI variables).")
@click.version_option(__version__, prog_name="vsperf")
@stoppable
def run_command(**opts: Any) -> None:
    """Run VSPERF test cases (all of them when none is named)."""
    sys.exit(_run(opts))


def _settings(opts: dict[str, Any], test_params: str | None) -> Settings:
    """Every layer of settings the command line gives (environment only with --load-env)."""
    env = os.environ if opts["load_env"] else {}
    settings = load_settings(opts["conf_file"], env=env, test_params=test_params)
    if opts["test_files"]:
        files = [*settings["TEST_CASE_FILES"], *(str(p) for p in opts["test_files"])]
        settings = settings.merged({"TEST_CASE_FILES": files}, "--test-spec/--test-dir")
    for option, name in (("trafficgen", "TRAFFICGEN"), ("vswitch", "VSWITCH"), ("vnf", "VNF"), ("loadgen", "LOADGEN"),
                         ("verbosity", "VERBOSITY")):
        if opts[option] is not None:
            settings = settings.merged({name: opts[option]}, f"--{option}")
    if opts["testbed"]:
        given = [str(p) for p in opts["testbed"]]
        settings = settings.merged({"TESTBED": given[0] if len(given) == 1 else given}, "--testbed")
    if opts["testbed_wait"] is not None:
        settings = settings.merged({"TESTBED_WAIT_S": opts["testbed_wait"]}, "--testbed-wait")
    tags = {**ci_tags(os.environ), **parse_tags(opts["tags"])}
    if tags:
        settings = settings.merged({"HISTORY_TAGS": {**settings["HISTORY_TAGS"], **tags}}, "--tag and CI variables")
    if opts["report_format"] is not None:
        formats = [f.strip() for f in opts["report_format"].split(",") if f.strip()]
        settings = settings.merged({"REPORT_FORMATS": formats}, "--report-format")
    return settings


def _run(opts: dict[str, Any]) -> int:
    param_sets: list[str | None] = [*split_param_sets(opts["test_params"])] or [None]
    settings = _settings(opts, param_sets[0])
    setup_console(settings["VERBOSITY"])
    registries = build_registries()
    catalog = Catalog.load(settings["TEST_CASE_FILES"], settings["PERFORMANCE_TESTS"],
                           f"PERFORMANCE_TESTS (from {settings.source('PERFORMANCE_TESTS')})",
                           settings["INTEGRATION_TESTS"],
                           f"INTEGRATION_TESTS (from {settings.source('INTEGRATION_TESTS')})",
                           ).view(integration=opts["integration"])

    listings = {
        "list_trafficgens": "trafficgens", "list_vswitches": "vswitches", "list_vnfs": "vnfs",
        "list_collectors": "collectors", "list_loadgens": "loadgens",
    }
    if opts["list_tests"]:
        _print_tests(catalog)
    for option, family in listings.items():
        if opts[option]:
            _print_registry(registries, family)
    if opts["list_settings"]:
        _print_settings(settings, settings["VERBOSITY"] == "debug")
    if opts["list_tests"] or opts["list_settings"] or any(opts[o] for o in listings):
        return EXIT_OK

    mode = opts["mode"]
    selected = [trafficgen_mode_test(settings)] if mode == "trafficgen" else catalog.select(opts["tests"],
                                                                                              opts["filters"])
    if mode == "trafficgen" and (opts["tests"] or opts["filters"]):
        click.echo("vsperf: --mode trafficgen sends the TRAFFIC setting once: test names are ignored", err=True)
    plan: list[PlannedTest] = []
    # --integration without test names: every integration test that can run here (vsperf.run.leave_out)
    tolerant = bool(opts["integration"]) and not opts["tests"] and mode != "trafficgen"
    for i, params in enumerate(param_sets):
        layer = settings if i == 0 else _settings(opts, params)
        plan += leave_out(selected, lambda tests, layer=layer, params=params: plan_tests(  # type: ignore[misc]
            tests, layer, registries, traffic_only=mode == "trafficgen", hold=HOLDS.get(mode, ""),
            test_params=params if len(param_sets) > 1 else None), lambda t: t.name, tolerant=tolerant,
            what="its settings cannot run")
    check_criteria_names(settings["CRITERIA"], catalog.names(), f"CRITERIA (from {settings.source('CRITERIA')})")
    outputs = check_run_outputs(opts, settings)
    run_id = new_run_id()
    command_log = CommandLog(None)  # the run's commands.log once its directory exists
    claim = claim_testbed(ClaimRequest(
        plan, registries, given_testbeds(settings["TESTBED"]), run_id, command_log,
        results_dir=outputs.results_dir.resolve(), wait_s=settings["TESTBED_WAIT_S"],
        lease_s=settings["TESTBED_LEASE_S"], on_lost=_stop_run, check=_no_check if tolerant else check_plan))
    hosts = claim.hosts
    if claim.testbed:  # results.json and the history name the testbed taken, not the pool
        settings = settings.merged({"TESTBED": claim.testbed}, f"--testbed (taken of {len(claim.pool)})")
    try:
        if tolerant:  # the claim checked nothing (a no-op check): leave out what cannot run here
            plan = leave_out(plan, checked(lambda pts: check_plan(pts, registries, hosts)), lambda pt: pt.test.name,
                             tolerant=True, what="this machine cannot run it")
        progress = _progress(plan)
        runner = Runner(
            plan,
            registries=registries,
            settings=settings,
            results_dir=outputs.results_dir.resolve(),
            run_id=run_id,
            command_line=["vsperf", *sys.argv[1:]],
            progress=progress,
            report=ReportOptions.from_settings(settings),
            history=RunRecorder.from_settings(settings),
            hosts=hosts,
            command_log=command_log,
            hold=hold_until_enter_or_sigterm,
            testbed=claim.record(),
        )
        if isinstance(progress, LiveProgress):
            with progress:
                summary = runner.run()
        else:
            summary = runner.run()
    except KeyboardInterrupt:  # a signal in the instant the runner could not handle it
        close_abandoned(outputs.results_dir)
        raise
    finally:
        claim.close()
    _apply_criteria(summary)
    if outputs.xunit_dir is not None:
        write_xunit_file(outputs.xunit_dir, summary.results_dir)
    if mode == "trafficgen":
        write_after(VSPERF_RESULT_CSV, lambda: write_trafficgen_csv(summary.results_dir))
    matrix_problem = None
    if opts["matrix"] and not summary.interrupted:
        try:
            click.echo(write_matrix_file(summary.results_dir, settings["MATRIX_METRIC"]))
        except MatrixMetricError as exc:
            matrix_problem = str(exc)
    _print_summary(summary)
    if summary.interrupted:
        click.echo("vsperf: run interrupted; everything it created was removed; measured results kept", err=True)
    if matrix_problem:
        click.echo(f"vsperf: error: --matrix: {matrix_problem}", err=True)
    return EXIT_FAILED if summary.failed or matrix_problem else EXIT_OK


def _no_check(_plan: Sequence[PlannedTest], _registries: Registries, _hosts: RunHosts | None) -> None:
    """The claim's check of an --integration run: its tests are checked one by one after it."""


def _stop_run(reason: str) -> None:
    """The run's testbed lease was lost (vsperf.pool.lease): stop it as a signal would."""
    if not abort(reason):
        logging.getLogger("vsperf").error("%s", reason)


def _progress(plan: Sequence[PlannedTest]) -> Progress:
    """A live status line on a terminal, plain log lines otherwise."""
    if not sys.stderr.isatty() or os.environ.get("TERM") == "dumb":
        return Progress()
    return LiveProgress(sys.stderr, [(pt.test.name, len(pt.frames)) for pt in plan])


def _apply_criteria(summary: RunSummary) -> None:
    """A test that missed its pass criteria (setting CRITERIA) counts as failed for the exit
    code and xUnit; results.json keeps what was measured, the report shows the verdict."""

    try:
        verdicts = evaluate_run(load_results(summary.results_dir))
    except ConfigError:  # no results file: the run stopped before writing one
        return
    for outcome, verdict in zip(summary.tests, verdicts, strict=False):
        if verdict is not None and not verdict.passed and outcome.status == "passed":
            outcome.status, outcome.error = "failed", verdict.summary()
