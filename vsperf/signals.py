"""SIGTERM handled like Ctrl-C, so teardown runs whichever way a run is stopped."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Terminated(KeyboardInterrupt):
    """The run received SIGTERM (or SIGHUP)."""


def _raise(signum: int, _frame: FrameType | None) -> None:
    raise Terminated(f"received {signal.Signals(signum).name}")


@contextmanager
def stop_signals_raise() -> Iterator[None]:
    """Within the block SIGTERM and SIGHUP raise `Terminated`; previous handlers come back after."""
    previous = {sig: signal.signal(sig, _raise) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
