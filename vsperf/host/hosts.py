"""The hosts of a run: one `Host` per machine of its testbed, the run's journal, and the checks
and clean-ups that come with opening and closing them.

Without a testbed file the local lab stands in for the whole testbed: one host, `local`, that is
both the DUT host and the generator host, whose ports the run makes itself (veth pairs). With a
testbed file each host is this machine (`local`) or one reached over SSH, and the ports are the
file's cables. `RunHosts.open` connects to every host (host keys verified; an unreachable host, a
wrong key or a refused login is a UserError: exit 2), puts back what killed runs left on them
(their journals), and checks every cabled port before anything is created. `close` releases
everything the run's journal still lists and closes the connections; it runs at the end, on error
and on Ctrl-C.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from vsperf.errors import CommandError, VsperfError
from vsperf.executor import CommandLog, Executor, LocalExecutor
from vsperf.host.facts import describe_host
from vsperf.host.host import Host
from vsperf.host.journal import DEFAULT_STATE_ROOT, Journal, leftover_journals
from vsperf.host.names import RunNames, is_tagged, run_dirs_removal
from vsperf.host.pci import ExecutorSysFs, check_bindable, interfaces_of, read_binding
from vsperf.host.ports import PortError, PortState, check_cable, check_port, prepare_port
from vsperf.host.qdisc import check_port_qdiscs
from vsperf.host.release import Released, reachable, release
from vsperf.host.workdir import orphaned_work_dirs
from vsperf.remote.ssh import SshExecutor
from vsperf.testbed.model import LOCAL_HOST, Cable, Testbed

log = logging.getLogger(__name__)


@dataclass
class RunHosts:
    """The run's hosts by name, its journal, and the state of every cabled port as checked."""

    testbed: Testbed
    hosts: dict[str, Host]
    journal: Journal
    checked: dict[tuple[str, str], PortState] = field(default_factory=dict)  # (host, ifname) -> state
    swept: bool = False  # what killed runs left on these hosts has been put back

    @classmethod
    def open(cls, testbed: Testbed, *, run_id: str, command_log: CommandLog,
             state_root: Path = DEFAULT_STATE_ROOT, check_dut_ports: bool = True,
             results_dir: Path | None = None, claim: Callable[[RunHosts], None] | None = None) -> RunHosts:
        """Connect to every host, check every cabled port (with `check_dut_ports` False only the
        generator's: --mode trafficgen, the DUT is the user's). A testbed's hosts are first put
        back as killed runs left them (a port must be checked as it really is); the local lab's
        when the run starts (`sweep`), after the checks: an error then still is its one line.
        `claim(hosts)` runs once the hosts are connected, before anything on them is touched
        (vsperf.pool locks the testbed there); its exception closes the connections."""
        names = RunNames(run_id)
        journal = Journal(run_id, root=state_root)
        executors: dict[str, Executor] = {}
        remote: list[SshExecutor] = []
        for host in testbed.hosts:
            if host.ssh is None:
                executors[host.name] = LocalExecutor(command_log)
            else:
                executors[host.name] = ssh = SshExecutor(host.ssh, command_log)
                remote.append(ssh)
        run = cls(testbed, {n: Host(n, ex, names, journal, results_dir) for n, ex in executors.items()}, journal)
        try:
            # The hosts' handshakes at once; the first failing host, in file order, is the error.
            with ThreadPoolExecutor(max_workers=max(len(remote), 1)) as pool:
                for connecting in [pool.submit(ssh.connect) for ssh in remote]:
                    connecting.result()
            if claim is not None:
                claim(run)
            if testbed.cables:
                run.sweep()
            for cable in testbed.cables:
                run._check(cable, dut_port=check_dut_ports)
        except BaseException:
            run.close_connections()
            raise
        return run

    @property
    def dut(self) -> Host:
        """The DUT host (vswitch, VNFs, load generators; the collectors read it)."""
        return self.hosts[self.testbed.dut_host]

    @property
    def trafficgen(self) -> Host:
        """The traffic generator's host."""
        return self.hosts[self.testbed.trafficgen_host]

    @property
    def is_lab(self) -> bool:
        """True for the local lab (no testbed file: the run makes its own ports)."""
        return not self.testbed.path

    def __iter__(self) -> Iterator[Host]:
        return iter(self.hosts.values())

    # --- ports ------------------------------------------------------------------------------------

    def _check(self, cable: Cable, *, dut_port: bool = True) -> None:
        dut, gen = self.dut, self.trafficgen
        port = cable.dut
        if not dut_port:
            pass  # the user's DUT: its ports are not vsperf's to check
        elif port.driver == "kernel":
            assert port.interface is not None  # the loader requires it for kernel ports
            self.checked[(dut.name, port.interface)] = check_port(dut.executor, port.interface)
        else:
            assert port.pci is not None
            fs = ExecutorSysFs(dut.executor)
            check_bindable(fs, read_binding(fs, port.pci), port.driver)
            in_use = [i for i in interfaces_of(fs, port.pci) if check_port(dut.executor, i).addresses]
            if in_use:
                raise PortError(f"host {dut.name}: PCI device {port.pci} is interface {in_use[0]}, which has "
                                f"addresses (in use by the host?); refusing to take it for DPDK")
        end = cable.trafficgen
        if end.interface is not None:
            gen_state = check_port(gen.executor, end.interface)
            self.checked[(gen.name, end.interface)] = gen_state
            try:  # the generator may replace its root qdisc and add a clsact (vsperf.host.qdisc)
                check_port_qdiscs(gen.executor, end.interface)
            except CommandError as exc:  # no tc there: the generator's tools check names it
                log.warning("host %s: qdiscs of %s not checked: %s", gen.name, end.interface, exc)
            if port.interface is not None and (dut.name, port.interface) in self.checked:
                check_cable(dut.name, self.checked[(dut.name, port.interface)], gen.name, gen_state)

    def sweep(self) -> None:
        """Put back what killed runs left on these hosts (once), each thing done logged."""
        if not self.swept:
            self.swept = True
            for what in sweep_leftovers(self.journal.root, {h.name: h.executor for h in self}):
                log.warning("removed leftover of a killed run: %s", what)

    def use_port(self, host: Host, interface: str, *, mtu_bytes: int | None = None) -> None:
        """Record the cabled port's state (put back at release), then bring it up with `mtu_bytes`."""
        state = self.checked[(host.name, interface)]
        host.record("port", interface, state=state.as_dict())
        prepare_port(host.executor, state, mtu_bytes=mtu_bytes)

    def describe(self) -> list[dict[str, Any]]:
        """One entry per host of the testbed, for the report: its name, roles, address and facts
        (`vsperf.host.facts.describe_host`, with the cabled ports checked on it)."""
        testbed = self.testbed
        entries = []
        for spec in testbed.hosts:
            roles = [r for r, name in (("DUT", testbed.dut_host), ("traffic generator", testbed.trafficgen_host))
                     if name == spec.name]
            interfaces = [ifname for (name, ifname) in self.checked if name == spec.name]
            where = "this machine" if spec.ssh is None else spec.ssh.label
            entries.append({"name": spec.name, "roles": roles or ["unused"], "address": where,
                            **describe_host(self.hosts[spec.name].executor, interfaces)})
        return entries

    # --- the end ----------------------------------------------------------------------------------

    def release(self) -> Released:
        """Remove and put back everything the journal lists (teardown of a deployment)."""
        done = release(self.journal, {h.name: h.executor for h in self})
        for host in self:
            host.released()
        for what in done.done:
            log.debug("released: %s", what)
        return done

    def close_connections(self) -> None:
        """Close the SSH connections."""
        for host in self:
            if isinstance(host.executor, SshExecutor):
                host.executor.close()

    def close(self) -> Released:
        """Release everything, then close the connections."""
        try:
            return self.release()
        finally:
            self.close_connections()

    def __enter__(self) -> RunHosts:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def local_lab(run_id: str, command_log: CommandLog, *, state_root: Path = DEFAULT_STATE_ROOT) -> RunHosts:
    """The local lab's hosts: this machine alone, as DUT and generator host."""
    return RunHosts.open(Testbed.local(), run_id=run_id, command_log=command_log, state_root=state_root)


def sweep_leftovers(state_root: Path, executors: dict[str, Executor]) -> list[str]:
    """Put back what killed runs left on these hosts (their journals: the owner is gone), remove
    their directories there (/tmp/vsperf-RUNID-*, DPDK runtime directories), and this machine's
    scratch directories of dead runs; describe each thing done."""
    done: list[str] = []
    journals, problems = leftover_journals(state_root)
    for problem in problems:
        log.warning("ignoring %s", problem)
    for journal in journals:
        used = journal.hosts()  # before the release empties it
        result = release(journal, executors)
        done += [f"run {journal.run_id}: {what}" for what in result.done]
        for host, executor in executors.items():
            if reachable(executor) and (host in used or host == LOCAL_HOST):
                try:
                    executor.run(run_dirs_removal(journal.run_id), check=False, timeout_s=30.0)
                except VsperfError as exc:
                    log.warning("host %s: directories of run %s not removed: %s", host, journal.run_id, exc)
        if not len(journal):
            journal.save()  # its file goes with its last entry; one that listed none goes here
            done.append(f"run {journal.run_id}: journal {journal.path}")
    for work_dir in orphaned_work_dirs():
        shutil.rmtree(work_dir, ignore_errors=True)
        done.append(f"work directory {work_dir}")
    if LOCAL_HOST in executors:
        _report_unrecorded(state_root, executors[LOCAL_HOST])
    return done


def _report_unrecorded(root: Path, executor: Executor) -> None:
    """Log namespaces of this machine that look like vsperf's but no journal lists (never removed)."""
    recorded: set[str] = set()
    for path in root.glob("*/journal.json") if root.is_dir() else []:
        try:
            recorded.update(e.name for e in Journal.load(path) if e.kind == "netns")
        except ValueError:
            continue
    listed = executor.run(["ip", "netns", "list"], check=False, timeout_s=10.0).stdout
    for line in listed.splitlines():
        name = line.split()[0] if line.split() else ""
        if is_tagged(name) and name not in recorded:
            log.warning("network namespace %s looks like vsperf's but no run records it; not removed "
                        "(delete it with `ip netns delete %s` if it is yours)", name, name)
