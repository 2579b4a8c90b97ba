"""Run planned tests: deploy, measure every frame size, write results as they come, report.

Only this module's per-test boundary catches broad exceptions: the error is logged with its
context, the test is marked failed, teardown still runs and the next test starts.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vsperf.benchmarks import HEADLINE_KEYS as BENCHMARK_HEADLINE_KEYS
from vsperf.benchmarks import TOOLS as BENCHMARK_TOOLS
from vsperf.benchmarks import BenchEnv, is_benchmark, runs_own_programs
from vsperf.benchmarks.csvfiles import benchmark_csv_paths
from vsperf.collectors.base import CollectorTarget, build_collectors, collecting
from vsperf.config import Settings, traffic_from_settings
from vsperf.context import RunContext, create_work_dir
from vsperf.deployment import ComponentInfo, Deployment, NoDeployment, SimulatedDeployment
from vsperf.errors import DeploymentError, VsperfError
from vsperf.executor import CommandLog, LocalExecutor
from vsperf.lab.deploy import LabDeployment, build_deployment
from vsperf.lab.leftovers import cleanup_leftovers
from vsperf.lab.topology import parse_deployment
from vsperf.loadgen.base import LocalLoadHost
from vsperf.plan import PlannedTest
from vsperf.registry import Registries
from vsperf.report.formats import render_report
from vsperf.results.vsperf_keys import with_vsperf_keys
from vsperf.results.writer import ResultsWriter
from vsperf.search.dispatch import run_traffic
from vsperf.search.measurer import DutControl
from vsperf.signals import Terminated, stop_signals_raise
from vsperf.sysinfo import collect_environment, port_details
from vsperf.testbed.deploy import TestbedDeployment, build_testbed_deployment, open_run_session
from vsperf.testbed.extras import TestbedLoadHost
from vsperf.testbed.hostinfo import describe_testbed, testbed_environment
from vsperf.testbed.session import TestbedSession
from vsperf.testbed.wire import TestbedWireDeployment
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
    **BENCHMARK_HEADLINE_KEYS,
}

# Throughput found earlier in the run, per (deployment, vswitch, vnf, frame size): tests that
# need one (latency, recovery, reset, RFC 9004 back-to-back) use it instead of measuring again.
ThroughputKey = tuple[str, str, str, int]


def _generator_host(deployment: Deployment, bed: TestbedSession | None) -> dict[str, str]:
    """The report's `host` of a generator that runs on the testbed's generator host (none for a
    hardware generator's port locations, nor on the local lab)."""
    if bed is None or any(port.location for port in deployment.gen_ports):
        return {}
    return {"host": bed.testbed.trafficgen_host}


def _make_deployment(pt: PlannedTest, registries: Registries, ctx: RunContext, size: int,
                     testbed: TestbedSession | None = None) -> Deployment:
    if pt.lab_deployment is None:
        return NoDeployment(pt.test.deployment) if pt.traffic_only else SimulatedDeployment(pt.test.deployment)
    if testbed is not None and pt.traffic_only:  # the generator host's ports only (vsperf.testbed.wire)
        return TestbedWireDeployment(pt.test.deployment, testbed, traffic=traffic_from_settings(pt.settings, size))
    if testbed is not None:  # the testbed's hosts, not the local lab (vsperf.testbed.deploy)
        # The lab's switch and VNF classes, their commands through the DUT host's executor.
        return build_testbed_deployment(pt, registries, ctx, testbed, size)
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
    pt: PlannedTest, registries: Registries, ctx: RunContext, deployment: Deployment,
    testbed: TestbedSession | None = None,
) -> Iterator[tuple[list[ComponentInfo], dict[str, int]]]:
    """The test's Load (CPU / memory stress) around the traffic phase, when it has one:
    its components and its processes (name -> PID, for the process statistics). With `testbed`
    it runs on the DUT host, its processes in the run's journal (PIDs of that host); on the
    local lab its processes are in the lab's state file (stopped after a SIGKILL too)."""
    if not pt.test.load:
        yield [], {}
        return
    if pt.simulated:
        log.warning("%s: Load %s not applied: the DUT is simulated", pt.test.name, dict(pt.test.load))
        yield [ComponentInfo("loadgen", "none", "n/a", {"note": "not applied to a simulated DUT"})], {}
        return
    entry = registries.loadgens.get(str(pt.loadgen))
    if testbed is not None:
        loadgen = entry.cls(pt.test.load, pt.settings, replace(ctx, executor=testbed.dut), TestbedLoadHost(testbed))
    elif isinstance(deployment, LabDeployment):
        loadgen = entry.cls(pt.test.load, pt.settings, ctx, LocalLoadHost(deployment.lab))
    else:
        raise DeploymentError(f"{pt.test.name}: its Load runs on the local lab or a testbed, not on {deployment.name}")
    with loadgen:
        yield [loadgen.component()], loadgen.pids()


def guest_loopback(pt: PlannedTest) -> str | None:
    """VSPERF's guest_loopback result key: GUEST_LOOPBACK of each VNF of the test (None: no VNF);
    past the list's end, its first entry (VSPERF's rule)."""
    vnfs = parse_deployment(pt.test.deployment).vnfs
    raw = pt.settings["GUEST_LOOPBACK"]
    values = [raw] if isinstance(raw, str) else list(raw)
    if not vnfs or not values:
        return None
    return " ".join(str(values[i] if i < len(values) else values[0]) for i in range(vnfs))


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
        hold: Callable[[str], None] | None = None,
    ) -> None:
        """`hold(message)` waits for the user in --mode trafficgen-off/-pause (the CLI's, never
        input() here); without it those modes do not wait."""
        self.plan = list(plan)
        self.hold = hold
        self.registries = registries
        self.settings = settings
        self.results_dir = results_dir
        self.run_id = run_id
        self.command_line = command_line
        self.progress = progress
        self.throughputs: dict[ThroughputKey, float] = {}
        self.testbed: TestbedSession | None = None  # the run's testbed hosts, when it deploys on one

    def _environment(self, executor: LocalExecutor) -> dict[str, Any]:
        """This machine's facts, and each testbed host's when the run has a testbed."""
        environment = collect_environment(executor)
        if self.testbed is not None:  # the run's own session: no second connection per host
            environment["testbed_hosts"] = describe_testbed(self.testbed)
        elif self.settings["TESTBED"]:
            environment["testbed_hosts"] = testbed_environment(
                Path(self.settings["TESTBED"]), run_id=self.run_id, command_log=executor.command_log)
        return environment

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
            self.testbed = open_run_session(self.settings, self.plan, run_id=self.run_id,
                                            command_log=executor.command_log)
            writer = ResultsWriter(
                self.results_dir,
                run_id=self.run_id,
                command_line=self.command_line,
                simulated=all(pt.simulated for pt in self.plan),
                environment=self._environment(executor),
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
            if self.testbed is not None:
                self.testbed.close()
                self.testbed = None
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
            # a --test-params sweep records each element under VSPERF's name for them
            parameters={**test.parameters, **({"TEST_PARAMS": pt.test_params} if pt.test_params else {})},
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

    def _hold(self, pt: PlannedTest, deployment: Deployment) -> None:
        """--mode trafficgen-off/-pause: say where the generator ports are and wait for the user."""
        ports = "; ".join(f"{p.ifname} in netns {p.netns or '-'} ({p.mac}, {p.ipv4})"
                          for p in deployment.gen_ports) or "none (the DUT is simulated)"
        then = "then tear it down" if pt.hold == "off" else "then send the test's traffic"
        message = (f"{pt.test.name}: {pt.test.deployment} is deployed; generator ports: {ports}. "
                   f"vsperf waits, {then}.")
        log.info("%s", message)
        if self.hold is not None:
            self.hold(message)

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
        traffic_type = traffic_from_settings(pt.settings, sizes[0]).traffic_type
        headline_key = HEADLINE_KEYS.get(traffic_type, "")
        # Some of the seeds' benchmarks run their own programs on the ports: the generator stays off them.
        benchmark, own_programs = is_benchmark(traffic_type), runs_own_programs(traffic_type)
        gen_entry = self.registries.trafficgens.get(pt.trafficgen)
        with ExitStack() as stack:
            deployment = stack.enter_context(_make_deployment(pt, self.registries, ctx, max(sizes), self.testbed))
            on_testbed = isinstance(deployment, TestbedDeployment | TestbedWireDeployment)
            bed = self.testbed if on_testbed else None
            # On a testbed the generator runs on its host, through that host's executor.
            gen_ctx = replace(ctx, executor=self.testbed.trafficgen) if on_testbed and self.testbed else ctx
            generator: TrafficGenerator = gen_entry.cls(pt.settings, gen_ctx)
            if on_testbed and self.testbed:  # its processes there are journalled (stopped after a SIGKILL)
                generator.use_host_processes(self.testbed, self.testbed.testbed.trafficgen_host)
                # The switch's PMD CPUs are busy on the generator's host only when the DUT runs there.
                generator.switch_on_host = self.testbed.testbed.generator_on_dut_host
            stack.enter_context(generator)
            if not own_programs:
                generator.start(deployment.gen_ports)
            components = [
                ComponentInfo("trafficgen", traffic_type, BENCHMARK_TOOLS[traffic_type], {}) if own_programs
                else ComponentInfo("trafficgen", pt.trafficgen, generator.version(), _generator_host(deployment, bed)),
                *deployment.components(),
            ]
            if not any(c.role in ("nic", "port") for c in components):
                components += _port_components(deployment, ctx)
            load_components, load_pids = stack.enter_context(
                _load(pt, self.registries, ctx, deployment, self.testbed if on_testbed else None))
            components += load_components
            # On a testbed the collectors read the hosts: the DUT's processes and CPU on its host,
            # the generator's ports on the generator's host.
            # current_pids: a reset test restarts the switch; the collectors follow its new PIDs.
            target = CollectorTarget({**deployment.dut_pids(), **load_pids}, ports=tuple(deployment.gen_ports),
                                     dut_host=bed.dut if bed else None, gen_host=bed.trafficgen if bed else None,
                                     current_pids=lambda: {**deployment.dut_pids(), **load_pids})
            collectors = build_collectors(pt.settings, self.registries.collectors, ctx, target)
            components += [c.component() for c in collectors]
            writer.set_components(index, components)
            if pt.hold:
                self._hold(pt, deployment)
                if pt.hold == "off":
                    return  # trafficgen-off: the user sent their own traffic; nothing measured

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
                                         throughput_fps=self.throughputs.get(known), dut=dut_control,
                                         bench=BenchEnv(ctx.executor, ctx.work_dir, tuple(deployment.gen_ports),
                                                        dut_ports=deployment.dut_ports()) if benchmark else None)
                if not benchmark:  # VSPERF's result keys beside vsperf's (vsperf.results.vsperf_keys)
                    result = with_vsperf_keys(result, traffic, guest_loopback(pt))
                writer.add_frame_size(index, size, result, statistics=phase.statistics)
                result.raise_if_failed(f"{size} B")  # a search without an answer fails the test, trials kept
                if benchmark:  # its tables (sweep points, udp_msg_loss rows, iperf3 per second) as CSV too
                    benchmark_csv_paths(self.results_dir, next(t for t in writer.results.tests if t.index == index))
                found = result.metrics.get("throughput_rx_fps")
                if traffic.traffic_type == "rfc2544_throughput" and isinstance(found, int | float) and found > 0:
                    self.throughputs[known] = float(found)
                value = result.metrics.get(headline_key)
                outcome.headline.append((size, headline_key, value if isinstance(value, int | float) else None))
                self.progress.frame_size_done(size, headline_key, value)
                deployment.check_alive()
        log.info("test %s finished", test.name)
