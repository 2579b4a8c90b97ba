"""The process table and the kernel facts of a testbed host, read through its executor.

psutil reads only this machine. On a testbed the pidstat collector reads the DUT host's: its
process table with one `ps` command (PID, parent, owner, name: what psutil gives locally), its
clock tick and page size with `getconf`, its memory with /proc/meminfo. Each reading is one
command, logged in commands.log like every other.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from vsperf.executor import Executor

log = logging.getLogger(__name__)

PS_ARGV = ("ps", "-e", "-o", "pid=,ppid=,uid=,comm=")
# The kernel keeps 15 characters of a process name (TASK_COMM_LEN 16, with the NUL).
COMM_LEN = 15


@dataclass(frozen=True)
class PsRow:
    """One process of `ps -e -o pid=,ppid=,uid=,comm=`."""

    pid: int
    ppid: int
    uid: int
    name: str  # the kernel's process name (at most COMM_LEN characters)


def parse_ps(text: str) -> list[PsRow]:
    """The rows of PS_ARGV's output (a name may hold spaces: it is the rest of the line)."""
    rows = []
    for line in text.splitlines():
        words = line.split(None, 3)
        if len(words) == 4 and all(w.isdigit() for w in words[:3]):
            rows.append(PsRow(int(words[0]), int(words[1]), int(words[2]), words[3].strip()))
    return rows


def select_processes(rows: list[PsRow], pids: Mapping[str, int], names: tuple[str, ...]) -> list[tuple[str, int]]:
    """(name, PID) to watch, as `pidstat.find_processes` chooses them locally: `pids` with their
    descendants, then the processes named like `names`."""
    children: dict[int, list[PsRow]] = {}
    by_pid = {row.pid: row for row in rows}
    for row in rows:
        children.setdefault(row.ppid, []).append(row)
    found: dict[int, str] = {}
    for name, pid in pids.items():
        if pid not in by_pid:
            log.warning("pidstat: %s (PID %d) is not running", name, pid)
            continue
        found.setdefault(pid, name)
        todo = list(children.get(pid, []))
        while todo:
            child = todo.pop()
            if child.pid not in found:
                found[child.pid] = child.name
                todo += children.get(child.pid, [])
    wanted = {n[:COMM_LEN]: n for n in names}
    for row in rows:
        if row.pid not in found and row.name in wanted:
            found[row.pid] = wanted[row.name]
    for name in sorted(set(names) - set(found.values())):
        log.warning("pidstat: no process named %s (COLLECTOR_PROCESSES) is running", name)
    return [(name, pid) for pid, name in found.items()]


@dataclass(frozen=True)
class HostFacts:
    """What pidstat's columns need of the host the processes run on."""

    clk_tck: int  # clock ticks per second of /proc/PID/stat's times
    page_size_bytes: int
    mem_total_kb: int


def mem_total_kb(meminfo: str) -> int:
    """MemTotal of /proc/meminfo (0 when absent)."""
    for line in meminfo.splitlines():
        key, _, value = line.partition(":")
        if key == "MemTotal":
            return int(value.split()[0])
    return 0


def host_facts(executor: Executor) -> HostFacts:
    """The clock tick, page size and memory of the executor's host."""
    tick = executor.run(["getconf", "CLK_TCK"], timeout_s=10).stdout.strip()
    page = executor.run(["getconf", "PAGESIZE"], timeout_s=10).stdout.strip()
    meminfo = executor.run(["cat", "/proc/meminfo"], timeout_s=10).stdout
    return HostFacts(int(tick), int(page), mem_total_kb(meminfo))


def host_processes(executor: Executor, pids: Mapping[str, int], names: tuple[str, ...]) -> tuple[
        list[tuple[str, int]], dict[int, int]]:
    """(name, PID) of the processes to watch on the executor's host, and each one's owner (UID)."""
    rows = parse_ps(executor.run(list(PS_ARGV), timeout_s=10).stdout)
    uids = {row.pid: row.uid for row in rows}
    return select_processes(rows, pids, names), uids
