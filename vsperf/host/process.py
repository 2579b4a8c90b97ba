"""A process a run started (or adopted) on one of its hosts, known by PID and start time there.

`HostProcess` is the one handle for this machine and an SSH host: what it asks of the process
goes through the host's executor (its /proc/PID/stat, `tail` of its log, a signal to its group
checked against its start time) or through the executor's own handle of a process it started
(`popen`: a local child, or an SSH channel whose exit status is the process's).
"""

from __future__ import annotations

import shlex
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import IO

from vsperf.errors import CommandError, VsperfError
from vsperf.executor import Executor, Process
from vsperf.host.proc import ProcStat, parse_stat
from vsperf.remote.command import signal_command

_POLL_S = 0.05


def read_stat(executor: Executor, pid: int) -> ProcStat | None:
    """/proc/PID/stat of the executor's host (None: no such process, or the host did not answer)."""
    try:
        proc = executor.run(["cat", f"/proc/{int(pid)}/stat"], check=False, timeout_s=10.0)
    except VsperfError:
        return None
    return parse_stat(proc.stdout) if proc.returncode == 0 and proc.stdout.strip() else None


def send_signal(executor: Executor, pid: int, start_ticks: int | None, sig: int) -> None:
    """`sig` to process group `pid` on the executor's host, only while `pid` is still the process
    that started at `start_ticks` (a fixed script: the PID, time and signal are numbers)."""
    executor.run(shlex.split(signal_command(pid, start_ticks, sig)), check=False, timeout_s=10.0)


@dataclass
class HostProcess:
    """A background process on its host (`vsperf.host.Host.spawn` / `adopt`)."""

    label: str  # its name in messages ("ovs-vswitchd", "testpmd vnf0")
    pid: int  # on its host
    start_ticks: int | None  # its start time there (None: it ended before it could be read)
    executor: Executor  # its host's
    popen: Process | None = None  # the executor's handle, for a process it started (None: adopted)
    log_path: PurePosixPath | None = None  # its output, a file on its host

    @property
    def host(self) -> str:
        """`local`, or the testbed's name of its host."""
        return self.executor.host

    @property
    def stdin(self) -> IO[bytes] | None:
        """Its standard input, when it was started with pipes."""
        return self.popen.stdin if self.popen is not None else None

    @property
    def stdout(self) -> IO[bytes] | None:
        """Its standard output, when it was started with pipes."""
        return self.popen.stdout if self.popen is not None else None

    def alive(self) -> bool:
        """True while it runs (a child that exited is reaped here)."""
        if self.popen is not None:
            return self.popen.poll() is None
        stat = read_stat(self.executor, self.pid)
        return (stat is not None and stat.running
                and (self.start_ticks is None or stat.start_ticks == self.start_ticks))

    def returncode(self) -> int | None:
        """Its exit code once it has ended (None: running, or an adopted daemon's, unknown)."""
        return self.popen.poll() if self.popen is not None else None

    def wait(self, timeout_s: float) -> int | None:
        """Wait up to `timeout_s` for its end; its exit code (None: still running, or unknown)."""
        if self.popen is not None:
            try:
                return self.popen.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                return None
        deadline = time.monotonic() + timeout_s
        while self.alive() and time.monotonic() < deadline:
            time.sleep(_POLL_S)
        return None

    def signal(self, sig: int) -> None:
        """`sig` to its process group (it was started as a session leader: what it forked goes
        too), only while it is still the same process."""
        if self.popen is not None:
            self.popen.send_signal(sig)
        else:
            send_signal(self.executor, self.pid, self.start_ticks, sig)

    def interrupt(self) -> None:
        """SIGINT, as a terminal's Ctrl-C: programs such as trafgen then stop cleanly and report."""
        self.signal(signal.SIGINT)

    def terminate(self, timeout_s: float = 5.0) -> int | None:
        """SIGTERM, then SIGKILL after `timeout_s` if it still runs; its exit code when known."""
        if not self.alive():
            return self.returncode()
        self.signal(signal.SIGTERM)
        code = self.wait(timeout_s)
        if self.alive():
            self.signal(signal.SIGKILL)
            code = self.wait(timeout_s)
        return code

    def log_tail(self, lines: int = 5) -> str:
        """The last `lines` lines of its log, joined with " | " (for error messages)."""
        if self.log_path is None:
            return ""
        try:
            proc = self.executor.run(["tail", "-n", str(lines), str(self.log_path)], check=False, timeout_s=10.0)
        except CommandError:
            return ""
        return " | ".join(proc.stdout.strip().splitlines()) if proc.returncode == 0 else ""

    def read_log(self) -> str:
        """Its whole log ("" when there is none)."""
        if self.log_path is None:
            return ""
        proc = self.executor.run(["cat", "--", str(self.log_path)], check=False, timeout_s=20.0)
        return proc.stdout if proc.returncode == 0 else ""
