"""One test's measurement: its deployment, generator, load and collectors, around every frame size.

Where things run is the hosts' business (`vsperf.host.RunHosts`: the local lab, or a testbed):
the deployment is built for them (`vsperf.deploy.build`), the generator runs on the generator
host, the load on the DUT host, and each component is handed the `Host` it runs on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

from vsperf.benchmarks import BenchEnv
from vsperf.benchmarks.csvfiles import benchmark_csv_paths
from vsperf.capture.frame_check import run_frame_check
from vsperf.capture.run import CaptureConfig, capture_paths, capturing, with_captures
from vsperf.catalog import KEYWORD_SETTINGS
from vsperf.collectors.base import CollectorTarget, build_collectors, collecting
from vsperf.deploy.base import Deployment
from vsperf.deploy.build import build_deployment
from vsperf.deploy.deployment import mtu_for
from vsperf.executor import Executor
from vsperf.host.facts import port_details
from vsperf.host.host import Host
from vsperf.host.hosts import RunHosts
from vsperf.host.workdir import RunContext
from vsperf.registry import Registries
from vsperf.results.model import ComponentInfo
from vsperf.results.sizes import PacketSize
from vsperf.results.vsperf_keys import with_trial_notes, with_vsperf_keys
from vsperf.results.writer import ResultsWriter
from vsperf.run.kinds import TrafficPlan, run_traffic
from vsperf.run.plan import PlannedTest, deployment_modification, plan_frames
from vsperf.search.measurer import DutControl
from vsperf.steps.build import StepTest, run_test_steps
from vsperf.trafficgen.base import TrafficGenerator
from vsperf.ui.progress import Progress

log = logging.getLogger(__name__)

# Throughput found earlier in the run, per (deployment, vswitch, vnf, frame size): tests that
# need one (latency, recovery, reset, RFC 9004 back-to-back) use it instead of measuring again.
ThroughputKey = tuple[str, str, str, PacketSize]
Headline = tuple[PacketSize, str, float | int | None]


@dataclass
class Measurement:
    """What the runner hands one test: where it runs and what it reports to."""

    registries: Registries
    hosts: RunHosts | None  # None: nothing is deployed (a simulated DUT)
    ctx: RunContext
    writer: ResultsWriter
    progress: Progress
    throughputs: dict[ThroughputKey, float] = field(default_factory=dict)
    hold: Callable[[PlannedTest, Deployment], None] | None = None


def _gen_host(m: Measurement) -> Host:
    return m.hosts.trafficgen if m.hosts is not None else Host.probe()


def _generator_details(m: Measurement, deployment: Deployment) -> dict[str, str]:
    """The report's `host` of a generator on a testbed's generator host (none for a hardware
    generator's port locations, nor on the local lab)."""
    if m.hosts is None or m.hosts.is_lab or any(port.location for port in deployment.gen_ports):
        return {}
    return {"host": m.hosts.trafficgen.name}


def _port_components(m: Measurement, deployment: Deployment) -> list[ComponentInfo]:
    """The generator's ports as the report's NIC(s): driver (veth on the local lab) and speed."""
    components = []
    executor = _gen_host(m).executor
    for i, p in enumerate(deployment.gen_ports):
        details = port_details(executor, p.ifname, p.netns)
        driver = details.pop("driver", "unknown")
        components.append(ComponentInfo(
            "port", f"port {i}", driver, {"interface": p.ifname, "netns": p.netns or "", "mac": p.mac, **details}))
    return components


def _collector_hosts(pt: PlannedTest, m: Measurement) -> tuple[Executor | None, Executor | None]:
    """What the collectors read the DUT and the generator's ports through: on a testbed the
    hosts (the DUT's processes and CPU on its host, the ports on the generator's host); None
    (this machine) on the local lab, or for a simulated DUT (it has no host)."""
    if m.hosts is None or m.hosts.is_lab or not pt.deploys:
        return None, None
    return m.hosts.dut.executor, m.hosts.trafficgen.executor


@contextmanager
def _load(pt: PlannedTest, m: Measurement) -> Iterator[tuple[list[ComponentInfo], dict[str, int]]]:
    """The test's Load (CPU / memory stress) on the DUT host around the traffic phase, when it
    has one: its components and its processes (name -> PID, for the process statistics)."""
    if not pt.test.load:
        yield [], {}
        return
    if pt.simulated or m.hosts is None:
        log.warning("%s: Load %s not applied: the DUT is simulated", pt.test.name, dict(pt.test.load))
        yield [ComponentInfo("loadgen", "none", "n/a", {"note": "not applied to a simulated DUT"})], {}
        return
    dut = m.hosts.dut
    loadgen = m.registries.loadgens.get(str(pt.loadgen)).cls(pt.test.load, pt.settings, dut)
    with loadgen:
        info = loadgen.component()
        if not m.hosts.is_lab:
            info = ComponentInfo(info.role, info.name, info.version, {**info.details, "host": dut.name})
        yield [info], loadgen.pids()


def measure_test(pt: PlannedTest, m: Measurement, index: int, headline: list[Headline]) -> None:
    """Deploy test `pt`, measure every frame size of its plan (each written as it completes) and
    tear everything down, whatever happens; `headline` gets each size's headline value."""
    test, kind = pt.test, pt.kind
    with ExitStack() as stack:
        deployment = stack.enter_context(build_deployment(pt.deployment, m.registries, m.hosts, pt.largest))
        generator: TrafficGenerator = m.registries.trafficgens.get(pt.trafficgen).cls(pt.settings, _gen_host(m))
        if m.hosts is not None:  # the switch's PMD CPUs are busy on the generator's host only when the DUT runs there
            generator.switch_on_host = m.hosts.dut is m.hosts.trafficgen
        stack.enter_context(generator)
        # A benchmark that runs its own programs on the ports: the generator stays off them.
        if kind.tool is None:
            generator.start(deployment.gen_ports)
        components = [
            ComponentInfo("trafficgen", pt.traffic.traffic_type, kind.tool, {}) if kind.tool is not None
            else ComponentInfo("trafficgen", pt.trafficgen, generator.version(), _generator_details(m, deployment)),
            *deployment.components(),
        ]
        if not any(c.role in ("nic", "port") for c in components):
            components += _port_components(m, deployment)
        load_components, load_pids = stack.enter_context(_load(pt, m))
        components += load_components
        # current_pids: a reset test restarts the switch; the collectors follow its new PIDs.
        dut_host, gen_host = _collector_hosts(pt, m)
        target = CollectorTarget(
            {**deployment.dut_pids(), **load_pids}, ports=tuple(deployment.gen_ports),
            dut_host=dut_host, gen_host=gen_host, current_pids=lambda: {**deployment.dut_pids(), **load_pids})
        collectors = build_collectors(pt.collectors, pt.settings, m.registries.collectors, m.ctx, target)
        components += [c.component() for c in collectors]
        modification = deployment_modification(pt)
        if modification and m.hosts is not None and kind.tool is None:  # frames arrive modified? (vsperf.capture)
            components.append(run_frame_check(generator, m.hosts.trafficgen, deployment.gen_ports, pt.traffic,
                                              modification, pt.deployment.vlan_id, m.ctx.results_dir, index))
        m.writer.set_components(index, components)
        if pt.hold:
            if m.hold is not None:
                m.hold(pt, deployment)
            if pt.hold == "off":
                return  # trafficgen-off: the user sent their own traffic; nothing measured
        # A deployment that can restart its switch and flush learned addresses lets
        # rfc2544_reset and the RFC 2889 address tests act on the device under test.
        dut_control = deployment if isinstance(deployment, DutControl) else None
        bench = BenchEnv(m.ctx.executor, m.ctx.work_dir, tuple(deployment.gen_ports),
                         dut_ports=deployment.dut_ports()) if kind.benchmark else None

        def on_trial(trial: Any) -> None:
            m.progress.trial(trial)
            deployment.check_alive()

        capture = CaptureConfig.from_traffic(pt.settings["TRAFFIC"], f"test {test.name}")

        def measure(frame: TrafficPlan) -> dict[str, Any]:
            """One frame size of `frame`: measured, written, its metrics (VSPERF's keys)."""
            size = frame.traffic.packet_size
            m.progress.frame_size_started(size)
            known: ThroughputKey = (test.deployment, pt.vswitch, pt.vnf, size)
            with ExitStack() as phase_stack:
                captures = capture_paths(capture, m.ctx.results_dir, index, size)
                if captures and m.hosts is not None and capture is not None:  # TRAFFIC capture
                    phase_stack.enter_context(capturing(generator, m.hosts.trafficgen, deployment.gen_ports,
                                                        captures, capture.count, capture.filter))
                phase = phase_stack.enter_context(collecting(collectors))
                result = run_traffic(generator, frame, on_trial=on_trial, throughput_fps=m.throughputs.get(known),
                                     dut=dut_control, bench=bench)
            if captures:
                result = with_captures(result, captures)
            if not frame.kind.benchmark:  # VSPERF's result keys beside vsperf's (vsperf.results.vsperf_keys)
                result = with_vsperf_keys(result, frame.traffic, pt.guest_loopback)
            result = with_trial_notes(result)
            m.writer.add_frame_size(index, size, result, statistics=phase.statistics)
            result.raise_if_failed(f"{size} B")  # a search without an answer fails the test, trials kept
            if frame.kind.benchmark:  # its tables (sweep points, udp_msg_loss rows, iperf3 per second) as CSV too
                benchmark_csv_paths(m.ctx.results_dir, next(t for t in m.writer.results.tests if t.index == index))
            found = result.metrics.get("throughput_rx_fps")
            if frame.traffic.traffic_type == "rfc2544_throughput" and isinstance(found, int | float) and found > 0:
                m.throughputs[known] = float(found)
            value = result.metrics.get(frame.kind.headline)
            headline.append((size, frame.kind.headline, value if isinstance(value, int | float) else None))
            m.progress.frame_size_done(size, frame.kind.headline, value)
            deployment.check_alive()
            return {**result.metrics, "packet_size": size}

        if test.steps is not None:  # a step-driven test: its steps, then its traffic if they sent none
            # its TEST_PARAMS: its Parameters (VSPERF's keywords, vSwitch and the others, are not)
            own = {k: v for k, v in test.parameters.items() if k not in KEYWORD_SETTINGS.values()}
            step_test = StepTest(test.name, test.steps, pt.settings, pt.vswitch, pt.vnf,
                                 mtu_for(pt.largest, pt.jumbo_mtu_bytes), own)
            stepped = run_test_steps(step_test, m.registries, m.ctx.results_dir, deployment,
                                     lambda s: [measure(f) for f in plan_frames(s)],
                                     lambda record: m.writer.add_step(index, record), m.hosts)
            if stepped or test.deployment == "clean":
                return
        for frame in pt.frames:
            measure(frame)
    log.info("test %s finished", test.name)
