"""Claiming the run's testbed: the first of its testbeds (one, several, or a pool's) that is free
and can run the selected tests, locked before anything on it is touched and held to the last
cleanup; or, with TESTBED_WAIT_S, waiting for one in arrival order.

For each testbed in order: its hosts are connected, its lock taken (vsperf.pool.testbedlock;
busy: skipped, nothing touched), what killed runs left on it cleaned, its ports checked and the
plan checked against it (vsperf.run.preflight); a testbed whose host does not answer is skipped
as unreachable, one that cannot run the tests as unsuitable, its lock given back. A single
testbed keeps today's one-line refusals; a pool's is one line listing every testbed and why it
was skipped. While waiting, the run looks every half second (one read of the lock states per
machine) and tries only the testbeds free for it; when none could be taken it queues on every
testbed's DUT host (a ticket renewed every few seconds), and takes the first testbed that is free
when it is first in that testbed's queue (or when the pool has more free testbeds than runs
waiting ahead of it). A run that finds a free testbed at its first look never queues.
"""

from __future__ import annotations

import getpass
import logging
import os
import secrets
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from vsperf.errors import UserError
from vsperf.executor import CommandLog, Executor, LocalExecutor
from vsperf.host.hosts import RunHosts
from vsperf.host.proc import own_start_ticks
from vsperf.pool.hostlock import read_states
from vsperf.pool.lease import LeaseKeeper
from vsperf.pool.poolfile import Candidate, candidates
from vsperf.pool.state import Holder, HostClock, LockState, blocked
from vsperf.pool.testbedlock import Busy, TestbedBusyError, TestbedLock, dead_here, lock_sites, this_controller
from vsperf.registry import Registries
from vsperf.remote.connection import HostUnreachableError
from vsperf.remote.ssh import SshExecutor
from vsperf.run.plan import PlannedTest
from vsperf.run.preflight import check_collectors_read_hosts, check_plan, open_hosts

log = logging.getLogger(__name__)

POLL_S = 0.5  # a waiting run looks at its testbeds this often
TICKET_LEASE_S = 30.0  # a waiter's place in a queue, renewed every third of it
PROGRESS_S = 15.0  # a waiting run says so this often (and whenever what it waits for changes)
MAX_TESTS_RECORDED = 50  # test names in a lock's holder record


class NoTestbedError(UserError):
    """No testbed of the run's could be taken (busy, unreachable, unsuitable): one line."""


@dataclass(frozen=True)
class Skipped:
    """A testbed not taken, and why."""

    path: str
    reason: str  # busy | unreachable | unsuitable
    why: str

    def describe(self) -> str:
        return f"{self.path} {self.reason} ({self.why})"


@dataclass
class Claim:
    """The run's hosts on the testbed it took (its lock held and renewed), or the local lab's."""

    hosts: RunHosts | None
    testbed: str = ""  # the testbed file taken ("": the local lab)
    pool: tuple[str, ...] = ()
    lock: TestbedLock | None = None
    keeper: LeaseKeeper | None = None
    skipped: list[Skipped] = field(default_factory=list)
    waited_s: float = 0.0
    taken_at: str = ""  # when the lock was taken, ISO 8601 with milliseconds (the controller's clock)

    def record(self) -> dict[str, Any] | None:
        """What results.json keeps of the choice (None for the local lab)."""
        if not self.testbed:
            return None
        lock = self.lock
        took_over = lock.taken_over if lock else []
        return {"file": self.testbed, "name": Path(self.testbed).stem, "pool": list(self.pool),
                "skipped": [{"file": s.path, "reason": s.reason, "why": s.why} for s in self.skipped],
                "waited_s": round(self.waited_s, 3), "taken_at": self.taken_at,
                "lease_s": lock.lease_s if lock else None,
                "took_over": [{"host": host, "run_id": hold.holder.run_id, "user": hold.holder.user,
                               "controller": hold.holder.controller} for host, hold in took_over]}

    def close(self) -> None:
        """Tear down: everything the run's journal lists released, then the lock given back, then
        the connections closed (the lock is held to the last cleanup)."""
        if self.keeper is not None:
            self.keeper.stop()
        try:
            if self.hosts is not None:
                self.hosts.release()
        finally:
            try:
                if self.lock is not None and self.lock.taken:
                    self.lock.release()
            finally:
                if self.hosts is not None:
                    self.hosts.close_connections()


@dataclass(frozen=True)
class ClaimRequest:
    """What claiming needs: the plan, where to look, how long to wait, and the run's identity."""

    plan: Sequence[PlannedTest]
    registries: Registries
    testbeds: tuple[str, ...]  # testbed or pool files ((): the local lab)
    run_id: str
    command_log: CommandLog
    results_dir: Path | None = None
    wait_s: float = 0.0
    lease_s: float = 60.0
    on_lost: Callable[[str], Any] = log.error  # the lease was lost: stop the run (the CLI's)
    # What the plan needs, checked on the hosts (a testbed that fails it is not suitable); the
    # CLI's --integration passes a no-op and leaves out, test by test, what cannot run.
    check: Callable[[Sequence[PlannedTest], Registries, RunHosts | None], None] = check_plan

    @property
    def traffic_only(self) -> bool:
        """--mode trafficgen: the DUT is the user's; the lock takes the generator ports only."""
        return any(pt.traffic_only for pt in self.plan)


def given_testbeds(setting: str | Sequence[str]) -> tuple[str, ...]:
    """The TESTBED setting's files ((): the local lab)."""
    return tuple(str(f) for f in ([setting] if isinstance(setting, str) else setting) if f)


def new_holder(run_id: str, plan: Sequence[PlannedTest]) -> Holder:
    """Who this run is, as its locks record it."""
    user = os.environ.get("SUDO_USER") or getpass.getuser()
    tests = tuple(dict.fromkeys(pt.test.name for pt in plan))[:MAX_TESTS_RECORDED]
    boot_id, pid_ns = this_controller()
    return Holder(run_id, secrets.token_hex(8), user, socket.gethostname(), os.getpid(),
                  datetime.now().astimezone().isoformat(timespec="seconds"), "", tests, boot_id, pid_ns,
                  own_start_ticks())


def claim_testbed(request: ClaimRequest) -> Claim:
    """The run's hosts: see the module's doc. UserError (exit 2) when no testbed can be taken."""
    plan = request.plan
    if not request.testbeds:
        hosts = open_hosts(plan, "", run_id=request.run_id, command_log=request.command_log,
                           registries=request.registries, results_dir=request.results_dir)
        try:
            request.check(plan, request.registries, hosts)
        except BaseException:
            if hosts is not None:
                hosts.close()
            raise
        return Claim(hosts)
    check_collectors_read_hosts(plan, request.registries)  # before any file is read or host contacted
    pool = candidates(request.testbeds)
    return _Claimer(request, pool, new_holder(request.run_id, plan)).run()


class _Claimer:
    """One claim: the pool in order, then waiting (see the module's doc)."""

    def __init__(self, request: ClaimRequest, pool: list[Candidate], holder: Holder) -> None:
        self.request = request
        self.pool = pool
        self.holder = holder
        self.unsuitable: dict[Path, Skipped] = {}
        self.probes: dict[Path, TestbedLock] = {}  # the testbeds' locks over probe connections (waiting)
        self.queued: set[Path] = set()  # testbeds whose queue holds this run's ticket
        self.started = time.monotonic()
        self.queued_at = 0.0

    @property
    def single(self) -> bool:
        return len(self.pool) == 1

    def run(self) -> Claim:
        deadline = self.started + self.request.wait_s
        said, said_at = "", 0.0
        try:
            while True:
                claim, skipped = self._round()
                if claim is not None:
                    claim.skipped, claim.waited_s = skipped, time.monotonic() - self.started
                    claim.pool = tuple(str(c.path) for c in self.pool)
                    taken = f"testbed {claim.testbed} taken"
                    if skipped:
                        taken += f" (skipped: {'; '.join(s.describe() for s in skipped)})"
                    log.info("%s", taken)
                    return claim
                now = time.monotonic()
                waitable = [s for s in skipped if s.reason != "unsuitable"]
                if not waitable or now >= deadline:
                    raise self._none_left(skipped, now - self.started)
                status = "; ".join(s.describe() for s in waitable)
                if status != said or now - said_at >= PROGRESS_S:
                    log.info("waiting for a testbed (%.0f s of %g s): %s", now - self.started, self.request.wait_s,
                             status)
                    said, said_at = status, now
                time.sleep(min(POLL_S, max(deadline - now, 0.0)))
        finally:
            for path, lock in self.probes.items():
                if path in self.queued:
                    lock.withdraw()
                _close(lock)

    def _none_left(self, skipped: list[Skipped], waited_s: float) -> UserError:
        waited = f" (waited {waited_s:.0f} s)" if self.request.wait_s else ""
        if self.single and skipped and skipped[0].reason == "busy":
            return NoTestbedError(f"testbed {skipped[0].path} is busy{waited}: {skipped[0].why}; wait for it with "
                                  f"--testbed-wait SECONDS, or see vsperf testbed status {skipped[0].path}")
        hint = "; wait for one with --testbed-wait SECONDS" if any(s.reason == "busy" for s in skipped) else ""
        return NoTestbedError(f"no testbed of {len(self.pool)} could be taken{waited}: "
                              f"{'; '.join(s.describe() for s in skipped)}{hint}")

    def _round(self) -> tuple[Claim | None, list[Skipped]]:
        """One look at every testbed: the claim of the first one taken, or why each was skipped."""
        waiting = self.request.wait_s > 0
        if waiting:
            self._open_probes()
        looks = self._peek() if waiting and self.probes else {}
        spare = spare_for_me(looks)
        skipped: list[Skipped] = []
        for cand in self.pool:
            if cand.path in self.unsuitable:
                skipped.append(self.unsuitable[cand.path])
                continue
            busy = looks.get(cand.path)
            if busy is not None and cand.path not in spare:  # looked at through its probe: not free yet
                skipped.append(Skipped(str(cand.path), "busy", busy.describe()))
                continue
            result = self._try(cand, past_the_queue=cand.path in spare)
            if isinstance(result, Claim):
                return result, skipped
            skipped.append(result)
            if result.reason == "unsuitable":
                self.unsuitable[cand.path] = result
        if waiting:
            self._queue()
        return None, skipped

    def _try(self, cand: Candidate, *, past_the_queue: bool = False) -> Claim | Skipped:
        """Open `cand` with its lock taken first; check the plan on it. `past_the_queue`: it is
        free and more of the pool's testbeds are free than runs wait ahead (`spare_for_me`)."""
        request = self.request
        holder = replace(self.holder, testbed=str(cand.path))
        taken: list[TestbedLock] = []
        taken_at: list[str] = []

        def take(run: RunHosts) -> None:
            lock = TestbedLock(str(cand.path), lock_sites(run.testbed, {h.name: h.executor for h in run},
                                                               traffic_only=request.traffic_only), holder,
                               request.lease_s)
            busy = lock.take(past_the_queue=past_the_queue)
            if busy is not None:
                raise TestbedBusyError(busy)
            taken.append(lock)
            taken_at.append(datetime.now().astimezone().isoformat(timespec="milliseconds"))
            for what in lock.clean_leftovers(run.journal.root):
                log.warning("removed leftover of a killed run: %s", what)

        try:
            hosts = open_hosts(request.plan, str(cand.path), run_id=request.run_id, command_log=request.command_log,
                               registries=request.registries, results_dir=request.results_dir, claim=take)
            assert hosts is not None  # a testbed file always opens its hosts
        except TestbedBusyError as exc:
            return Skipped(str(cand.path), "busy", exc.busy.describe())
        except (HostUnreachableError, UserError) as exc:
            for lock in taken:  # checks after the lock failed: give it back
                lock.release()
                _close(lock)
            reason = "unreachable" if isinstance(exc, HostUnreachableError) else "unsuitable"
            if self.single and (not request.wait_s or reason == "unsuitable"):
                raise
            return Skipped(str(cand.path), reason, str(exc))
        except BaseException:
            for lock in taken:
                lock.release()
                _close(lock)
            raise
        lock = taken[0]
        try:
            request.check(request.plan, request.registries, hosts)
        except UserError as exc:
            hosts.release()
            lock.release()
            hosts.close_connections()
            if self.single:
                raise
            return Skipped(str(cand.path), "unsuitable", str(exc))
        except BaseException:
            Claim(hosts, lock=lock).close()
            raise
        keeper = LeaseKeeper(lock, hosts.journal, request.on_lost).start()
        return Claim(hosts, str(cand.path), lock=lock, keeper=keeper, taken_at=taken_at[0])

    # --- waiting ----------------------------------------------------------------------------------

    def _open_probes(self) -> None:
        """A probe (the testbed's lock over connections of the wait's own) for every testbed not
        known unsuitable; a host that does not answer is tried again at the next look."""
        for cand in self.pool:
            if cand.path in self.unsuitable or cand.path in self.probes:
                continue
            try:
                self.probes[cand.path] = _probe(cand, self.holder, self.request)
            except UserError as exc:
                log.debug("testbed %s: not looked at: %s", cand.path, exc)

    def _queue(self) -> None:
        """Queue on every probed testbed not known unsuitable (a ticket on its DUT host),
        renewing the tickets every third of their lease; a host that does not answer is dropped
        from the looks and probed again at the next round."""
        now = time.monotonic()
        renew = now - self.queued_at >= TICKET_LEASE_S / 3
        for path, lock in list(self.probes.items()):
            if path in self.unsuitable or (path in self.queued and not renew):
                continue
            try:
                lock.queue()
                self.queued.add(path)
            except UserError as exc:
                log.debug("testbed %s: not queued: %s", path, exc)
                self.queued.discard(path)
                _close(self.probes.pop(path))
        if renew:
            self.queued_at = now

    def _peek(self) -> dict[Path, Busy]:
        """Which queued testbeds are not free for this run yet: one read per machine (testbeds
        sharing a generator host, or hosts on one machine with lock directories of their own)."""
        by_machine: dict[str, tuple[Executor, list[str]]] = {}
        for lock in self.probes.values():
            for site in lock.sites:
                place = site.place
                by_machine.setdefault(place.executor.machine, (place.executor, []))[1].append(place.lock_dir)
        states: dict[tuple[str, str], tuple[LockState, HostClock]] = {}
        for machine, (executor, dirs) in by_machine.items():
            try:
                for lock_dir, found in read_states(executor, sorted(set(dirs))).items():
                    states[(machine, lock_dir)] = found
            except UserError as exc:
                log.debug("host %s: locks not read: %s", executor.host, exc)
        looks: dict[Path, Busy] = {}
        for path, lock in self.probes.items():
            for site in lock.sites:
                seen = states.get((site.place.executor.machine, site.place.lock_dir))
                if seen is None:
                    continue  # not read: the full attempt says why
                state, clock = seen
                why = blocked(state, clock, self.holder.token, site.resources, queue=True,
                              dead=dead_here(state))
                if why:
                    looks[path] = Busy(str(path), site.host, why, clock)
                    break
        return looks


def spare_for_me(looks: Mapping[Path, Busy]) -> frozenset[Path]:
    """The testbeds this waiter may take although runs wait ahead of it there: each of them held
    by nobody (only queued for), and more of them than distinct runs waiting ahead of it on them.
    A waiter queues on every testbed of its pool but takes one: without this, the first waiter's
    tickets kept every free testbed from everyone else, and a pool served one run per poll."""
    reserved = {path: busy for path, busy in looks.items() if not busy.blocked.holds}
    ahead = {t.holder.token for busy in reserved.values() for t in busy.blocked.ahead}
    return frozenset(reserved) if len(reserved) > len(ahead) else frozenset()


def _probe(cand: Candidate, holder: Holder, request: ClaimRequest) -> TestbedLock:
    """`cand`'s lock over connections of its own (the wait's), for tickets and looks."""
    executors: dict[str, Executor] = {}
    for host in cand.testbed.hosts:
        executors[host.name] = LocalExecutor(request.command_log) if host.ssh is None \
            else SshExecutor(host.ssh, request.command_log)
    lock = TestbedLock(str(cand.path), lock_sites(cand.testbed, executors, traffic_only=request.traffic_only),
                       replace(holder, testbed=str(cand.path)),
                       TICKET_LEASE_S)
    for executor in executors.values():
        if isinstance(executor, SshExecutor):
            try:
                executor.connect()
            except BaseException:
                _close(lock)
                raise
    return lock


def _close(lock: TestbedLock) -> None:
    for site in lock.sites:
        if isinstance(site.place.executor, SshExecutor):
            site.place.executor.close()
