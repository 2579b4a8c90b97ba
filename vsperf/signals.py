"""One signal path for a whole command: its tests, their teardown, results.json and the report.

Within `stop_signals_raise()` (the CLI holds it around every command; the runner's own use nests
in it):
- SIGINT raises KeyboardInterrupt, SIGTERM and SIGHUP raise `Terminated`: whatever runs unwinds
  through its cleanup (teardown, results.json finished with an end time, report workers stopped);
- only the first stop signal raises. Once stopping, a second Ctrl-C (or the process group's SIGTERM
  after a Ctrl-C) is logged and ignored, so cleanup always runs to its end: a second Ctrl-C no
  longer leaves results.json "running" or a worker process behind. Work that can be dropped (the
  report) runs inside `interruptible()`, where a further signal still raises: the report is
  abandoned, the cleanup never is;
- once the command's exit code is decided (`settle`), a late signal changes nothing.

`StopRun` is what stops a run early while keeping what it measured: a signal (`Terminated`, or
Ctrl-C's plain KeyboardInterrupt) or an output that could not be written (vsperf.outputs).
"""

from __future__ import annotations

import functools
import logging
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopRun(KeyboardInterrupt):
    """The run must stop now: what it started is cleaned up, what it measured is kept.
    A KeyboardInterrupt, so that only the places that clean up (not `except Exception`) see it."""


class Terminated(StopRun):
    """The run received SIGTERM (or SIGHUP)."""


class Aborted(StopRun):
    """The run must stop for a reason found outside its main thread (`abort`): its testbed lease
    could not be renewed."""


def stop_reason(exc: BaseException) -> str:
    """Why a run stopped, for its log: a StopRun's own message, else Ctrl-C's."""
    return str(exc) if isinstance(exc, StopRun) and str(exc) else "interrupted by the user (Ctrl-C)"


class CommandStopped(Exception):
    """A command ended by a stop signal or a lost output; its message says why (exit 1)."""


def stoppable(command: Callable[..., T]) -> Callable[..., T]:
    """A command's function whose KeyboardInterrupt (a signal, vsperf.outputs.OutputLost) leaves
    it as CommandStopped: click turns a KeyboardInterrupt into its Abort and prints a blank line."""
    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        try:
            return command(*args, **kwargs)
        except KeyboardInterrupt as exc:
            raise CommandStopped(stop_reason(exc)) from None
    return wrapper


@dataclass
class _State:
    depth: int = 0  # nested stop_signals_raise blocks; handlers are installed by the outermost
    stopping: bool = False  # a stop signal was raised: later ones are only logged
    interruptible: int = 0  # inside interruptible(): a signal raises even while stopping
    settled: bool = False  # the command's exit code is decided: stop signals are ignored
    previous: dict[int, Any] = field(default_factory=dict)
    previous_unraisable: Callable[[Any], Any] | None = None
    aborted: str = ""  # why `abort` stops the command (raised as Aborted by the next SIGTERM's handler)
    raised: int = 0  # stop signals raised so far (see `stops_raised`)


_state = _State()


def _handle(signum: int, _frame: FrameType | None) -> None:
    if _state.settled:
        return
    name = signal.Signals(signum).name
    if _state.stopping and not _state.interruptible:
        log.warning("received %s while stopping: cleanup goes on to its end", name)
        return
    _state.stopping = True
    _state.raised += 1
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    if signum == signal.SIGTERM and _state.aborted:
        raise Aborted(_state.aborted)
    raise Terminated(f"received {name}")


@contextmanager
def stop_signals_raise() -> Iterator[None]:
    """Within the block SIGINT, SIGTERM and SIGHUP stop what runs (see the module's doc); the
    previous handlers come back after. Nested blocks share the outermost one's handlers and state.
    Must be entered from the main thread."""
    if _state.depth == 0:
        _state.previous = {sig: signal.signal(sig, _handle) for sig in STOP_SIGNALS}
        _state.previous_unraisable, sys.unraisablehook = sys.unraisablehook, _unraisable
        _state.stopping, _state.aborted = False, ""
    _state.depth += 1
    try:
        yield
    finally:
        _state.depth -= 1
        if _state.depth == 0:
            for sig, handler in _state.previous.items():
                signal.signal(sig, handler)
            if _state.previous_unraisable is not None:
                sys.unraisablehook, _state.previous_unraisable = _state.previous_unraisable, None
            _state.previous, _state.stopping, _state.settled = {}, False, False


def _unraisable(unraisable: Any) -> None:
    """A stop signal whose exception Python had to drop (its handler ran inside a garbage
    collection callback or a `__del__`): no traceback on the terminal; `stops_raised` counted it,
    and the run stops as it would have. Anything else goes to Python's own hook."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        log.debug("a stop signal landed in %r: its exception was dropped; the run stops all the same",
                  unraisable.object)
        return
    (_state.previous_unraisable or sys.__unraisablehook__)(unraisable)


@contextmanager
def interruptible() -> Iterator[None]:
    """Work that a further signal may abandon even while the run is stopping (the report)."""
    _state.interruptible += 1
    try:
        yield
    finally:
        _state.interruptible -= 1


def settle(*, for_good: bool) -> None:
    """The command's exit code is decided: from now on the stop signals are ignored rather than
    turning exit 1 into a death by signal or a traceback. `for_good` (the process is vsperf and
    is about to exit): after the block too, instead of restoring the previous handlers."""
    _state.settled = True
    if for_good:
        _state.previous = dict.fromkeys(STOP_SIGNALS, signal.SIG_IGN)


def abort(reason: str) -> bool:
    """From any thread: stop the command as a stop signal would, with `Aborted(reason)` raised in
    the main thread (a SIGTERM to it carries the reason). False, and nothing done, outside
    `stop_signals_raise` or once the exit code is decided."""
    if _state.depth == 0 or _state.settled:
        return False
    _state.aborted = reason
    main = threading.main_thread().ident
    assert main is not None
    signal.pthread_kill(main, signal.SIGTERM)
    return True


def resume() -> None:
    """The stop signal just raised was consumed (--mode trafficgen-off's wait ends on SIGTERM):
    the run goes on, and the next signal stops it again."""
    _state.stopping = False
    _state.raised -= 1


def stops_raised() -> int:
    """How many stop signals raised so far. A raise can be lost: when the signal lands in a
    garbage-collection callback or a `__del__`, Python prints "Exception ignored" and goes on.
    Work that must not end as if nothing happened compares the count before and after."""
    return _state.raised


def stopping() -> bool:
    """True once a stop signal was raised within the current block."""
    return _state.stopping


@contextmanager
def signals_blocked() -> Iterator[None]:
    """The stop signals held back in this thread for the block, delivered when it ends. Used
    around forking a worker: the child starts with them blocked and sets its own dispositions
    before unblocking, so a Ctrl-C at that moment never runs vsperf's handler in the child."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
