"""The Level Test Report in reStructuredText, rendered from a run's result files only.

`render_rst(run, source)` builds a view of a loaded run (`vsperf.results.load`) here and renders
templates/report.rst.j2; `vsperf.report.formats.render_report` writes it (and the other formats)
into the results directory. Layout and prose live in the template; numbers, tables and computed
sentences are prepared here.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import jinja2

from vsperf.benchmarks.tables import TABLE_DETAIL_KEYS, seed_tables
from vsperf.paths import data_dir
from vsperf.report.analysis import anomalies_of, conclusions, is_simulated, rationale
from vsperf.report.anomalies import LoggedWarnings
from vsperf.report.confidence import with_confidence
from vsperf.report.markup import Rst, finalize, format_value, grid_table, heading, item
from vsperf.report.plots import Plot
from vsperf.report.tables import overview_table, statistics_tables
from vsperf.report.tables_traffic import TRAFFIC_DETAIL_KEYS, traffic_tables
from vsperf.report.testbed_env import chosen_testbed
from vsperf.results.model import (
    ROW_ATTRIBUTE_KEYS,
    ComponentInfo,
    FrameSizeResult,
    RunResults,
    TestResult,
    jsonable,
    metric_columns,
    traffic_protocol,
)
from vsperf.results.sizes import PacketSize
from vsperf.search.measurer import TrialResult
from vsperf.verdicts.criteria import evaluate_test

REPORT_BASENAME = "report"  # results_dir/report.rst (later formats: report.md, report.html, ...)
TEMPLATE = "report.rst.j2"
DEFAULT_DOCUMENT_ID = "vsperf_LTR_{date}_DRAFT"  # as conf/00_common.yaml

COMPONENT_LABELS = {
    "trafficgen": "Traffic Generator",
    "vswitch": "vSwitch",
    "dpdk": "DPDK Version",
    "vnf": "VNF",
    "loadgen": "Load generator",
    "collector": "Collector",
}
TRIAL_COLUMNS = (
    "#",
    "Purpose",
    "Offered rate (fps)",
    "Offered (% of line rate)",
    "Sent rate (fps)",
    "Duration (s)",
    "Tx frames",
    "Rx frames",
    "Loss (%)",
    "Flags",
)


@dataclass(frozen=True)
class EnvItem:
    """One line of a Test Environment list, with optional sub-items (e.g. the NICs)."""

    label: str
    value: str
    children: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SizeView:
    """The report's view of one packet size of one test."""

    packet_size: PacketSize
    metrics_table: Rst
    trials_table: Rst | None
    details: list[tuple[str, str]]
    statistics: list[tuple[str, Rst]]  # group title, Statistic | Value table
    plots: list[Plot] = field(default_factory=list)  # plots of this packet size (per-second rates)
    benchmark_tables: list[tuple[str, Rst]] = field(default_factory=list)  # the seeds' tables (title, table)


@dataclass(frozen=True)
class TestView:
    """The report's view of one test."""

    __test__: ClassVar[bool] = False  # not a pytest test class despite its name

    test: TestResult
    simulated: bool
    environment: list[EnvItem]
    details: list[tuple[str, Any]]
    parameters: list[tuple[str, str]]
    sizes: list[SizeView]
    anomalies: list[str]
    overview: Rst | None = None  # packet size x key metrics
    plots: list[Plot] = field(default_factory=list)  # plots of the whole test
    criteria: list[str] = field(default_factory=list)  # one line per check of a pass criterion
    criteria_summary: str = ""  # "pass criteria met (...)" / "... not met: ..."
    process_statistics: bool = False  # some packet size has per-process statistics


def _compact(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(jsonable(value), separators=(", ", ": "), sort_keys=False)


def component_text(component: ComponentInfo) -> str:
    """ "name, Version: v, key: value, ..." as the Test Environment lists a component."""
    text = f"{component.name}, Version: {component.version}"
    extras = ", ".join(f"{k}: {v}" for k, v in component.details.items())
    return f"{text}, {extras}" if extras else text


def _nic_text(nic: Any) -> str:
    if isinstance(nic, dict):
        return ", ".join(f"{k}: {_compact(v)}" for k, v in nic.items())
    return str(nic)


def _dut_host(env: dict[str, Any]) -> dict[str, Any] | None:
    """The testbed host that ran the DUT (None without a testbed)."""
    return next((h for h in env.get("testbed_hosts") or () if "DUT" in (h.get("roles") or ())), None)


def _fact(facts: dict[str, Any], key: str) -> str:
    """One host fact as text ("unknown" when it was not read)."""
    value = facts.get(key)
    return "unknown" if value in (None, "") else str(value)


def _host_facts(facts: dict[str, Any]) -> list[EnvItem]:
    """Board, CPU, cores, memory and host name of one host's facts, as VSPERF lists them."""
    board = _fact(facts, "board")
    if isinstance(facts.get("cpu_sockets"), int):
        board += f" [{facts['cpu_sockets']} socket{'s' if facts['cpu_sockets'] != 1 else ''}]"
    cores = _fact(facts, "cpu_cores_logical") + " logical"
    if "cpu_cores_physical" in facts:
        cores += f", {_fact(facts, 'cpu_cores_physical')} physical"
    memory = facts.get("memory_kb")
    return [
        EnvItem("Board", board),
        EnvItem("CPU", _fact(facts, "cpu_model")),
        EnvItem("CPU cores", cores),
        EnvItem("Memory", f"{memory} kB" if isinstance(memory, int) else _fact(facts, "memory_kb")),
        EnvItem("Host name", _fact(facts, "hostname")),
    ]


def _fact_lines(facts: dict[str, Any]) -> list[str]:
    """A host's OS, kernel and `_host_facts` as "Label: value" lines (sub-items of its entry)."""
    lines = [f"{label}: {_fact(facts, key)}" for label, key in (("OS", "os"), ("Kernel Version", "kernel"))]
    return lines + [f"{item.label}: {item.value}" for item in _host_facts(facts)]


def environment_items(run: RunResults, test: TestResult, simulated: bool) -> list[EnvItem]:
    """The Test Environment list of `test` (host facts from the run, components of the test).

    The host facts describe the DUT, as VSPERF's report does: on a testbed those of its DUT host
    (read there), and the controller where vsperf ran gets an entry of its own."""
    env = run.environment
    dut = _dut_host(env)
    facts = dut if dut is not None else env
    items: list[EnvItem] = []
    if simulated:
        items.append(
            EnvItem("Simulated", "yes: no frame was sent, the traffic generator modelled the device")
        )
    items += [EnvItem("OS", _fact(facts, "os")), EnvItem("Kernel Version", _fact(facts, "kernel"))]
    nics = [_nic_text(n) for n in env.get("nics") or ()]
    nics += [component_text(c) for c in test.components if c.role in ("nic", "port")]
    if nics:
        items.append(EnvItem("NIC(s)", "", nics))
    else:
        items.append(
            EnvItem("NIC(s)", "none (simulated device under test)" if simulated else "none recorded")
        )
    items += _host_facts(facts)
    if dut is not None:
        items.append(EnvItem("Controller (vsperf ran here)", "", _fact_lines(env)))
    items += [
        EnvItem("Python", _fact(env, "python")),
        EnvItem("Virtual Switch Set-up", test.deployment),
        EnvItem(
            "vsperf",
            f"Version: {env.get('vsperf_version') or run.vsperf_version}, "
            f"GIT tag: {env.get('vsperf_git_commit') or 'none (not run from a git checkout)'}",
        ),
    ]
    if isinstance(env.get("testbed"), dict):
        items.append(EnvItem("Testbed", *chosen_testbed(env["testbed"])))
    items += [testbed_host_item(host) for host in env.get("testbed_hosts") or ()]
    roles = [c.role for c in test.components]
    if "trafficgen" not in roles and run.settings.get("TRAFFICGEN"):
        items.append(EnvItem("Traffic Generator", f"{run.settings['TRAFFICGEN']}, Version: not recorded"))
    for component in sorted(test.components, key=_role_order):
        if component.role in ("nic", "port"):
            continue
        label = COMPONENT_LABELS.get(component.role, component.role)
        text = component_text(component)
        if component.role == "dpdk":
            text = text.removeprefix(f"{component.name}, Version: ")
        items.append(EnvItem(label, text))
    return items


def testbed_host_item(host: dict[str, Any]) -> EnvItem:
    """A testbed host (vsperf.testbed.hostinfo) as one Test Environment entry with its facts."""
    roles = ", ".join(host.get("roles") or ())
    facts = [f"Role: {roles}", f"Address: {host.get('address', 'unknown')}"]
    facts += _fact_lines(host)
    facts += [f"NIC: {_nic_text(nic)}" for nic in host.get("nics") or ()]
    return EnvItem(f"Testbed host {host.get('name', '?')}", roles, facts)


def _role_order(component: ComponentInfo) -> int:
    # Components in the order VSPERF's report lists them; unknown roles last.
    roles = list(COMPONENT_LABELS)
    return roles.index(component.role) if component.role in roles else len(roles)


def metrics_table(run: RunResults, test: TestResult, result: FrameSizeResult) -> Rst:
    """Metric | Result: every metric of the packet size, then type, packet_size, traffic_type."""
    rows: list[tuple[str, Any]] = [(key, with_confidence(result.metrics, key)) for key in metric_columns([result])]
    attributes = {
        "type": test.traffic_type,
        "packet_size": result.packet_size,
        "traffic_type": traffic_protocol(test, run.settings),
    }
    for key in ROW_ATTRIBUTE_KEYS:
        rows.append((key, result.metrics.get(key, attributes[key])))
    return grid_table(("Metric", "Result"), rows)


def _trial_row(position: int, trial: TrialResult) -> tuple[Any, ...]:
    percent = 100.0 * trial.requested_rate_fps / trial.line_rate_fps if trial.line_rate_fps > 0 else None
    return (
        position,
        trial.purpose or trial.kind,
        float(trial.requested_rate_fps),
        percent,
        float(trial.actual_tx_rate_fps),
        float(trial.duration_s),
        trial.tx_frames,
        trial.rx_frames,
        float(trial.loss_percent),
        ", ".join(trial.flags) or "none",
    )


def trials_table(result: FrameSizeResult) -> Rst | None:
    """The trial log of one packet size, in the order the trials ran (None: no trial)."""
    if not result.trials:
        return None
    return grid_table(TRIAL_COLUMNS, [_trial_row(i, t) for i, t in enumerate(result.trials, start=1)])


def view_of_test(
    run: RunResults, test: TestResult, plots: list[Plot] | None = None, warnings: tuple[str, ...] = ()
) -> TestView:
    """Everything the template shows about `test` (`plots`: its drawn plots; `warnings`: the log
    lines logged while it ran)."""
    plots = plots or []
    simulated = is_simulated(run, test)
    details: list[tuple[str, Any]] = [
        ("Test ID", test.name),
        ("Description", test.description or "none"),
        ("Deployment", test.deployment),
        ("Traffic type", test.traffic_type),
        ("Bidirectional", test.bidir),
    ]
    if test.frame_modification:
        details.append(("Frame modification", test.frame_modification))
    details += [
        ("Status", test.status),
        ("Started", test.started_at),
        ("Finished", test.finished_at or "not finished"),
        ("Packet sizes measured", ", ".join(str(s) for s in test.packet_sizes) or "none"),
    ]
    trials = [t for r in test.results for t in r.trials]
    if trials:
        traffic_s = sum(t.duration_s for t in trials)
        details.append(("Trials run", f"{len(trials)} ({format_value(float(traffic_s))} s of traffic)"))
    sizes = [
        SizeView(
            packet_size=r.packet_size,
            metrics_table=metrics_table(run, test, r),
            trials_table=trials_table(r),
            details=[(str(k), _compact(v)) for k, v in r.details.items()
                     if k not in TABLE_DETAIL_KEYS and k not in TRAFFIC_DETAIL_KEYS],
            statistics=statistics_tables(r),
            plots=[_plot_view(p) for p in plots if p.packet_size == r.packet_size],
            benchmark_tables=[(tb.title, grid_table(tb.header, tb.rows)) for tb in seed_tables(r.details)]
            + traffic_tables(r),
        )
        for r in test.results
    ]
    verdict = evaluate_test(test, run.settings)
    return TestView(
        test=test,
        simulated=simulated,
        environment=environment_items(run, test, simulated),
        details=details,
        parameters=[(str(k), _compact(v)) for k, v in test.parameters.items()],
        sizes=sizes,
        anomalies=anomalies_of(test, run, warnings),
        overview=overview_table(test),
        plots=[_plot_view(p) for p in plots if p.packet_size is None],
        criteria=[c.describe() for c in verdict.checks] if verdict else [],
        criteria_summary=verdict.summary() if verdict else "",
        process_statistics=any(g.startswith("Process: ") for r in test.results for g in r.statistics),
    )


def _plot_view(plot: Plot) -> Plot:
    # The path is ours (safe characters only) and must reach the RST unescaped.
    return Plot(Rst(plot.path), plot.caption, plot.packet_size)


def document_id(run: RunResults) -> str:
    """REPORT_DOCUMENT_ID with {date} (the run's start date) and {run_id} filled in."""
    pattern = str(run.settings.get("REPORT_DOCUMENT_ID") or DEFAULT_DOCUMENT_ID)
    return pattern.replace("{date}", run.started_at[:10]).replace("{run_id}", run.run_id)


def settings_table(run: RunResults) -> Rst | None:
    """Setting | Value | Source for every stored setting (None: the run stored none)."""
    if not run.settings:
        return None
    rows = [
        (name, _compact(value), run.settings_sources.get(name, "not recorded"))
        for name, value in sorted(run.settings.items())
    ]
    return grid_table(("Setting", "Value", "Source"), rows)


def report_context(
    run: RunResults,
    source: Path,
    plots: dict[int, list[Plot]] | None = None,
    warnings: LoggedWarnings | None = None,
) -> dict[str, Any]:
    """The template's variables (`plots` by test index, `warnings` from the run's log)."""
    warnings = warnings or LoggedWarnings()
    views = [view_of_test(run, t, (plots or {}).get(t.index), warnings.of_test(t.index)) for t in run.tests]
    return {
        "run": run,
        "source": source.name,
        "document_id": document_id(run),
        "command_line": shlex.join(run.command_line) if run.command_line else "not recorded",
        "tests": views,
        "rationale": rationale(run),
        "conclusions": conclusions(run, [v.anomalies for v in views]),
        "run_warnings": list(warnings.outside_tests),
        "settings_table": settings_table(run),
        "history_table": grid_table(
            ("Document ID", "Author", "Date"),
            [(document_id(run), f"vsperf {run.vsperf_version}", (run.finished_at or run.started_at)[:10])],
        ),
    }


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(data_dir("templates")),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # RST is escaped by finalize, not as HTML
        finalize=finalize,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["heading"] = heading
    env.filters["value"] = format_value
    env.filters["item"] = item
    return env


def render_rst(
    run: RunResults,
    source: Path,
    plots: dict[int, list[Plot]] | None = None,
    warnings: LoggedWarnings | None = None,
) -> str:
    """The report of `run` as RST text (`source`: the results file it came from; `plots` by
    test index, drawn beforehand into the results directory; `warnings` from its overall.log)."""
    return _environment().get_template(TEMPLATE).render(report_context(run, source, plots, warnings))
