"""The report's worker processes: they ignore Ctrl-C (vsperf stops them), stop at once when asked,
and never outlive vsperf, not even a SIGKILLed one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from vsperf.report.pool import STOP_WAIT_S, WorkerPool, fork_context

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(fork_context() is None, reason="worker processes are forked: no fork here")


def _nap(seconds: float) -> str:
    time.sleep(seconds)
    return "rested"


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _wait_gone(pids: list[int], timeout_s: float) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not all(_gone(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if not _gone(p)]


def test_jobs_run_and_close_waits() -> None:
    context = fork_context()
    assert context is not None
    with WorkerPool(context, 2) as pool:
        futures = [pool.submit(_nap, 0.01) for _ in range(3)]
        assert [f.result() for f in futures] == ["rested"] * 3
        assert len(pool.pids) == 2
        pids = pool.pids
    assert _wait_gone(pids, 5) == []


def test_workers_ignore_ctrl_c_and_stop_at_once() -> None:
    context = fork_context()
    assert context is not None
    pool = WorkerPool(context, 2)
    try:
        future = pool.submit(_nap, 60)
        time.sleep(0.3)  # the job is running
        for pid in pool.pids:
            os.kill(pid, signal.SIGINT)  # a Ctrl-C reaches the whole group: workers leave it to vsperf
        time.sleep(0.3)
        assert all(not _gone(pid) for pid in pool.pids)
        started = time.monotonic()
    finally:
        pool.stop()
    assert time.monotonic() - started < STOP_WAIT_S  # SIGTERM ended the 60 s job, no SIGKILL needed
    assert _wait_gone(pool.pids, 1) == []
    assert future.done()


def test_workers_die_with_a_killed_parent(tmp_path: Path) -> None:
    script = (
        "import sys, time\n"
        "from vsperf.report.pool import WorkerPool, fork_context\n"
        "pool = WorkerPool(fork_context(), 2)\n"
        "pool.submit(time.sleep, 60)\n"
        "print(*pool.pids, flush=True)\n"
        "time.sleep(60)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    pids: list[int] = []
    try:
        assert proc.stdout is not None
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 2
        proc.kill()  # SIGKILL: no handler, no cleanup of its own
        proc.wait(10)
        assert _wait_gone(pids, 10) == []  # PR_SET_PDEATHSIG: the kernel ended them
    finally:
        proc.kill()
        proc.wait(10)
        for pid in pids:  # only when the test failed: stop what it started, by PID
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)
