"""vsperf's end of the TRex client worker: start it, send typed requests, read typed answers.

The worker (vsperf.trafficgen.trex.worker) runs on this machine, in a process of its own,
started through the run's executor (commands.log) with its standard error in a log file. Each
request waits for its answer at most a timeout, and meanwhile calls `alive` (the server's
check) every POLL_S: a server that dies mid-trial ends the wait at once with its own error.
`stop` closes the session, then stops the worker by its PID.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import vsperf
from vsperf.errors import PrerequisiteError, TrafficGenError
from vsperf.executor import Executor, Process
from vsperf.trafficgen.trex.protocol import (
    PROTOCOL_VERSION,
    Answer,
    Close,
    Closed,
    Failure,
    ProtocolError,
    Ready,
    Request,
    decode_answer,
    encode,
)

log = logging.getLogger(__name__)

WORKER_MODULE = "vsperf.trafficgen.trex.worker"
POLL_S = 0.2
_STOP_TIMEOUT_S = 5.0
A = TypeVar("A")


class WorkerFailure(TrafficGenError):
    """The worker answered a request with a Failure (`kind` as the protocol names it)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.kind = failure.kind


def worker_argv(python: str, client_path: str) -> list[str]:
    """The worker's command line: `python -m vsperf.trafficgen.trex.worker`."""
    argv = [python or sys.executable, "-m", WORKER_MODULE]
    return [*argv, "--client-path", client_path] if client_path else argv


def worker_env(python: str) -> dict[str, str] | None:
    """Another Python than vsperf's own finds vsperf's package through PYTHONPATH."""
    if not python:
        return None
    root = str(Path(vsperf.__file__).resolve().parent.parent)
    return {"PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)}


class TrexWorker:
    """One worker process and its request/answer lines."""

    def __init__(self, executor: Executor, log_path: Path, *, python: str = "", client_path: str = "") -> None:
        self.executor = executor
        self.log_path = log_path
        self.python = python
        self.client_path = client_path
        self.proc: Process | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()

    def spawn(self) -> None:
        """Start the worker (it imports TRex's client meanwhile: `ready` waits for it)."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as err:
            self.proc = self.executor.spawn(worker_argv(self.python, self.client_path), env=worker_env(self.python),
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        threading.Thread(target=self._read, args=(self.proc,), name="trex worker", daemon=True).start()

    def ready(self, timeout_s: float) -> Ready:
        """Wait for the Ready line of the worker `spawn` started. PrerequisiteError when it cannot
        import TRex's client; TrafficGenError when it does not start."""
        if self.proc is None:
            raise TrafficGenError("the TRex client worker was not started")
        try:
            first = self._answer(timeout_s, None, "start")
        except TrafficGenError as exc:
            raise TrafficGenError(f"the TRex client worker did not start: {exc}") from exc
        if isinstance(first, Failure):
            hint = ("pip install 'vsperf[trex]'" if not self.client_path
                    else "set TRAFFICGEN_TREX_CLIENT_PATH to a TRex tree's automation/trex_control_plane/interactive")
            raise PrerequisiteError(f"{first.message}: {hint}")
        if not isinstance(first, Ready) or first.protocol != PROTOCOL_VERSION:
            raise TrafficGenError(f"the TRex client worker speaks another protocol: {first}")
        log.debug("TRex client worker started (pid %d, Python %s)", self.proc.pid, first.python)
        return first

    def _read(self, proc: Process) -> None:
        stdout = proc.stdout
        if stdout is None:
            return
        for raw in stdout:
            self._lines.put(raw.decode("utf-8", errors="replace"))
        self._lines.put(None)  # end of output: the worker exited

    def _answer(self, timeout_s: float, alive: Callable[[], None] | None, what: str) -> Answer | Ready:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                line = self._lines.get(timeout=POLL_S)
            except queue.Empty:
                line = ""
            if line == "":
                if alive is not None:
                    alive()
                if time.monotonic() > deadline:
                    raise TrafficGenError(f"no answer from the TRex client worker to {what} within {timeout_s:g} s")
                continue
            if line is None:
                code = self.proc.poll() if self.proc else None
                raise TrafficGenError(f"the TRex client worker exited (code {code}) during {what}: {self._tail()}")
            try:
                return decode_answer(line)
            except ProtocolError as exc:
                raise TrafficGenError(f"the TRex client worker answered {what} with {exc}") from exc

    def call(self, request: Request, answer_type: type[A], timeout_s: float,
             alive: Callable[[], None] | None = None) -> A:
        """Send `request`, return its answer (of `answer_type`). WorkerFailure when the worker
        reports a failure; TrafficGenError when it does not answer in `timeout_s` or exits;
        whatever `alive` raises while waiting."""
        self.send(request)
        return self.answer(request.op, answer_type, timeout_s, alive)

    def send(self, request: Request) -> None:
        """Write `request` (its answers: `answer`, once per line the request gets)."""
        proc = self.proc
        if proc is None or proc.stdin is None:
            raise TrafficGenError("the TRex client worker is not running")
        try:
            proc.stdin.write((encode(request) + "\n").encode("utf-8"))
            proc.stdin.flush()
        except OSError as exc:
            raise TrafficGenError(f"the TRex client worker exited: {self._tail()}") from exc

    def answer(self, what: str, answer_type: type[A], timeout_s: float, alive: Callable[[], None] | None = None) -> A:
        """The worker's next answer line to request `what`, of `answer_type` (see `call`)."""
        answer = self._answer(timeout_s, alive, what)
        if isinstance(answer, Failure):
            raise WorkerFailure(answer)
        if not isinstance(answer, answer_type):
            raise TrafficGenError(f"the TRex client worker answered {what} with {type(answer).__name__}")
        return answer

    def stop(self) -> None:
        """Close the session (best effort), then stop the worker by its PID. Safe to call twice."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None and proc.stdin is not None:
            self.proc = proc
            with contextlib.suppress(TrafficGenError):
                self.call(Close(), Closed, _STOP_TIMEOUT_S)
            self.proc = None
            with contextlib.suppress(OSError):
                proc.stdin.close()
        try:
            proc.wait(_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(_STOP_TIMEOUT_S)

    def _tail(self, lines: int = 3) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return " | ".join(text.strip().splitlines()[-lines:])
