"""A running vsgen engine session: launch, commands, runs, shutdown.

The engine reads commands from its standard input and writes JSON events on its standard output,
which a reader thread turns into a queue: pipes to vsperf on this machine, the SSH channel on a
testbed's generator host. It is started through its host (`vsperf.host.Host.spawn`: in the
command log and the run's journal) and stopped by its PID and start time; it also exits when its
input ends (vsperf gone, the connection lost), and dies with vsperf on this machine
(PR_SET_PDEATHSIG). Its XDP programs are held by bpf_links that the kernel releases with the
process, whatever ends it.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import IO, Any

from vsperf.errors import DeploymentError, PrerequisiteError, TrafficGenError
from vsperf.host.host import Host
from vsperf.host.process import HostProcess
from vsperf.trafficgen.vsgen.protocol import RunRequest, RunResult, Tick, parse_event, parse_result, parse_tick

log = logging.getLogger(__name__)

_START_TIMEOUT_S = 10.0
_COMMAND_TIMEOUT_S = 30.0
_QUIT_TIMEOUT_S = 5.0
_IDLE_MARGIN_S = 15.0  # a run may stay silent this long beyond its residual wait and tick
_EOF: dict[str, Any] = {"ev": "__eof__"}
_CANNOT_RUN_CODES = (126, 127)  # the shell's exit when the program is not executable / not found


class EngineError(TrafficGenError):
    """The engine refused a command or failed; the message is its one-line explanation."""


class Engine:
    """One engine process and its session (ports and directions stay defined until `close`)."""

    def __init__(self, host: Host, binary: PurePosixPath) -> None:
        self.hello: dict[str, Any] = {}  # the engine's hello event, once started
        self.host = host
        self.binary = binary
        self._proc: HostProcess | None = None
        self._ctl: IO[bytes] | None = None
        self._events: queue.Queue[dict[str, Any]] = queue.Queue()
        self._reader: threading.Thread | None = None
        self._running = False

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> dict[str, Any]:
        """Launch the engine on its host; return its hello event (version, run tag, kernel)."""
        try:
            proc = self.host.spawn("vsgen-engine", [str(self.binary)], pipes=True,
                                   log_path=self.host.log_path("vsgen-engine.log"))
        except DeploymentError as exc:
            raise PrerequisiteError(f"cannot start the vsgen engine{self.host.on}: {exc}") from exc
        self._proc = proc
        if proc.stdout is None or proc.stdin is None:
            self.close()
            raise TrafficGenError("the vsgen engine started without its pipes")
        self._ctl = proc.stdin
        self._reader = threading.Thread(target=self._read, args=(proc.stdout,), name="vsgen-reader", daemon=True)
        self._reader.start()
        try:
            self.hello = self._expect("hello", _START_TIMEOUT_S)
        except EngineError as exc:
            # The shell that logs its stderr could not run it (missing, not executable): the
            # engine never started, as when the spawn itself fails.
            code, tail = proc.returncode(), proc.log_tail(1)
            self.close()
            if code in _CANNOT_RUN_CODES:
                raise PrerequisiteError(f"cannot start the vsgen engine{self.host.on}: {tail}") from exc
            raise
        except BaseException:
            self.close()
            raise
        return self.hello

    def _death_message(self) -> str:
        proc = self._proc
        # Its output ended: it is exiting; give it a moment so that its exit code is known.
        code = proc.wait(1.0) if proc else None
        tail = proc.log_tail(3) if proc else ""
        return f"vsgen engine{self.host.on} exited ({code}): {tail or 'no message'}"

    def _read(self, stream: IO[bytes]) -> None:
        try:
            for raw in stream:
                line = raw.decode("utf-8", errors="replace").strip()
                if not line:
                    continue
                try:
                    self._events.put(parse_event(line))
                except TrafficGenError as exc:
                    log.warning("%s", exc)
        except (ValueError, OSError):
            pass  # the stream was closed under us (teardown after a signal): that is its end too
        self._events.put(_EOF)

    def close(self) -> None:
        """Quit the engine (it detaches its programs and closes its sockets), stop it if it
        does not. Safe to call twice and after a failed start."""
        proc, self._proc = self._proc, None
        if self._ctl is not None:
            with contextlib.suppress(OSError, ValueError):
                self._ctl.write(b"quit\n")
                self._ctl.flush()
            with contextlib.suppress(OSError, ValueError):
                self._ctl.close()
            self._ctl = None
        if proc is not None:
            if proc.wait(_QUIT_TIMEOUT_S) is None and proc.alive():
                log.warning("vsgen engine (pid %d%s) did not quit; stopping it", proc.pid, self.host.on)
            self.host.stop_process(proc, timeout_s=_QUIT_TIMEOUT_S)  # by PID if it still runs; forgotten
        # The engine has exited, so its output ends: let the reader see that end before the
        # stream is closed (closing it under the reader would raise in the reader's thread).
        if self._reader is not None:
            self._reader.join(timeout=_QUIT_TIMEOUT_S)
            self._reader = None
        if proc is not None and proc.stdout is not None:
            proc.stdout.close()
        self._running = False

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def alive(self) -> bool:
        """True while the engine's process runs."""
        return self._proc is not None and self._proc.returncode() is None

    # --- commands -----------------------------------------------------------------------------

    def _send(self, line: str) -> None:
        if self._ctl is None:
            raise TrafficGenError("the vsgen engine is not running")
        try:
            self._ctl.write(line.encode("ascii") + b"\n")
            self._ctl.flush()
        except (OSError, ValueError) as exc:
            raise EngineError(self._death_message()) from exc

    def _next(self, timeout_s: float) -> dict[str, Any]:
        try:
            event = self._events.get(timeout=timeout_s)
        except queue.Empty:
            raise TrafficGenError(f"the vsgen engine did not answer within {timeout_s:g} s") from None
        if event is _EOF:
            self._events.put(_EOF)  # every later wait sees the end too
            raise EngineError(self._death_message())
        return event

    def _expect(self, kind: str, timeout_s: float) -> dict[str, Any]:
        while True:
            event = self._next(timeout_s)
            if event["ev"] == "error":
                raise EngineError(f"vsgen: {event.get('msg', 'unknown error')}")
            if event["ev"] == kind:
                return event
            log.debug("vsgen event ignored while waiting for %s: %s", kind, event)

    def command(self, line: str, timeout_s: float = _COMMAND_TIMEOUT_S) -> dict[str, Any]:
        """Send one command and return its "ok" event (EngineError with the engine's message)."""
        if self._running:
            raise TrafficGenError("the vsgen engine is busy with a continuous run")
        self._send(line)
        return self._expect("ok", timeout_s)

    def run(
        self, request: RunRequest, on_tick: Callable[[Tick], None] | None = None
    ) -> tuple[RunResult, list[Tick]]:
        """Run one trial to its result; every tick goes to `on_tick` and into the returned list."""
        self.begin(request)
        return self.finish(request, on_tick)

    def begin(self, request: RunRequest) -> None:
        """Start a run without waiting for it (a continuous run ends with `end`)."""
        if self._running:
            raise TrafficGenError("the vsgen engine is already running traffic")
        self._send(request.command())
        self._running = True

    def finish(
        self, request: RunRequest, on_tick: Callable[[Tick], None] | None = None
    ) -> tuple[RunResult, list[Tick]]:
        """Collect a started run's ticks until its result (a continuous run needs `stop_run`)."""
        ticks: list[Tick] = []
        # A run is never silent longer than a tick, except during its residual wait.
        idle_s = request.residual_s + request.tick_s + _IDLE_MARGIN_S
        try:
            while True:
                event = self._next(idle_s)
                kind = event["ev"]
                if kind == "tick":
                    tick = parse_tick(event)
                    ticks.append(tick)
                    if on_tick is not None:
                        on_tick(tick)
                elif kind == "result":
                    return parse_result(event), ticks
                elif kind == "error":
                    # A failed run ends with its error lines and no result.
                    self._drain_errors()
                    raise EngineError(f"vsgen: {event.get('msg', 'unknown error')}")
                else:
                    log.debug("vsgen event ignored during a run: %s", event)
        finally:
            self._running = False

    def poll_ticks(self) -> list[Tick]:
        """Ticks of a continuous run that arrived so far (does not wait)."""
        ticks: list[Tick] = []
        while True:
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                return ticks
            if event["ev"] != "tick":
                # Anything else (result, error, end) is for `finish`: put it back in order.
                rest = [event]
                while not self._events.empty():
                    rest.append(self._events.get_nowait())
                for item in rest:
                    self._events.put(item)
                return ticks
            ticks.append(parse_tick(event))

    def stop_run(self) -> None:
        """Ask a continuous run to stop (its result follows; collect it with `finish`)."""
        self._send("stop")

    def _drain_errors(self) -> None:
        """Let further error lines of the same failure arrive, and drop them."""
        deadline = time.monotonic() + 0.05
        while time.monotonic() < deadline:
            try:
                event = self._events.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return
            if event is _EOF:
                self._events.put(_EOF)
                return
            log.debug("vsgen: %s", event.get("msg", event))
