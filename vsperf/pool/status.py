"""Seeing and mending a testbed's locks: `vsperf testbed status FILE...` (who holds each testbed,
since when, its lease's age by the host's clock, who waits) and `vsperf testbed unlock FILE
--force` (for a person who knows its holder is gone: the lock removed, what the holder left kept
for the next run to clean, one line appended to the host's LOCK_DIR/unlock.log).
"""

from __future__ import annotations

import getpass
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from vsperf.errors import UserError
from vsperf.executor import Executor, LocalExecutor
from vsperf.pool import state as st
from vsperf.pool.hostlock import append_log, change, read_state
from vsperf.pool.poolfile import Candidate
from vsperf.pool.state import Hold, HostClock, LockState
from vsperf.pool.testbedlock import LockSite, dead_here, lock_sites
from vsperf.remote.ssh import SshExecutor


@contextmanager
def connected(cand: Candidate) -> Iterator[tuple[LockSite, ...]]:
    """The lock sites of `cand` over connections of their own, closed on leaving."""
    executors: dict[str, Executor] = {h.name: LocalExecutor() if h.ssh is None else SshExecutor(h.ssh)
                                      for h in cand.testbed.hosts}
    try:
        yield lock_sites(cand.testbed, executors)
    finally:
        for executor in executors.values():
            if isinstance(executor, SshExecutor):
                executor.close()


def _age(seconds: float | None) -> str:
    return "before the host's last boot" if seconds is None else f"{seconds:.0f} s ago"


def _hold_line(site: LockSite, hold: Hold, clock: HostClock, dead: bool) -> str:
    lease = hold.lease
    age = lease.age_s(clock)
    state = (f"lease renewed {_age(age)} (lease {lease.lease_s:g} s)" if not lease.expired(clock) else
             f"lease EXPIRED, renewed {_age(age)} (lease {lease.lease_s:g} s): the next run takes it over")
    if dead and not lease.expired(clock):
        state = f"its process is GONE (pid {hold.holder.pid} on this controller): the next run takes it over"
    tests = f", tests {', '.join(hold.holder.tests)}" if hold.holder.tests else ""
    return f"  host {site.host}: {', '.join(hold.resources)} held by {hold.holder.describe()}{tests}; {state}"


@dataclass(frozen=True)
class SiteStatus:
    """One host's part of a testbed's status: its lines, and whether it is held or unreadable."""

    lines: tuple[str, ...]
    held: bool
    problem: bool


def site_status(site: LockSite, state: LockState, clock: HostClock) -> SiteStatus:
    """The lines `vsperf testbed status` prints for one host of a testbed."""
    lines: list[str] = []
    held = False
    dead = dead_here(state)
    for hold in state.holds:
        if st.overlap(site.resources, hold.resources):
            lines.append(_hold_line(site, hold, clock, hold.holder.token in dead))
            held = held or not (hold.lease.expired(clock) or hold.holder.token in dead)
    waiting = sorted((t for t in state.tickets if not t.lease.expired(clock)
                      and st.overlap(site.resources, t.resources)), key=lambda t: t.number)
    for ticket in waiting:  # the DUT host's queue, and traffic-only runs' on the generator host
        lines.append(f"  waiting: {ticket.holder.describe()}, its place renewed {_age(ticket.lease.age_s(clock))}")
    for leftover in st.leftovers_on(state, site.resources):
        lines.append(f"  host {site.host}: {len(leftover.journal)} things left by dead {leftover.holder.describe()}: "
                     f"the next run cleans them")
    return SiteStatus(tuple(lines), held, False)


def status_of(cand: Candidate) -> tuple[str, list[str]]:
    """`cand`'s status word (free, busy, unreachable, unreadable) and its lines."""
    lines: list[str] = []
    held = False
    try:
        with connected(cand) as sites:
            for site in sites:
                state, clock = read_state(site.place)
                status = site_status(site, state, clock)
                lines += status.lines
                held = held or status.held
                if state.log:
                    lines.append(f"  host {site.host}: last forced unlock: {state.log[-1]}")
    except UserError as exc:
        word = "unreachable" if "cannot connect" in str(exc) or "no SSH service" in str(exc) else "unreadable"
        return word, [f"  {exc}"]
    return ("busy" if held else "free"), lines


def force_unlock(cand: Candidate) -> list[str]:
    """Remove every lock on `cand`'s resources by force; one line per lock removed."""
    who = f"{os.environ.get('SUDO_USER') or getpass.getuser()}@{socket.gethostname()} (pid {os.getpid()})"
    when = datetime.now().astimezone().isoformat(timespec="seconds")
    done: list[str] = []
    with connected(cand) as sites:
        for site in sites:
            line = f"{when} {who}: vsperf testbed unlock --force {cand.path}"

            def decide(state: LockState, _clock: HostClock, site: LockSite = site,
                       line: str = line) -> tuple[LockState | None, Any]:
                new, gone = st.unlock(state, site.resources, line)
                return (new if gone else None), gone

            gone: tuple[Hold, ...] = change(site.place, decide)
            for hold in gone:
                text = f"{line}: removed the lock of {hold.holder.describe()} on {', '.join(hold.resources)}"
                append_log(site.place, text)
                done.append(f"testbed {cand.path}: host {site.host}: removed the lock of {hold.holder.describe()} "
                            f"(logged in {site.place.lock_dir}/unlock.log)")
    return done
