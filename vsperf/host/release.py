"""Putting hosts back: the one code path for teardown and for what a killed run left behind.

`release` goes through a journal's entries in a fixed order of kinds, newest first within each:
processes (a switch lets go of its ports), qdiscs (once the program that may add one is gone),
namespaces (a VNF's: its veths go with it), links (deleting a bridge releases its ports), PCI
bindings, kernel settings, ports, directories. Each entry is handled through the executor of its
host; the entry is forgotten once done. What cannot be done stays in the journal for the next
run: a host that does not answer (one warning per host), a command that failed (one error line).
What is gone for good (a namespace, an interface or a PCI device the user removed since, a
kernel setting the kernel no longer has) is dropped, with one warning where the user should know:
an entry whose undo fails is kept only while its object is still there (`gone`), so that no later
run retries it forever. Only what a journal names is touched, and only when its name
is one this run makes (or, for a process, while its PID and start time still match).
"""

from __future__ import annotations

import logging
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from vsperf.errors import VsperfError
from vsperf.executor import Executor
from vsperf.host.journal import Entry, Journal
from vsperf.host.names import RunNames
from vsperf.host.network import delete_link, delete_netns
from vsperf.host.pci import PCI_DEVICES, ExecutorSysFs, PciBinding, restore_binding
from vsperf.host.ports import PortState, restore_port
from vsperf.host.process import read_stat, send_signal
from vsperf.host.qdisc import ADDED_QDISCS, remove_added_qdisc

log = logging.getLogger(__name__)

PHASES = ("process", "qdisc", "netns", "link", "binding", "knob", "port", "dir")
# Interfaces a run records without its tag: the userspace datapath's own interface, which a
# killed ovs-vswitchd leaves in the host's namespace (recorded only when the run made it).
UNTAGGED_LINKS = ("ovs-netdev",)
_TERM_WAIT_S = 2.0
_POLL_S = 0.05


@dataclass
class Released:
    """What a release did: one line per thing removed or put back, one per failure."""

    done: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lost_hosts: list[str] = field(default_factory=list)


def reachable(executor: Executor | None) -> bool:
    """False for a host without an executor here, or an SSH host whose connection is gone."""
    if executor is None:
        return False
    alive = getattr(executor, "alive", None)
    return bool(alive()) if callable(alive) else True


def safe_to_release(entry: Entry, names: RunNames) -> bool:
    """Refuse anything a journal could name by mistake (or by tampering) but no run creates."""
    if entry.kind in ("netns", "link"):
        return names.owns(entry.name) or (entry.kind == "link" and entry.name in UNTAGGED_LINKS)
    if entry.kind == "dir":
        return names.owns_path(entry.name)
    if entry.kind == "process":
        return entry.pid > 1 and entry.start_ticks > 0
    return True  # port, binding, knob, qdisc: put back what was there before


def stop_recorded(executor: Executor, pid: int, start_ticks: int) -> bool:
    """Stop process `pid` (and its group) if it is still the recorded one: SIGTERM, SIGKILL after
    a moment. True when it was running."""
    stat = read_stat(executor, pid)
    if stat is None or stat.start_ticks != start_ticks or not stat.running:
        return False
    send_signal(executor, pid, start_ticks, signal.SIGTERM)
    deadline = time.monotonic() + _TERM_WAIT_S
    while time.monotonic() < deadline:
        stat = read_stat(executor, pid)
        if stat is None or stat.start_ticks != start_ticks or not stat.running:
            return True
        time.sleep(_POLL_S)
    send_signal(executor, pid, start_ticks, signal.SIGKILL)
    return True


def _remove_dir(executor: Executor, path: str) -> bool:
    if executor.run(["test", "-e", path], check=False, timeout_s=10.0).returncode != 0:
        return False
    executor.run(["rm", "-rf", "--", path], timeout_s=60.0)
    return True


def _restore_port(executor: Executor, entry: Entry) -> str | None:
    changed = restore_port(executor, PortState.from_dict(dict(entry.state)))
    return f"{entry.describe()}: {', '.join(changed)}" if changed else None


# What `ip` says of an interface, or of its namespace, that is not there.
_NO_LINK = ("does not exist", "Cannot find device", "Cannot open network namespace")


def gone(entry: Entry, executor: Executor) -> bool:
    """True when the object `entry` changed is no longer on its host, so that nothing can ever be
    put back: an interface (a port, or the port of a qdisc) or its namespace deleted, a PCI
    device removed, a kernel setting's file absent. False when it is there, or when this cannot
    be told (the question failed: the entry is kept)."""
    try:
        if entry.kind in ("port", "qdisc"):
            where = ("-n", entry.netns) if entry.netns and entry.kind == "qdisc" else ()
            proc = executor.run(["ip", *where, "-j", "link", "show", "dev", entry.name], check=False, timeout_s=10.0)
            return proc.returncode != 0 and any(s in proc.stderr for s in _NO_LINK)
        if entry.kind in ("binding", "knob"):
            path = str(PCI_DEVICES / entry.name) if entry.kind == "binding" else entry.name
            return executor.run(["test", "-e", path], check=False, timeout_s=10.0).returncode == 1
    except VsperfError:
        return False
    return False  # a process, namespace, link or directory that is gone is no error: see _undo


def _undo(entry: Entry, executor: Executor) -> str | None:
    """Remove or put back what `entry` records; a description, or None when nothing was left."""
    kind = entry.kind
    if kind == "process":
        return f"{entry.describe()} stopped" if stop_recorded(executor, entry.pid, entry.start_ticks) else None
    if kind == "qdisc":
        qdisc = str(entry.state.get("qdisc", ""))
        if qdisc not in ADDED_QDISCS:
            return None
        what = remove_added_qdisc(executor, entry.name, "root" if qdisc == "root" else "clsact", entry.netns)
        where = "" if entry.host == "local" else f"host {entry.host}: "
        return f"{where}{entry.name}: {what}" if what else None  # what names the qdisc already
    if kind == "netns":
        return f"{entry.describe()} deleted" if delete_netns(executor, entry.name) else None
    if kind == "link":
        return f"{entry.describe()} deleted" if delete_link(executor, entry.name, entry.netns) else None
    if kind == "binding":
        binding = PciBinding(**dict(entry.state))
        done = restore_binding(ExecutorSysFs(executor), binding)
        return f"{entry.describe()} back to {binding.driver}" if done else None
    if kind == "knob":
        value = str(entry.state.get("value", ""))
        ExecutorSysFs(executor).write(PurePosixPath(entry.name), value)
        return f"{entry.describe()} back to {value}"
    if kind == "port":
        return _restore_port(executor, entry)
    return f"{entry.describe()} removed" if _remove_dir(executor, entry.name) else None


def release(journal: Journal, executors: Mapping[str, Executor], *,
            hosts: Callable[[str], bool] | None = None) -> Released:
    """Undo every entry of `journal` whose host has an executor in `executors` (and, with
    `hosts`, for which it answers True), in the order of `PHASES`, newest first within a kind."""
    out = Released()
    names = RunNames(journal.run_id)
    wanted = {h for h in journal.hosts() if hosts is None or hosts(h)}
    out.lost_hosts = sorted(h for h in wanted if not reachable(executors.get(h)))
    for host in out.lost_hosts:
        if host in executors:
            log.warning("host %s: not restored: the host is unreachable (the next run restores it)", host)
        else:  # e.g. a testbed run's leftovers seen by a run of the local lab: not a lost host
            log.warning("host %s: not restored: not a host of this run (the next run with it restores it)", host)
    usable = wanted - set(out.lost_hosts)
    for kind in PHASES:
        for entry in reversed([e for e in journal.entries() if e.kind == kind and e.host in usable]):
            if not safe_to_release(entry, names):
                log.warning("not touching %s: not something run %s creates", entry.describe(), journal.run_id)
                journal.forget(entry)
                continue
            try:
                what = _undo(entry, executors[entry.host])
            except VsperfError as exc:
                if gone(entry, executors[entry.host]):
                    log.warning("%s is gone: not restored, and forgotten (vsperf will not look for it again)",
                                entry.describe())
                    journal.forget(entry)
                    continue
                out.errors.append(f"{entry.describe()}: {exc}")
                log.error("%s: not restored: %s (the next run tries again)", entry.describe(), exc)
                continue
            journal.forget(entry)
            if what:
                out.done.append(what)
    return out
