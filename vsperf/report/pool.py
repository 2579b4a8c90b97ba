"""Worker processes of the report that never outlive vsperf and never print a traceback of their own.

A `WorkerPool` is a ProcessPoolExecutor of forked processes, each of which, before it runs a job:
- ignores SIGINT: a Ctrl-C reaches the whole process group, and vsperf stops its workers itself
  (a worker's own KeyboardInterrupt printed a traceback in 3 of 13 tries);
- dies at once of SIGTERM and SIGHUP (default dispositions, not vsperf's handlers);
- asks the kernel for SIGTERM when its parent dies (PR_SET_PDEATHSIG), so a vsperf killed outright
  (SIGKILL, or SIGTERM outside any handler) takes its workers with it; a PDF worker's own helpers
  get the same from it.
The processes are forked with the stop signals blocked (vsperf.signals.signals_blocked), so none
can run vsperf's handler in the child before those dispositions are set.

`stop()` ends the workers at once (SIGTERM, then SIGKILL after STOP_WAIT_S) and waits for them:
the path of an interrupted report. `close()` is the normal end: running jobs finish.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing.context import BaseContext
from types import TracebackType
from typing import Any, TypeVar

from vsperf.signals import STOP_SIGNALS, signals_blocked

T = TypeVar("T")
STOP_WAIT_S = 5.0  # a worker that outlives SIGTERM this long is killed
_PR_SET_PDEATHSIG = 1


def fork_context() -> BaseContext | None:
    """The fork start method, or None where the platform has none (render serially there)."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    return multiprocessing.get_context("fork")


def _die_with_parent() -> None:
    with contextlib.suppress(OSError, AttributeError):  # not Linux: the parent's stop() still ends it
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _worker_start(parent_pid: int) -> None:
    """First thing in every worker process (its signals are still blocked from the fork)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    _die_with_parent()
    if os.getppid() != parent_pid:  # the parent died before the kernel was told
        os._exit(1)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


class WorkerPool:
    """`processes` forked workers that stop with vsperf (see the module's doc)."""

    def __init__(self, context: BaseContext, processes: int) -> None:
        self._pool = ProcessPoolExecutor(processes, mp_context=context, initializer=_worker_start,
                                         initargs=(os.getpid(),))
        self._processes: list[multiprocessing.process.BaseProcess] = []
        self._started = False

    def submit(self, job: Callable[..., T], *args: Any) -> Future[T]:
        """Run `job(*args)` on a worker. The first call forks every worker (fork pools start them
        all at once), with the stop signals blocked: one that comes meanwhile is delivered after."""
        if self._started:
            return self._pool.submit(job, *args)
        with signals_blocked():
            before = set(multiprocessing.active_children())
            future = self._pool.submit(job, *args)
            self._processes = [p for p in multiprocessing.active_children() if p not in before]
            self._started = True
        return future

    @property
    def pids(self) -> list[int]:
        """The workers' PIDs (none before the first submit)."""
        return [p.pid for p in self._processes if p.pid is not None]

    def close(self) -> None:
        """The normal end: let running jobs finish, drop queued ones, wait for the workers."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def stop(self) -> None:
        """End the workers now (SIGTERM, SIGKILL after STOP_WAIT_S) and wait for them to be gone."""
        for process in self._processes:
            with contextlib.suppress(OSError, ValueError):
                process.terminate()
        for process in self._processes:
            process.join(STOP_WAIT_S)
            if process.is_alive():
                with contextlib.suppress(OSError, ValueError):
                    process.kill()
                process.join()
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is None:
            self.close()
        else:
            self.stop()
