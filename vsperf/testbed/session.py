"""A testbed in use: one executor per host, the preflight, and the ports' record and restore.

`TestbedSession.open` connects to every host and checks every port before anything is created
(an unreachable host, a wrong host key, a refused key or a bad port is a UserError: exit 2).
It also restores the ports of an earlier run that was killed before it could. `close` puts
every port and PCI device back as it was and closes the connections; it runs at the end, on
error and on Ctrl-C (the caller uses it as a context manager).
"""

from __future__ import annotations

import contextlib
import logging
import shlex
import signal
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from types import TracebackType

from vsperf.errors import CommandError, VsperfError
from vsperf.executor import CommandLog, Executor, LocalExecutor, Process, StreamSpec
from vsperf.lab.names import LabNames
from vsperf.remote.command import parse_stat_line, signal_command
from vsperf.remote.connection import HostLostError
from vsperf.remote.ssh import SshExecutor
from vsperf.testbed.journal import PortJournal, leftover_journals
from vsperf.testbed.model import Cable, Testbed
from vsperf.testbed.pci import ExecutorSysFs, bind, check_bindable, interfaces_of, read_binding, restore_binding
from vsperf.testbed.ports import PortError, PortState, check_cable, check_port, prepare_port, restore_port
from vsperf.testbed.qdisc import ADDED_QDISCS, check_port_qdiscs, remove_added_qdisc

log = logging.getLogger(__name__)


@dataclass
class TestbedSession:
    """Executors of a testbed's hosts and the run's port journal."""

    __test__ = False

    testbed: Testbed
    executors: dict[str, Executor]
    journal: PortJournal
    checked: dict[tuple[str, str], PortState] = field(default_factory=dict)  # (host, ifname) -> state
    # (generator host, ifname) -> the port's root qdisc as the preflight found it ("": none)
    root_qdiscs: dict[tuple[str, str], str] = field(default_factory=dict)

    @classmethod
    def open(cls, testbed: Testbed, *, run_id: str, state_root: Path, command_log: CommandLog,
             dut_ports: bool = True) -> TestbedSession:
        """Connect to every host, restore a killed run's ports, check every port (with
        `dut_ports` False only the generator's: --mode trafficgen, where the DUT is the user's)."""
        executors: dict[str, Executor] = {}
        session = cls(testbed, executors, PortJournal.create(state_root, run_id))
        try:
            remote: list[SshExecutor] = []
            for host in testbed.hosts:
                if host.ssh is None:
                    executors[host.name] = LocalExecutor(command_log)
                else:
                    ssh = SshExecutor(host.ssh, command_log)
                    executors[host.name] = ssh
                    remote.append(ssh)
            # The hosts' handshakes at once; the first failing host, in file order, is the error.
            with ThreadPoolExecutor(max_workers=max(len(remote), 1)) as pool:
                for connecting in [pool.submit(ssh.connect) for ssh in remote]:
                    connecting.result()
            for restored in session.restore_leftovers(state_root):
                log.warning("restored after a killed run: %s", restored)
            for cable in testbed.cables:
                session._check(cable, dut_port=dut_ports)
        except BaseException:
            session.close_connections()
            raise
        return session

    @property
    def dut(self) -> Executor:
        """The DUT host's executor (vswitch, VNFs, collectors, load generators)."""
        return self.executors[self.testbed.dut_host]

    @property
    def trafficgen(self) -> Executor:
        """The traffic generator host's executor."""
        return self.executors[self.testbed.trafficgen_host]

    def _check(self, cable: Cable, *, dut_port: bool = True) -> None:
        dut_host = self.testbed.dut_host
        port = cable.dut
        if not dut_port:
            pass  # the user's DUT: its ports are not vsperf's to check
        elif port.driver == "kernel":
            assert port.interface is not None  # the loader requires it for kernel ports
            self.checked[(dut_host, port.interface)] = check_port(self.dut, port.interface)
        else:
            assert port.pci is not None
            binding = read_binding(ExecutorSysFs(self.dut), port.pci)
            check_bindable(ExecutorSysFs(self.dut), binding, port.driver)
            in_use = [i for i in interfaces_of(ExecutorSysFs(self.dut), port.pci)
                      if check_port(self.dut, i).addresses]
            if in_use:
                raise PortError(f"host {dut_host}: PCI device {port.pci} is interface {in_use[0]}, which has "
                                f"addresses (in use by the host?); refusing to take it for DPDK")
            log.debug("host %s: PCI %s bound to %s", dut_host, port.pci, binding.driver)
        gen = cable.trafficgen
        if gen.interface is not None:
            gen_state = check_port(self.trafficgen, gen.interface)
            self.checked[(self.testbed.trafficgen_host, gen.interface)] = gen_state
            try:  # the generator may replace its root qdisc and add a clsact (vsperf.testbed.qdisc)
                self.root_qdiscs[(self.testbed.trafficgen_host, gen.interface)] = check_port_qdiscs(
                    self.trafficgen, gen.interface)
            except CommandError as exc:  # no tc there: the generator's tools check names it
                log.warning("host %s: qdiscs of %s not checked: %s", self.testbed.trafficgen_host, gen.interface, exc)
            if port.interface is not None and (dut_host, port.interface) in self.checked:
                check_cable(dut_host, self.checked[(dut_host, port.interface)], self.testbed.trafficgen_host,
                            gen_state)

    def ports(self) -> Iterator[tuple[str, PortState]]:
        """(host, original state) of every kernel interface of the testbed."""
        for (host, _ifname), state in self.checked.items():
            yield host, state

    def use_port(self, host: str, interface: str, *, mtu_bytes: int | None = None) -> None:
        """Record the port's state, then bring it up (with `mtu_bytes`) for the test."""
        state = self.checked[(host, interface)]
        self.journal.record_port(host, state)
        prepare_port(self.executors[host], state, mtu_bytes=mtu_bytes)

    def bind_dpdk(self, pci: str, driver: str) -> None:
        """Record device `pci`'s binding on the DUT host, then bind it to `driver`."""
        fs = ExecutorSysFs(self.dut)
        self.journal.record_binding(self.testbed.dut_host, read_binding(fs, pci))
        bind(fs, pci, driver)

    def set_knob(self, host: str, path: str, value: str) -> None:
        """Record a kernel setting of `host` (a sysfs/procfs file), then write `value` to it."""
        fs = ExecutorSysFs(self.executors[host])
        original = fs.read(PurePosixPath(path))
        if original is None:
            raise PortError(f"host {host}: cannot read {path}")
        self.journal.record_knob(host, path, original)
        fs.write(PurePosixPath(path), value)

    def reserve_hugepages(self, pages: int, *, page_kb: int = 2048) -> None:
        """At least `pages` free hugepages of `page_kb` on the DUT host (for DPDK): nr_hugepages
        is raised by the missing number (recorded first, restored after); PortError when the
        kernel could not allocate them all."""
        host, fs = self.testbed.dut_host, ExecutorSysFs(self.dut)
        base = PurePosixPath(f"/sys/kernel/mm/hugepages/hugepages-{page_kb}kB")
        total, free = fs.read(base / "nr_hugepages"), fs.read(base / "free_hugepages")
        if not (total or "").isdigit() or not (free or "").isdigit():
            raise PortError(f"host {host}: cannot read {base}/nr_hugepages and free_hugepages")
        missing = pages - int(str(free))
        if missing <= 0:
            return
        wanted = int(str(total)) + missing
        self.set_knob(host, str(base / "nr_hugepages"), str(wanted))
        got = fs.read(base / "nr_hugepages")
        if got != str(wanted):
            raise PortError(f"host {host}: asked for {wanted} hugepages of {page_kb} kB, the kernel gave {got} "
                            f"(not enough free memory in one piece); lower HUGEPAGE_RAM_ALLOCATION")

    def restore(self) -> list[str]:
        """Put every recorded port and device back; returns what was changed back."""
        return self._restore(self.journal, self.executors)

    def reachable(self, host: str) -> bool:
        """False when `host` is an SSH host whose connection is gone."""
        return not _unreachable(self.executors.get(host))

    def adopt_daemon(self, host: str, pidfile: str, label: str) -> tuple[int, int | None]:
        """Record a daemon that `host` started detached (its pid file), by PID and start time:
        `restore` (or the next run) stops it if it still runs. Returns its PID and start time
        (clock ticks)."""
        executor = self.executors[host]
        pid_text = executor.run(["cat", pidfile], timeout_s=10).stdout.strip()
        stat = executor.run(["cat", f"/proc/{int(pid_text)}/stat"], timeout_s=10).stdout
        pid, ticks = parse_stat_line(stat)
        self.journal.record_process(host, pid, ticks or 0, label)
        return pid, ticks

    def record_qdisc(self, host: str, interface: str, qdisc: str) -> None:
        """Record that a qdisc is about to be added to port `interface` of `host` ("root": a pacer
        replacing its root qdisc, "clsact"): `restore`, or the next run after a SIGKILL, deletes it."""
        if qdisc not in ADDED_QDISCS:
            raise ValueError(f"qdisc {qdisc!r}: vsperf adds only {', '.join(ADDED_QDISCS)}")
        self.journal.record_qdisc(host, interface, qdisc, self.root_qdiscs.get((host, interface), "unknown"))

    def forget_daemon(self, host: str, pid: int) -> None:
        """A daemon recorded by `adopt_daemon` has stopped."""
        self.journal.forget_process(host, pid)

    def spawn(self, host: str, label: str, argv: Sequence[str], *, netns: str | None = None,
              env: Mapping[str, str] | None = None, stdout: StreamSpec = subprocess.DEVNULL,
              stderr: StreamSpec = subprocess.DEVNULL, stdin: int | None = None) -> Process:
        """Start a background process on `host` (`Executor.spawn`) and record it in the journal
        by PID and start time: `stop_process`, `restore` or the next run after a SIGKILL stops it."""
        executor = self.executors[host]
        proc = executor.spawn(argv, netns=netns, env=env, stdout=stdout, stderr=stderr, stdin=stdin)
        ticks = getattr(proc, "start_ticks", None)
        if ticks is None:  # a local process: its start time from /proc, as on a remote host
            stat = executor.run(["cat", f"/proc/{proc.pid}/stat"], check=False, timeout_s=10).stdout
            ticks = parse_stat_line(stat)[1] if stat.strip() else None
        self.journal.record_process(host, proc.pid, ticks or 0, label)
        return proc

    def stop_process(self, host: str, proc: Process, *, timeout_s: float = 5.0) -> int | None:
        """Stop a process of `spawn` by its PID (SIGTERM, SIGKILL after `timeout_s`) and forget it;
        returns its exit code (None when it cannot be known: the host is lost)."""
        code: int | None = None
        try:
            if proc.poll() is None:
                proc.terminate()
                try:
                    code = proc.wait(timeout_s)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    code = proc.wait(timeout_s)
            else:
                code = proc.returncode
        except HostLostError:
            return None  # the journal keeps it: the next run stops it
        self.journal.forget_process(host, proc.pid)
        return code

    @staticmethod
    def _restore(journal: PortJournal, executors: dict[str, Executor]) -> list[str]:
        done: list[str] = []
        # A host whose connection is gone gets one line, not one per item; the journal keeps its items.
        recorded = ({h for h, _ in journal.links} | {h for h, _ in journal.ports} | {h for h, _ in journal.bindings}
                    | {h for h, _, _ in journal.knobs} | {e[0] for e in journal.processes}
                    | {h for h, _ in journal.namespaces} | {e[0] for e in journal.qdiscs})
        lost = {h for h in recorded if _unreachable(executors.get(h))}
        for host in sorted(lost):
            log.warning("host %s: not restored: the host is unreachable (the next run restores it)", host)
        executors = {h: ex for h, ex in executors.items() if h not in lost}
        # Daemons first (a switch lets go of its ports), then namespaces (a VNF's: its veths go with
        # it), then created interfaces (deleting a bridge releases the ports enslaved to it).
        for host, pid, ticks, label in list(journal.processes):
            if host in executors:
                with _logged(f"host {host}: {label} (pid {pid})"):
                    argv = shlex.split(signal_command(pid, ticks or None, signal.SIGKILL))
                    executors[host].run(argv, check=False, timeout_s=10)
                    journal.forget_process(host, pid)
                    done.append(f"host {host}: {label} (pid {pid}) stopped")
        # Qdiscs once the process that may still add one (trafgen's receive agent) is gone.
        for host, interface, qdisc, _before in list(journal.qdiscs):
            if host in executors and qdisc in ADDED_QDISCS:
                with _logged(f"host {host}: {interface}: {qdisc} qdisc"):
                    what = remove_added_qdisc(executors[host], interface, "root" if qdisc == "root" else "clsact")
                    journal.forget_qdisc(host, interface, qdisc)
                    done += [f"host {host}: {interface}: {what}"] if what else []
        for host, name in list(journal.namespaces):
            if host in executors:
                with _logged(f"host {host}: namespace {name}"):
                    executors[host].run(["ip", "netns", "del", name], check=False, timeout_s=10)
                    journal.forget_netns(host, name)
                    done.append(f"host {host}: namespace {name} deleted")
        for host, name in list(journal.links):
            if host in executors:
                with _logged(f"host {host}: {name}"):
                    executors[host].run(["ip", "link", "del", "dev", name], check=False, timeout_s=10)
                    journal.forget_link(host, name)
                    done.append(f"host {host}: {name} deleted")
        for host, binding in list(journal.bindings):
            if host in executors:
                with _logged(f"host {host}: PCI {binding.pci}"):
                    if restore_binding(ExecutorSysFs(executors[host]), binding):
                        done.append(f"host {host}: PCI {binding.pci} back to {binding.driver}")
                    journal.forget_binding(host, binding.pci)
        for host, path, value in list(journal.knobs):
            if host in executors:
                with _logged(f"host {host}: {path}"):
                    ExecutorSysFs(executors[host]).write(PurePosixPath(path), value)
                    journal.forget_knob(host, path)
                    done.append(f"host {host}: {path} back to {value}")
        for host, state in list(journal.ports):
            if host in executors:
                with _logged(f"host {host}: {state.interface}"):
                    done += [f"host {host}: {state.interface}: {w}" for w in restore_port(executors[host], state)]
                    journal.forget_port(host, state.interface)
        return done

    def restore_leftovers(self, state_root: Path) -> list[str]:
        """Restore the ports of runs that were killed (journals whose owner is gone), and remove
        those runs' directories on the hosts (`host_run_dirs`, e.g. a copied generator engine)."""
        done: list[str] = []
        for journal in leftover_journals(state_root):
            done += self._restore(journal, self.executors)
            for host, executor in self.executors.items():
                if not _unreachable(executor):
                    with _logged(f"host {host}: directories of run {journal.run_id}"):
                        executor.run(host_run_dirs_removal(journal.run_id), check=False, timeout_s=30)
        return done

    def close_connections(self) -> None:
        """Close the SSH connections."""
        for executor in self.executors.values():
            if isinstance(executor, SshExecutor):
                executor.close()

    def close(self) -> list[str]:
        """Restore everything, then close the connections."""
        try:
            return self.restore()
        finally:
            self.close_connections()

    def __enter__(self) -> TestbedSession:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def host_run_dirs_removal(run_id: str) -> list[str]:
    """The command that removes run `run_id`'s directories on a host: /tmp/vsperf-RUNID-* (what a
    run puts on a testbed host lives there; the run id makes them that run's only) and the DPDK
    runtime directories /var/run/dpdk/vsperf-RUNID-* of its DPDK processes (file prefixes), and
    OVS-DPDK's, named like the lab's (`vsperf.vswitch.ovs_dpdk`: vspRUNIDo)."""
    return ["find", "/tmp", "/var/run/dpdk", "-maxdepth", "1", "(", "-name", f"vsperf-{run_id}-*", "-o", "-name",
            f"{LabNames(run_id).tag}o", ")", "-exec", "rm", "-rf", "--", "{}", "+"]


def _unreachable(executor: Executor | None) -> bool:
    """True for an SSH host whose connection is gone."""
    return isinstance(executor, SshExecutor) and not executor.alive()


@contextlib.contextmanager
def _logged(what: str) -> Iterator[None]:
    """Restoring goes on past one failure (a lost host): it is logged, the journal keeps it."""
    try:
        yield
    except VsperfError as exc:
        log.error("%s: not restored: %s (the next run tries again)", what, exc)
