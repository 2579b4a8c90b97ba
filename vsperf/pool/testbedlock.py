"""A testbed's lock: the DUT host (``dut``) and each generator port, locked on the hosts that
have them, all or nothing, in one order (the DUT host first: the testbed's waiters queue there).
A traffic-only run (``--mode trafficgen``) locks the generator ports only, and queues on their host.

Taking the lock takes over the holds of runs whose lease expired (their run was killed, their
controller lost, the host rebooted: the lock file said so, by the host's clock) and cleans what
they left on each host from the journal they mirrored there, through the same release as every
teardown (vsperf.host.release), whichever controller ran them.
"""

from __future__ import annotations

import functools
import logging
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vsperf.errors import UserError, VsperfError
from vsperf.executor import Executor
from vsperf.host.journal import JOURNAL_FILE, Entry, Journal, Owner
from vsperf.host.names import run_dirs_removal
from vsperf.host.proc import same_local_process
from vsperf.host.release import release
from vsperf.pool import state as st
from vsperf.pool.hostlock import LockPlace, change, read_state
from vsperf.pool.state import Blocked, Hold, Holder, HostClock, LeaseLost, LockState
from vsperf.testbed.model import Testbed

log = logging.getLogger(__name__)


@functools.cache
def this_controller() -> tuple[str, int]:
    """This machine's boot id and this process's PID namespace (inode): where a holder runs."""
    boot = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    return boot, os.stat("/proc/self/ns/pid").st_ino


def gone_here(holder: Holder) -> bool:
    """True when `holder` ran on this controller (same boot, same PID namespace) and its process
    is gone: its lock is dead now, without waiting for its lease."""
    boot, pid_ns = this_controller()
    return (holder.boot_id == boot and holder.pid_ns == pid_ns and holder.start_ticks > 0
            and not same_local_process(holder.pid, holder.start_ticks))


def dead_here(state: LockState) -> frozenset[str]:
    """Tokens of the holders and waiters of `state` that `gone_here` says are dead."""
    holders = [h.holder for h in state.holds] + [t.holder for t in state.tickets]
    return frozenset(h.token for h in holders if gone_here(h))


@dataclass(frozen=True)
class LockSite:
    """One host's part of a testbed's lock: the resources of that host the testbed uses."""

    host: str  # the testbed file's name for the host
    place: LockPlace
    resources: tuple[str, ...]
    # This run waits in the testbed's queue here (its DUT host; the generator host for a
    # traffic-only run). Tickets are honoured on every site: whoever queued first goes first.
    queue: bool


def lock_sites(testbed: Testbed, executors: Mapping[str, Executor], *,
               traffic_only: bool = False) -> tuple[LockSite, ...]:
    """The lock sites of `testbed`: its DUT host (``dut``), then its generator host (one resource
    per cable's generator end) when that is another host. A `traffic_only` run (``--mode
    trafficgen``: the DUT is the user's, vsperf only reads there) locks the generator ports only,
    on the generator host, and waits in a queue there: nothing is written on the DUT host."""
    ports = tuple(st.port_resource(c.trafficgen.interface) if c.trafficgen.interface is not None
                  else st.location_resource(str(c.trafficgen.location)) for c in testbed.cables)
    dut, gen = testbed.dut, testbed.trafficgen
    if traffic_only:
        return (LockSite(gen.name, LockPlace(executors[gen.name], gen.lock_dir), ports, True),)
    sites = [LockSite(dut.name, LockPlace(executors[dut.name], dut.lock_dir),
                      (st.RESOURCE_DUT, *ports) if gen.name == dut.name else (st.RESOURCE_DUT,), True)]
    if gen.name != dut.name:
        sites.append(LockSite(gen.name, LockPlace(executors[gen.name], gen.lock_dir), ports, False))
    return tuple(sites)


@dataclass(frozen=True)
class Busy:
    """Why a testbed cannot be taken now, as read on host `host` by its clock."""

    testbed: str
    host: str
    blocked: Blocked
    clock: HostClock

    def describe(self) -> str:
        """`host dut is held by run abc123 (...), its lease renewed 3 s ago`, or who waits first."""
        if self.blocked.holds:
            hold = self.blocked.holds[0]
            age = hold.lease.age_s(self.clock)
            return f"host {self.host} is held by {hold.holder.describe()}, its lease renewed {age or 0:.0f} s ago"
        first = self.blocked.ahead[0]
        waiting = len(self.blocked.ahead)
        return f"{waiting} run{'s' if waiting > 1 else ''} wait{'' if waiting > 1 else 's'} for it first (the first: " \
               f"{first.holder.describe()})"

    @property
    def holder(self) -> Holder:
        return self.blocked.holds[0].holder if self.blocked.holds else self.blocked.ahead[0].holder


class TestbedBusyError(UserError):
    """The testbed is held by another run (or others wait for it first): one line naming them."""

    __test__ = False

    def __init__(self, busy: Busy) -> None:
        super().__init__(f"testbed {busy.testbed} is busy: {busy.describe()}; wait for it with --testbed-wait "
                         f"SECONDS, or see vsperf testbed status {busy.testbed}")
        self.busy = busy


@dataclass
class TestbedLock:
    """`holder`'s lock on a testbed's `sites`, with leases of `lease_s`."""

    __test__ = False

    testbed: str
    sites: tuple[LockSite, ...]
    holder: Holder
    lease_s: float
    taken: bool = False
    taken_over: list[tuple[str, Hold]] = field(default_factory=list)  # (host, the dead run's hold)
    # Hosts where `take` saw nothing left by dead runs on these resources: nothing to read again
    # for `clean_leftovers` there (while the lock is held, nobody else can leave any).
    clean_hosts: set[str] = field(default_factory=set)

    def take(self, *, past_the_queue: bool = False) -> Busy | None:
        """Take every site, all or nothing (None: taken; a Busy: nothing held). The holds of runs
        whose lease expired are taken over (`taken_over`); the caller then `clean_leftovers`.
        `past_the_queue`: the runs waiting for it do not count (the pool has enough free testbeds
        for them, vsperf.pool.claim.spare_for_me); its holders always do."""
        token = self.holder.token
        done: list[LockSite] = []
        try:
            for site in self.sites:
                def decide(state: LockState, clock: HostClock, site: LockSite = site) -> tuple[LockState | None, Any]:
                    gone = dead_here(state)
                    why = st.blocked(state, clock, token, site.resources, queue=not past_the_queue, dead=gone)
                    if why:
                        return None, Busy(self.testbed, site.host, why, clock)
                    new, dead = st.take(state, clock, self.holder, site.resources, self.lease_s, dead=gone)
                    if new.ticket_of(token) is not None:  # our place in the queue is no longer needed
                        new = replace(new, tickets=tuple(t for t in new.tickets if t.holder.token != token))
                    return new, (dead, clock, gone, not st.leftovers_on(new, site.resources))
                result = change(site.place, decide)
                if isinstance(result, Busy):
                    self._drop(done)
                    return result
                done.append(site)
                dead, clock, gone, clean = result
                if clean:
                    self.clean_hosts.add(site.host)
                for hold in dead:
                    self.taken_over.append((site.host, hold))
                    age = hold.lease.age_s(clock)
                    if hold.holder.token in gone and not hold.lease.expired(clock):
                        why = f"its process is gone (pid {hold.holder.pid} on this controller)"
                    elif age is None:
                        why = f"its lease expired (the host booted since; lease {hold.lease.lease_s:g} s)"
                    else:
                        why = f"its lease expired (not renewed for {age:.0f} s by the host's clock; lease " \
                              f"{hold.lease.lease_s:g} s)"
                    log.warning("testbed %s: host %s: taking over from %s: %s; cleaning what it left first",
                                self.testbed, site.host, hold.holder.describe(), why)
        except BaseException:
            self._drop(done)
            raise
        self.taken = True
        return None

    def peek(self) -> Busy | None:
        """Whether the testbed could be taken now (nothing written)."""
        for site in self.sites:
            state, clock = read_state(site.place)
            why = st.blocked(state, clock, self.holder.token, site.resources, queue=True, dead=dead_here(state))
            if why:
                return Busy(self.testbed, site.host, why, clock)
        return None

    def queue(self) -> None:
        """Wait in the testbed's queue (on its DUT host): a ticket, or this one's renewed."""
        site = next(s for s in self.sites if s.queue)
        change(site.place, lambda state, clock: (st.enqueue(state, clock, self.holder, site.resources, self.lease_s),
                                                 None))

    def withdraw(self) -> None:
        """Leave the testbed's queue (another testbed was taken, or the wait is over)."""
        site = next(s for s in self.sites if s.queue)
        try:
            change(site.place, lambda state, _clock: (_without_ticket(state, self.holder.token), None))
        except VsperfError as exc:
            log.debug("testbed %s: ticket not withdrawn from host %s: %s", self.testbed, site.host, exc)

    def renew(self, journals: Mapping[str, Sequence[Mapping[str, Any]]] | None = None) -> None:
        """Renew the lease on every site (with `journals`: each host's entries mirrored there);
        LeaseLost naming the host when a site's lock is gone or expired."""
        for site in self.sites:
            journal = None if journals is None else journals.get(site.host, ())

            def renewed(state: LockState, clock: HostClock,
                        journal: Sequence[Mapping[str, Any]] | None = journal) -> tuple[LockState | None, None]:
                return st.renew(state, clock, self.holder.token, journal), None
            try:
                change(site.place, renewed)
            except LeaseLost as exc:
                raise LeaseLost(f"host {site.host}: {exc}") from None

    def release(self) -> None:
        """Give every site back (and leave the queue); a host that does not answer keeps the lock
        until its lease expires (one warning)."""
        self._drop(self.sites)
        self.taken = False
        self.clean_hosts.clear()

    def _drop(self, sites: Sequence[LockSite]) -> None:
        for site in sites:
            try:
                change(site.place, lambda state, _clock: (_dropped(state, self.holder.token), None))
            except VsperfError as exc:
                log.warning("testbed %s: lock on host %s not released (%s): it expires %g s after its last renewal",
                            self.testbed, site.host, exc, self.lease_s)

    def clean_leftovers(self, state_root: Path | None = None) -> list[str]:
        """Undo what dead runs left on the resources this lock holds (their mirrored journals),
        through the one release path; one line per thing done. What cannot be undone stays. A
        run whose own journal is under `state_root` (it ran on this controller) is left to the
        sweep of RunHosts, which has its whole journal."""
        done: list[str] = []
        for site in self.sites:
            if self.taken and site.host in self.clean_hosts:
                continue
            state, _clock = read_state(site.place)
            for leftover in st.leftovers_on(state, site.resources):
                run_id = leftover.holder.run_id
                if state_root is not None and (state_root / run_id / JOURNAL_FILE).exists():
                    remaining: list[dict[str, Any]] = []
                else:
                    remaining, lines = _release_leftover(site, leftover)
                    done += lines

                def after(state: LockState, _clock: HostClock, leftover: st.Leftover = leftover,
                          remaining: list[dict[str, Any]] = remaining) -> tuple[LockState | None, None]:
                    return st.cleaned(state, leftover, remaining), None
                change(site.place, after)
        return done


def _without_ticket(state: LockState, token: str) -> LockState | None:
    if state.ticket_of(token) is None:
        return None
    return replace(state, tickets=tuple(t for t in state.tickets if t.holder.token != token))


def _dropped(state: LockState, token: str) -> LockState | None:
    if state.hold_of(token) is None and state.ticket_of(token) is None:
        return None
    return st.drop(state, token)


def _release_leftover(site: LockSite, leftover: st.Leftover) -> tuple[list[dict[str, Any]], list[str]]:
    """Release a dead run's mirrored entries on `site`'s host; the entries left, what was done."""
    run_id = leftover.holder.run_id
    entries = [Entry.from_dict({**dict(e), "host": site.host}) for e in leftover.journal]
    executor = site.place.executor
    with tempfile.TemporaryDirectory(prefix="vsperf-leftover-") as scratch:
        journal = Journal(run_id, root=Path(scratch), owner=Owner(os.getpid(), 0), entries=entries)
        result = release(journal, {site.host: executor})
        remaining = [e.as_dict() for e in journal]
    try:
        executor.run(run_dirs_removal(run_id), check=False, timeout_s=30.0)
    except VsperfError as exc:
        log.warning("host %s: directories of run %s not removed: %s", site.host, run_id, exc)
    return remaining, [f"run {run_id}: {what}" for what in result.done]
