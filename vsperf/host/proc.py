"""A process's identity on any host: its PID and its start time in clock ticks since boot.

A PID alone is not an identity (PIDs are reused), so every record carries the start time from
field 22 of /proc/PID/stat, and nothing is signalled unless both still match. The same line is
read on this machine (a file) and on an SSH host (`cat` through its executor): one parser.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class ProcStat:
    """The fields of one /proc/PID/stat line that identify a process and tell whether it runs."""

    pid: int
    state: str  # R, S, D, Z, ...
    threads: int
    start_ticks: int

    @property
    def running(self) -> bool:
        """False for a zombie whose last thread is gone. A process whose main thread exited while
        its other threads still run shows as a zombie too, and still holds what it owns (a DPDK
        daemon's runtime files, AF_XDP sockets): it counts as running until its last thread ends."""
        return not (self.state == "Z" and self.threads <= 1)


def parse_stat(line: str) -> ProcStat | None:
    """The identity fields of a /proc/PID/stat line (the name in field 2 may hold spaces and
    parentheses: fields after it are counted from its last ')'); None when malformed."""
    try:
        pid = int(line.split(None, 1)[0])
        rest = line.rsplit(")", 1)[1].split()
        return ProcStat(pid, rest[0], int(rest[17]), int(rest[19]))
    except (IndexError, ValueError):
        return None


def local_stat(pid: int) -> ProcStat | None:
    """/proc/PID/stat of this machine (None: no such process)."""
    try:
        with open(f"/proc/{int(pid)}/stat", encoding="ascii", errors="replace") as fh:
            return parse_stat(fh.read())
    except OSError:
        return None


def own_start_ticks() -> int:
    """This process's start time in clock ticks."""
    stat = local_stat(os.getpid())
    return stat.start_ticks if stat else 0


def same_local_process(pid: int, start_ticks: int) -> bool:
    """True when `pid` on this machine is still the process started at `start_ticks`, running."""
    stat = local_stat(pid)
    return stat is not None and stat.running and stat.start_ticks == start_ticks
