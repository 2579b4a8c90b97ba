"""`vsperf --integration` without test names runs every integration test that can run here: VSPERF's
integration set holds tests for hardware this machine (or testbed) does not have, so a test whose
plan or prerequisites fail is left out with a warning saying why, instead of stopping the run. A
named test still stops the run with its one-line error (exit 2), as every performance test does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TypeVar

from vsperf.errors import UserError

log = logging.getLogger(__name__)

T = TypeVar("T")
U = TypeVar("U")


def checked(check: Callable[[Sequence[T]], object]) -> Callable[[Sequence[T]], list[T]]:
    """`check` (raising on a problem) as an attempt that returns what it checked."""
    def attempt(items: Sequence[T]) -> list[T]:
        check(items)
        return list(items)
    return attempt


def leave_out(items: Sequence[T], attempt: Callable[[Sequence[T]], list[U]], name: Callable[[T], str], *,
              tolerant: bool, what: str) -> list[U]:
    """`attempt(items)`; with `tolerant`, `attempt` of each item alone, those raising a UserError
    left out with one warning (all of them failing: the first one's error)."""
    if not tolerant:
        return attempt(items)
    out: list[U] = []
    left: list[tuple[str, UserError]] = []
    for item in items:
        try:
            out += attempt([item])
        except UserError as exc:
            left.append((name(item), exc))
    if left and not out:
        raise left[0][1]
    for test, error in left:
        log.warning("left out %s: %s (%s)", test, what, error)
    return out
