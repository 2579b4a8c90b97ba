"""Run planned tests: deploy, measure every frame size, write results as they come, report.

Only this module's per-test boundary catches broad exceptions: the error is logged with its
context, the test is marked failed, teardown still runs and the next test starts.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vsperf.collectors.base import CollectorTarget, build_collectors, collecting
from vsperf.config import Settings, traffic_from_settings
from vsperf.context import RunContext, create_work_dir
from vsperf.deployment import ComponentInfo, Deployment, NoDeployment, SimulatedDeployment
from vsperf.errors import VsperfError
from vsperf.executor import CommandLog, LocalExecutor
from vsperf.lab.deploy import build_deployment
from vsperf.lab.leftovers import cleanup_leftovers
from vsperf.plan import PlannedTest
from vsperf.registry import Registries
from vsperf.report.formats import render_report
from vsperf.results.writer import ResultsWriter
from vsperf.search.dispatch import run_traffic
from vsperf.search.measurer import DutControl
from vsperf.signals import Terminated, stop_signals_raise
from vsperf.sysinfo import collect_environment, port_details
from vsperf.trafficgen.base import TrafficGenerator
from vsperf.ui.logsetup import add_file_log
from vsperf.ui.progress import Progress

log = logging.getLogger(__name__)

OVERALL_LOG = "overall.log"
COMMAND_LOG = "commands.log"


@dataclass
class TestOutcome:
    """How one test ended, for the summary, the exit code and xUnit."""

    name: str
    deployment: str
    status: str  # passed | failed | interrupted
    error: str | None = None
    duration_s: float = 0.0
    headline: list[tuple[int, str, float | int | None]] = field(default_factory=list)


@dataclass
class RunSummary:
    """What the CLI needs after a run."""

    results_dir: Path
    tests: list[TestOutcome]
    interrupted: bool = False
    report_files: list[Path] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.interrupted or any(t.status != "passed" for t in self.tests)


HEADLINE_KEYS = {
    "rfc2544_throughput": "throughput_rx_fps",
    "rfc2544_back2back": "b2b_frames",
    "rfc2544_continuous": "throughput_rx_fps",
    "burst": "throughput_rx_fps",
    "rfc2544_latency": "avg_latency_ns",
    "rfc2544_frame_loss": "frame_loss_percent",
    "rfc2544_recovery": "recovery_time_s",
    "rfc2544_reset": "reset_time_s",
    "rfc9004_back2back": "b2b_frames",
    "rfc2889_forwarding": "max_forwarding_rate_fps",
    "rfc2889_caching": "caching_capacity_addresses",
    "rfc2889_learning": "address_learning_rate_fps",
}

# Throughput found earlier in the run, per (deployment, vswitch, vnf, frame size): tests that
# need one (latency, recovery, reset, RFC 9004 back-to-back) use it instead of measuring again.
ThroughputKey = tuple[str, str, str, int]


def _make_deployment(pt: PlannedTest, registries: Registries, ctx: RunContext, size: int) -> Deployment:
    if pt.lab_deployment is None:
        return NoDeployment(pt.test.deployment) if pt.traffic_only else SimulatedDeployment(pt.test.deployment)
    return build_deployment(
        pt.lab_deployment,
        settings=pt.settings,
        registries=registries,
        ctx=ctx,
        traffic=traffic_from_settings(pt.settings, size),
        frame_modification=pt.test.frame_modification,
    )


def _port_components(deployment: Deployment, ctx: RunContext) -> list[ComponentInfo]:
    """The generator's ports as the report's NIC(s): driver (veth on the local lab) and speed."""
    components = []
    for i, p in enumerate(deployment.gen_ports):
        details = port_details(ctx.executor, p.ifname, p.netns)
        driver = details.pop("driver", "unknown")
        components.append(
            ComponentInfo(
                "port", f"port {i}", driver, {"interface": p.ifname, "netns": p.netns or "", "mac": p.mac, **details}
            )
        )
    return components


@contextmanager
def _load(
    pt: PlannedTest, registries: Registries, ctx: RunContext
) -> Iterator[tuple[list[ComponentInfo], dict[str, int]]]:
    """The test's Load (CPU / memory stress) around the traffic phase, when it has one:
    its components and its processes (name -> PID, for the process statistics)."""
    if not pt.test.load:
        yield [], {}
        return
    if pt.simulated:
        log.warning("%s: Load %s not applied: the DUT is simulated", pt.test.name, dict(pt.test.load))
        yield [ComponentInfo("loadgen", "none", "n/a", {"note": "not applied to a simulated DUT"})], {}
        return
    entry = registries.loadgens.get(str(pt.loadgen))
    loadgen = entry.cls(pt.test.load, pt.settings, ctx)
    with loadgen:
        yield [loadgen.component()], loadgen.pids()


class Runner:
    """Runs a plan and writes everything under one results directory."""

    def __init__(
        self,
        plan: Sequence[PlannedTest],
        *,
        registries: Registries,
        settings: Settings,
        results_dir: Path,
        run_id: str,
        command_line: list[str],
        progress: Progress,
    ) -> None:
        self.plan = list(plan)
        self.registries = registries
        self.settings = settings
        self.results_dir = results_dir
        self.run_id = run_id
        self.command_line = command_line
        self.progress = progress
        self.throughputs: dict[ThroughputKey, float] = {}

    def run(self) -> RunSummary:
        self.results_dir.mkdir(parents=True, exist_ok=True)
        handler = add_file_log(self.results_dir / OVERALL_LOG)
        work_dir = create_work_dir(self.run_id)
        executor = LocalExecutor(CommandLog(self.results_dir / COMMAND_LOG))
        ctx = RunContext(self.run_id, self.results_dir, work_dir, executor)
        summary = RunSummary(self.results_dir, [])
        try:
            log.info("vsperf run %s: results in %s", self.run_id, self.results_dir)
            if any(pt.deploys_lab for pt in self.plan):
                for leftover in cleanup_leftovers(executor):
                    log.warning("removed leftover of a killed run: %s", leftover)
            writer = ResultsWriter(
                self.results_dir,
                run_id=self.run_id,
                command_line=self.command_line,
                simulated=all(pt.simulated for pt in self.plan),
                environment=collect_environment(executor),
                settings=self.settings.as_dict(),
                settings_sources=self.settings.sources(),
            )
            with stop_signals_raise():
                try:
                    for pt in self.plan:
                        summary.tests.append(self._run_test(pt, writer, ctx))
                except KeyboardInterrupt as exc:
                    summary.interrupted = True
                    why = str(exc) if isinstance(exc, Terminated) else "interrupted by the user (Ctrl-C)"
                    log.error("run stopped: %s; results measured so far are in %s", why, self.results_dir)
            writer.finish_run("interrupted" if summary.interrupted else "finished")
            summary.report_files = self._report()
        finally:
            shutil.rmtree(work_dir, ignore_errors=True)
            logging.getLogger().removeHandler(handler)
            handler.close()
        return summary

    def _report(self) -> list[Path]:
        try:
            formats = self.settings["REPORT_FORMATS"]
            return render_report(self.results_dir, formats, plots=bool(self.settings["REPORT_PLOTS"]))
        except Exception:  # a report bug must not lose the run: results.json is already written
            log.exception("could not render the report; `vsperf report %s` retries", self.results_dir)
            return []

    def _run_test(self, pt: PlannedTest, writer: ResultsWriter, ctx: RunContext) -> TestOutcome:
        test = pt.test
        sizes: list[int] = list(pt.settings["TRAFFICGEN_PKT_SIZES"])
        traffic0 = traffic_from_settings(pt.settings, sizes[0])
        index = writer.start_test(
            name=test.name,
            description=test.description,
            deployment=test.deployment,
            traffic_type=traffic0.traffic_type,
            bidir=traffic0.bidir,
            frame_modification=test.frame_modification,
            parameters=dict(test.parameters),
            components=[],
        )
        outcome = TestOutcome(test.name, test.deployment, "passed")
        started = time.monotonic()
        self.progress.test_started(test.name, test.deployment, len(sizes))
        try:
            self._measure(pt, writer, ctx, index, sizes, outcome)
        except KeyboardInterrupt as exc:
            outcome.status, outcome.error = "interrupted", str(exc) or "interrupted by the user (Ctrl-C)"
            writer.finish_test(index, "interrupted", outcome.error)
            raise
        except Exception as exc:
            outcome.status, outcome.error = "failed", str(exc) or type(exc).__name__
            if isinstance(exc, VsperfError):
                log.error("test %s failed: %s", test.name, exc)
            else:
                log.exception("test %s failed with an internal error", test.name)
            writer.finish_test(index, "failed", outcome.error)
        else:
            writer.finish_test(index, "passed")
        finally:
            outcome.duration_s = time.monotonic() - started
        return outcome

    def _measure(
        self,
        pt: PlannedTest,
        writer: ResultsWriter,
        ctx: RunContext,
        index: int,
        sizes: list[int],
        outcome: TestOutcome,
    ) -> None:
        test = pt.test
        headline_key = HEADLINE_KEYS.get(traffic_from_settings(pt.settings, sizes[0]).traffic_type, "")
        gen_entry = self.registries.trafficgens.get(pt.trafficgen)
        with ExitStack() as stack:
            deployment = stack.enter_context(_make_deployment(pt, self.registries, ctx, max(sizes)))
            generator: TrafficGenerator = gen_entry.cls(pt.settings, ctx)
            stack.enter_context(generator)
            generator.start(deployment.gen_ports)
            components = [
                ComponentInfo("trafficgen", pt.trafficgen, generator.version(), {}),
                *deployment.components(),
            ]
            if not any(c.role in ("nic", "port") for c in components):
                components += _port_components(deployment, ctx)
            load_components, load_pids = stack.enter_context(_load(pt, self.registries, ctx))
            components += load_components
            target = CollectorTarget({**deployment.dut_pids(), **load_pids}, ports=tuple(deployment.gen_ports))
            collectors = build_collectors(pt.settings, self.registries.collectors, ctx, target)
            components += [c.component() for c in collectors]
            writer.set_components(index, components)

            # A deployment that can restart its switch and flush learned addresses lets
            # rfc2544_reset and the RFC 2889 address tests act on the device under test.
            dut_control = deployment if isinstance(deployment, DutControl) else None

            def on_trial(trial: Any) -> None:
                self.progress.trial(trial)
                deployment.check_alive()

            for size in sizes:
                traffic = traffic_from_settings(pt.settings, size)
                self.progress.frame_size_started(size)
                known: ThroughputKey = (test.deployment, pt.vswitch, pt.vnf, size)
                with collecting(collectors) as phase:
                    result = run_traffic(generator, traffic, pt.settings, on_trial=on_trial,
                                         throughput_fps=self.throughputs.get(known), dut=dut_control)
                writer.add_frame_size(index, size, result, statistics=phase.statistics)
                found = result.metrics.get("throughput_rx_fps")
                if traffic.traffic_type == "rfc2544_throughput" and isinstance(found, int | float) and found > 0:
                    self.throughputs[known] = float(found)
                value = result.metrics.get(headline_key)
                outcome.headline.append((size, headline_key, value if isinstance(value, int | float) else None))
                self.progress.frame_size_done(size, headline_key, value)
                deployment.check_alive()
        log.info("test %s finished", test.name)
