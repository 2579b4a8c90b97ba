"""Processes identified by PID + start time; stopped by PID only while they are the same."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from vsperf.errors import DeploymentError
from vsperf.executor import LocalExecutor
from vsperf.lab.process import (
    adopt_pidfile,
    is_same_process,
    process_start_time,
    read_pidfile,
    spawn_process,
    stop_pid,
)


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def test_stop_pid_stops_the_recorded_process() -> None:
    proc = _sleeper()
    start = process_start_time(proc.pid)
    assert start is not None and is_same_process(proc.pid, start)
    assert stop_pid(proc.pid, start, timeout_s=5)
    proc.wait(timeout=5)
    assert not is_same_process(proc.pid, start)


def test_a_reused_pid_is_never_signalled() -> None:
    proc = _sleeper()
    try:
        start = process_start_time(proc.pid)
        assert start is not None
        # Same PID, other start time: what a reused PID looks like.
        assert not is_same_process(proc.pid, start - 10)
        assert not stop_pid(proc.pid, start - 10)
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_gone_processes_report_false() -> None:
    proc = _sleeper()
    start = process_start_time(proc.pid) or 0.0
    proc.kill()
    proc.wait()
    assert not is_same_process(proc.pid, start)
    assert not stop_pid(proc.pid, start)


def test_spawned_process_logs_and_stops(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    argv = [sys.executable, "-c", "print('hello'); import time; time.sleep(60)"]
    proc = spawn_process(LocalExecutor(), "echoer", argv, log_path=log)
    deadline = time.monotonic() + 5
    while "hello" not in (log.read_text() if log.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.alive()
    assert proc.log_tail() == "hello"
    proc.stop()
    assert not proc.alive()
    assert proc.returncode() is not None


def test_adopt_reads_the_pidfile(tmp_path: Path) -> None:
    proc = _sleeper()
    try:
        pidfile = tmp_path / "d.pid"
        pidfile.write_text(f"{proc.pid}\n")
        adopted = adopt_pidfile("daemon", pidfile, timeout_s=1)
        assert adopted.pid == proc.pid and adopted.alive()
    finally:
        proc.kill()
        proc.wait()


def test_adopt_times_out_without_a_live_pid(tmp_path: Path) -> None:
    with pytest.raises(DeploymentError, match="did not write a live PID"):
        adopt_pidfile("daemon", tmp_path / "missing.pid", timeout_s=0.1)
    assert read_pidfile(tmp_path / "missing.pid") is None
