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
from vsperf.collectors.base import CollectorTarget, build_collectors, collecting
from vsperf.deploy.base import Deployment
from vsperf.deploy.build import build_deployment
from vsperf.host.facts import port_details
from vsperf.host.host import Host
from vsperf.host.hosts import RunHosts
from vsperf.host.workdir import RunContext
from vsperf.registry import Registries
from vsperf.results.model import ComponentInfo
from vsperf.results.vsperf_keys import with_vsperf_keys
from vsperf.results.writer import ResultsWriter
from vsperf.run.kinds import run_traffic
from vsperf.run.plan import PlannedTest
from vsperf.search.measurer import DutControl
from vsperf.trafficgen.base import TrafficGenerator
from vsperf.ui.progress import Progress

log = logging.getLogger(__name__)

# Throughput found earlier in the run, per (deployment, vswitch, vnf, frame size): tests that
# need one (latency, recovery, reset, RFC 9004 back-to-back) use it instead of measuring again.
ThroughputKey = tuple[str, str, str, int]
Headline = tuple[int, str, float | int | None]


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
        # On a testbed the collectors read the hosts: the DUT's processes and CPU on its host, the
        # generator's ports on the generator's host. current_pids: a reset test restarts the
        # switch; the collectors follow its new PIDs. A simulated DUT has no host: this machine.
        on_testbed = m.hosts is not None and not m.hosts.is_lab and pt.deploys
        target = CollectorTarget(
            {**deployment.dut_pids(), **load_pids}, ports=tuple(deployment.gen_ports),
            dut_host=m.hosts.dut.executor if on_testbed and m.hosts else None,
            gen_host=m.hosts.trafficgen.executor if on_testbed and m.hosts else None,
            current_pids=lambda: {**deployment.dut_pids(), **load_pids})
        collectors = build_collectors(pt.collectors, pt.settings, m.registries.collectors, m.ctx, target)
        components += [c.component() for c in collectors]
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

        for frame in pt.frames:
            size = frame.traffic.frame_size_bytes
            m.progress.frame_size_started(size)
            known: ThroughputKey = (test.deployment, pt.vswitch, pt.vnf, size)
            with collecting(collectors) as phase:
                result = run_traffic(generator, frame, on_trial=on_trial, throughput_fps=m.throughputs.get(known),
                                     dut=dut_control, bench=bench)
            if not kind.benchmark:  # VSPERF's result keys beside vsperf's (vsperf.results.vsperf_keys)
                result = with_vsperf_keys(result, frame.traffic, pt.guest_loopback)
            m.writer.add_frame_size(index, size, result, statistics=phase.statistics)
            if kind.benchmark:  # its tables (sweep points, udp_msg_loss rows, iperf3 per second) as CSV too
                benchmark_csv_paths(m.ctx.results_dir, next(t for t in m.writer.results.tests if t.index == index))
            found = result.metrics.get("throughput_rx_fps")
            if frame.traffic.traffic_type == "rfc2544_throughput" and isinstance(found, int | float) and found > 0:
                m.throughputs[known] = float(found)
            value = result.metrics.get(kind.headline)
            headline.append((size, kind.headline, value if isinstance(value, int | float) else None))
            m.progress.frame_size_done(size, kind.headline, value)
            deployment.check_alive()
    log.info("test %s finished", test.name)
