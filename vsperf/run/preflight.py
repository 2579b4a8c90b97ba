"""The one check of a plan before anything is created: every answer is one line naming the
problem and the fix (a UserError: exit 2), with nothing deployed.

What the hosts can deploy is `vsperf.deploy.support`'s answer; what each component needs (its
programs, the kernel features of its host) it checks itself (`check_prerequisites`) on a probe of
the host it will run on: the switch, its VNFs and the load on the DUT host, the generator on the
generator host. On a testbed those probes run their commands there, through the same SSH
connections the run then uses.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from vsperf.collectors.base import CollectorTarget
from vsperf.deploy.build import resolve_vnf
from vsperf.deploy.overlay import overlay_problem
from vsperf.deploy.support import DUT_TOOLS, deployment_problem, lab_problem, state_root_problem
from vsperf.deploy.topology import parse_deployment
from vsperf.errors import ConfigError, PrerequisiteError, UserError
from vsperf.executor import CommandLog, LocalExecutor
from vsperf.host.host import Host
from vsperf.host.hosts import RunHosts
from vsperf.host.workdir import RunContext
from vsperf.registry import Registries
from vsperf.run.plan import PlannedTest
from vsperf.steps.model import Step
from vsperf.testbed.file import load_testbed
from vsperf.testbed.model import Testbed
from vsperf.trafficgen.base import TrafficGenerator

# Programs a collector runs on a testbed's DUT host (program -> Debian package): pidstat finds the
# DUT's processes with `ps` and reads the clock tick and page size with `getconf` (vsperf.collectors.procps).
DUT_COLLECTOR_TOOLS = {"pidstat": {"ps": "procps", "getconf": "libc-bin"}}


class TestbedUnsupportedError(UserError):
    """The testbed is valid and reachable, but what the run asks of it is not supported."""

    __test__ = False


def _probe(host: Host) -> Host:
    """A probe of `host`: its executor, nothing created."""
    return Host.probe(host.executor, name=host.name)


def _where(hosts: RunHosts | None) -> str:
    return "" if hosts is None or hosts.is_lab else f"testbed {hosts.testbed.path}: "


def open_hosts(plan: Sequence[PlannedTest], testbed_file: str, *, run_id: str, command_log: CommandLog,
               registries: Registries | None = None, results_dir: Path | None = None,
               claim: Callable[[RunHosts], None] | None = None) -> RunHosts | None:
    """The run's hosts: the testbed file's, connected, put back as killed runs left them and
    their ports checked (also for a plan that deploys nothing there: the run describes them), or
    the local lab (this machine: Linux and root; None when the plan deploys nothing). The caller
    closes them. With `registries`, a collector that cannot read a testbed's hosts is refused
    first, before the file is read or a host contacted. `claim`: see RunHosts.open (a testbed's
    lock, vsperf.pool)."""
    if testbed_file:
        if registries is not None:
            check_collectors_read_hosts(plan, registries)
        testbed = load_testbed(Path(testbed_file))
        # --mode trafficgen: the DUT's ports are the user's DUT's, neither checked nor touched
        return RunHosts.open(testbed, run_id=run_id, command_log=command_log, results_dir=results_dir,
                             check_dut_ports=not any(pt.traffic_only for pt in plan), claim=claim)
    if not any(pt.deploys for pt in plan):
        return None
    if why := lab_problem():
        raise PrerequisiteError(why)
    return RunHosts.open(Testbed.local(), run_id=run_id, command_log=command_log, results_dir=results_dir)


def check_plan(plan: Sequence[PlannedTest], registries: Registries, hosts: RunHosts | None) -> None:
    """Check everything `plan` needs on `hosts` (None: nothing is deployed)."""
    if hosts is not None and (why := state_root_problem(hosts.journal.root)):
        raise PrerequisiteError(why)
    seen: set[tuple[object, ...]] = set()
    try:
        for pt in plan:
            _check_test(pt, registries, hosts if pt.deploys else None, seen)
    except PrerequisiteError as exc:
        where = _where(hosts)
        raise PrerequisiteError(f"{where}{exc}" if where and not str(exc).startswith(where) else str(exc)) from None


def check_collectors_read_hosts(plan: Sequence[PlannedTest], registries: Registries) -> None:
    """UserError for a collector of a deploying test that reads only this machine (a testbed run)."""
    for pt in plan:
        for name in pt.collectors:
            if pt.deploys and not registries.collectors.get(name).cls.REMOTE:
                raise UserError(f"collector {name} reads only this machine, not the testbed's hosts: "
                                f"remove it from COLLECTOR for a --testbed run")


def _check_test(pt: PlannedTest, registries: Registries, hosts: RunHosts | None, seen: set[tuple[object, ...]]) -> None:
    generator: type[TrafficGenerator] = registries.trafficgens.get(pt.trafficgen).cls
    spec = pt.deployment
    # Tests that deploy the same (the same tunnel too) with the same own Parameters are checked once.
    key = ("deploy", spec.name, spec.vswitch, spec.vnf, spec.traffic_only, spec.frame_modification, spec.tunnel,
           pt.trafficgen, repr(pt.test.parameters))
    if hosts is not None and key not in seen:
        seen.add(key)
        _check_deployment(pt, generator, registries, hosts)
    gen_host = _probe(hosts.trafficgen) if hosts is not None else Host.probe()
    if ("gen", pt.trafficgen, gen_host.name) not in seen:
        seen.add(("gen", pt.trafficgen, gen_host.name))
        generator(pt.settings, gen_host).check_prerequisites()
    if pt.loadgen and hosts is not None and ("load", pt.loadgen) not in seen:
        seen.add(("load", pt.loadgen))
        registries.loadgens.get(pt.loadgen).cls(pt.test.load, pt.settings, _probe(hosts.dut)).check_prerequisites()
    probe_ctx = RunContext("check", Path("/nonexistent"), Path("/nonexistent"), LocalExecutor())
    for name in pt.collectors:
        if ("collector", name) in seen:
            continue
        seen.add(("collector", name))
        collector = registries.collectors.get(name).cls
        if hosts is not None and not hosts.is_lab and not collector.REMOTE:
            raise UserError(f"collector {name} reads only this machine, not the testbed's hosts: "
                            f"remove it from COLLECTOR for a --testbed run")
        collector(pt.settings, probe_ctx, CollectorTarget()).check_prerequisites()
        if hosts is not None and not hosts.is_lab:  # what it runs on the DUT host, looked for there
            dut = _probe(hosts.dut)
            for tool, package in DUT_COLLECTOR_TOOLS.get(collector.NAME, {}).items():
                dut.require(tool, f"apt-get install {package}")


_NIC_PCI_RE = re.compile(r"""\$NICS\[\d+\]\[\s*["']pci["']\s*\]""")


def nic_pci_problem(steps: Sequence[Step], hosts: RunHosts) -> str:
    """Why the steps cannot use a NIC's PCI address (``$NICS[n]["pci"]``: VSPERF's tests that
    bind a NIC to a DPDK driver mid-test) on `hosts`: the DUT's ports here have none."""
    uses = next((step for step in steps if any(_NIC_PCI_RE.search(str(arg)) for arg in step.raw)), None)
    cables = hosts.testbed.cables
    if uses is None or (cables and all(c.dut.pci for c in cables)):
        return ""
    ports = "the local lab's ports are veths" if hosts.is_lab else "its DUT ports have no pci address"
    return (f"step {uses.index} uses a NIC's PCI address ($NICS[n][\"pci\"]), and {ports}: run it on a testbed "
            f"whose DUT ports are PCI NICs")


def _check_deployment(pt: PlannedTest, generator: type[TrafficGenerator], registries: Registries,
                      hosts: RunHosts) -> None:
    spec = pt.deployment
    vswitch_cls = registries.vswitches.get(spec.vswitch).cls
    why = deployment_problem(spec, pt.largest, generator, hosts, supports_match=vswitch_cls.SUPPORTS_MATCH,
                             max_frame_bytes=vswitch_cls.LAB_MAX_FRAME_BYTES)
    if not why and spec.tunnel is not None:  # op2p, ptunp (vsperf.deploy.overlay)
        why = overlay_problem(spec.tunnel, pt.largest, generator, vswitch_cls, _probe(hosts.dut), lab=hosts.is_lab)
        why = f"test {pt.test.name}: {why}" if why else ""
    if not why and pt.test.steps is not None:
        why = nic_pci_problem(pt.test.steps, hosts)
        why = f"test {pt.test.name}: {why}" if why else ""
    if why and not hosts.is_lab:
        raise TestbedUnsupportedError(f"testbed {hosts.testbed.path}: hosts and ports checked, but test "
                                      f"{pt.test.name}: {why}; run without --testbed, or with --trafficgen dummy")
    if why:
        raise PrerequisiteError(why)
    if spec.traffic_only:
        return
    dut = _probe(hosts.dut)
    for tool, package in DUT_TOOLS.items():
        dut.require(tool, f"apt-get install {package}")
    vswitch_cls(spec.settings, dut).check_prerequisites()  # (a VLAN push is checked when it deploys)
    if parse_deployment(spec.name).vnfs:
        try:
            vnf_cls = resolve_vnf(spec, registries, vswitch_cls)
        except ConfigError as exc:
            raise PrerequisiteError(str(exc)) from exc
        vnf_cls(spec.settings, dut).check_prerequisites()
