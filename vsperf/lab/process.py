"""Processes the lab starts: launched or adopted, recorded with PID + start time, stopped by PID.

A PID alone is not an identity (PIDs are reused), so every record carries the process start
time and nothing is signalled unless both still match.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import psutil

from vsperf.errors import DeploymentError
from vsperf.executor import Executor, Process

# Start times from psutil are computed from clock ticks since boot: the same process always
# gives the same value, a different process started in another tick a different one.
_START_TIME_TOLERANCE_S = 0.02


def process_start_time(pid: int) -> float | None:
    """Start time of `pid` (seconds since the epoch), or None when no such process exists."""
    try:
        return float(psutil.Process(pid).create_time())
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return None


def is_same_process(pid: int, start_time: float) -> bool:
    """True when `pid` is still the process that started at `start_time` (and not a zombie).

    A process whose main thread exited before its other threads shows as a zombie while those
    threads still run and hold what it owns (a DPDK daemon's runtime files, AF_XDP sockets): it
    counts as alive until its last thread is gone, so that a restart never races it.
    """
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE and proc.num_threads() <= 1:
            return False
        return abs(proc.create_time() - start_time) <= _START_TIME_TOLERANCE_S
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return False


def stop_pid(pid: int, start_time: float, *, timeout_s: float = 5.0) -> bool:
    """Stop the process `pid` started at `start_time`, and its descendants.

    SIGTERM first, SIGKILL after `timeout_s`. Returns True when something was signalled;
    False when the process was already gone (or the PID now belongs to someone else).
    """
    if not is_same_process(pid, start_time):
        return False
    try:
        proc = psutil.Process(pid)
        # Helpers such as trafgen fork workers; they die with the parent only if it tells them.
        family = [*proc.children(recursive=True), proc]
    except psutil.NoSuchProcess:
        return False
    for p in family:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.send_signal(signal.SIGTERM)
    _gone, alive = psutil.wait_procs(family, timeout=timeout_s)
    for p in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
    psutil.wait_procs(alive, timeout=2.0)
    return True


@dataclass
class ManagedProcess:
    """A process of the lab: a child (`popen` set) or a daemon adopted from its pid file."""

    label: str  # "ovs-vswitchd", "trafgen g0", ...
    pid: int
    start_time: float
    popen: Process | None = None  # the executor's handle of a process it started
    log_path: Path | None = None

    def alive(self) -> bool:
        """True while the process runs (a child that exited is reaped here)."""
        if self.popen is not None and self.popen.poll() is not None:
            return False
        return is_same_process(self.pid, self.start_time)

    def returncode(self) -> int | None:
        """Exit code of a child that has exited, else None."""
        return self.popen.poll() if self.popen is not None else None

    def wait(self, timeout_s: float) -> int | None:
        """Wait for a child to exit; return its exit code, None on timeout or for daemons."""
        if self.popen is None:
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline and self.alive():
                time.sleep(0.02)
            return None
        try:
            return self.popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop the process (and its descendants) if it still runs; reap a child."""
        stop_pid(self.pid, self.start_time, timeout_s=timeout_s)
        if self.popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=timeout_s)

    def interrupt(self) -> None:
        """Send SIGINT to the process's group (it was started in a session of its own), as a
        terminal's Ctrl-C would: programs such as trafgen then stop cleanly and report."""
        if not self.alive():
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if os.getpgid(self.pid) == self.pid:
                os.killpg(self.pid, signal.SIGINT)
            else:
                os.kill(self.pid, signal.SIGINT)

    def log_tail(self, lines: int = 5) -> str:
        """The last lines of the process's log file, for error messages."""
        if self.log_path is None:
            return ""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return " | ".join(text.strip().splitlines()[-lines:])


class SpawnOptions(TypedDict, total=False):
    """The keyword options of `spawn_process`, for callers that pass them through."""

    netns: str | None
    env: Mapping[str, str] | None
    log_path: Path | None
    console: bool


def spawn_process(
    executor: Executor,
    label: str,
    argv: Sequence[str],
    *,
    netns: str | None = None,
    env: Mapping[str, str] | None = None,
    log_path: Path | None = None,
    console: bool = False,
) -> ManagedProcess:
    """Start `argv` in the background (inside `netns`), output to `log_path`.

    `console`: its stdin and stdout are pipes to vsperf (`popen.stdin`, `popen.stdout`: a serial
    console on QEMU's stdio), only its stderr goes to `log_path`.
    `ip netns exec` execs the command in place, so the PID is the command's own.
    """
    pipe = subprocess.PIPE if console else None
    if log_path is not None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("ab") as out:
            popen = executor.spawn(argv, netns=netns, env=env, stdout=pipe or out,
                                   stderr=out if console else subprocess.STDOUT, stdin=pipe)
    else:
        popen = executor.spawn(argv, netns=netns, env=env, stdout=pipe or subprocess.DEVNULL, stdin=pipe)
    start = process_start_time(popen.pid)
    if start is None:
        # Exited already: remember it anyway so that its exit code and log explain why.
        start = 0.0
    return ManagedProcess(label, popen.pid, start, popen=popen, log_path=log_path)


def read_pidfile(path: Path) -> int | None:
    """The PID in a pid file, or None when it does not exist (yet) or is malformed."""
    try:
        return int(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None


def adopt_pidfile(
    label: str, pidfile: Path, *, timeout_s: float = 10.0, log_path: Path | None = None
) -> ManagedProcess:
    """A daemon that detached itself, identified by its pid file (waits for the file)."""
    deadline = time.monotonic() + timeout_s
    while True:
        pid = read_pidfile(pidfile)
        if pid is not None:
            start = process_start_time(pid)
            if start is not None:
                return ManagedProcess(label, pid, start, log_path=log_path)
        if time.monotonic() >= deadline:
            raise DeploymentError(f"{label} did not write a live PID to {pidfile} within {timeout_s:g} s")
        time.sleep(0.02)


def pid_exists(pid: int) -> bool:
    """True when some process has PID `pid` (whoever it is)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
