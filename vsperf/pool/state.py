"""The locks of one host as a value: who holds which of its resources, their leases, who waits
for them and in which order, and what dead holders left to clean. Pure: `vsperf.pool.hostlock`
reads and writes it on the host, atomically.

Resources: ``dut`` (the host as a testbed's DUT host: nobody else may use the host at all) and
``port:IFNAME`` / ``location:LOC`` (one generator port: two runs may use one generator host on
different ports). A run holds its resources of one host in one `Hold`.

Time is the host's only. `HostClock` is what the host said when the state was read: its boot
id and its uptime (/proc/uptime, a monotonic clock). A lease records the host's uptime at its
last renewal; it has expired once the host has been up `lease_s` longer, or has booted since.
The controller's clock is shown (when a run started), never compared: leases do not depend on
the controller's and the host's clocks agreeing.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

RESOURCE_DUT = "dut"
STATE_END = "#end"  # the state file's last line: a file cut short is never taken for a state


def port_resource(interface: str) -> str:
    """The resource of generator port `interface`."""
    return f"port:{interface}"


def location_resource(location: str) -> str:
    """The resource of a hardware generator's port `location`."""
    return f"location:{location}"


def conflict(a: str, b: str) -> bool:
    """True when two runs may not hold `a` and `b` at once (on one host)."""
    return a == b or RESOURCE_DUT in (a, b)


def overlap(mine: Iterable[str], theirs: Iterable[str]) -> bool:
    """True when any of `mine` conflicts with any of `theirs`."""
    theirs = tuple(theirs)
    return any(conflict(a, b) for a in mine for b in theirs)


class StateError(ValueError):
    """A lock state file that is not one (one line: what is wrong)."""


@dataclass(frozen=True)
class HostClock:
    """The host's clock as the host read it: its boot and its uptime (seconds)."""

    boot_id: str
    uptime_s: float


@dataclass(frozen=True)
class Lease:
    """Renewed at host uptime `renewed_s` of boot `boot_id`; valid for `lease_s` after that."""

    boot_id: str
    renewed_s: float
    lease_s: float

    @classmethod
    def start(cls, clock: HostClock, lease_s: float) -> Lease:
        return cls(clock.boot_id, clock.uptime_s, lease_s)

    def age_s(self, clock: HostClock) -> float | None:
        """Seconds since the last renewal, by the host's clock (None: the host booted since)."""
        return clock.uptime_s - self.renewed_s if clock.boot_id == self.boot_id else None

    def expired(self, clock: HostClock) -> bool:
        age = self.age_s(clock)
        return age is None or age > self.lease_s


@dataclass(frozen=True)
class Holder:
    """Who holds (or waits for) a lock: what `vsperf testbed status` and a busy run show."""

    run_id: str
    token: str  # random, one per run: what the lock compares (run ids are short)
    user: str
    controller: str  # the host name of the machine vsperf runs on
    pid: int
    started: str  # ISO 8601 on the controller's clock: shown, never compared
    testbed: str  # the testbed file as the holder named it
    tests: tuple[str, ...] = ()
    # Where its process runs: the controller's boot id and PID namespace (inode), and the
    # process's start time (clock ticks). On that same controller a holder whose process is gone
    # is dead at once; elsewhere only its lease says so.
    boot_id: str = ""
    pid_ns: int = 0
    start_ticks: int = 0

    def describe(self) -> str:
        """`run abc123 (alice@ctl1, pid 4242, started 2024-05-01 12:00:01 by its controller's clock)`."""
        started = self.started.replace("T", " ")[:19]
        return f"run {self.run_id} ({self.user}@{self.controller}, pid {self.pid}, started {started} by its " \
               f"controller's clock)"

    def as_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "token": self.token, "user": self.user, "controller": self.controller,
                "pid": self.pid, "started": self.started, "testbed": self.testbed, "tests": list(self.tests),
                "boot_id": self.boot_id, "pid_ns": self.pid_ns, "start_ticks": self.start_ticks}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Holder:
        return cls(str(data["run_id"]), str(data["token"]), str(data["user"]), str(data["controller"]),
                   int(data["pid"]), str(data["started"]), str(data["testbed"]),
                   tuple(str(t) for t in data.get("tests", ())), str(data.get("boot_id", "")),
                   int(data.get("pid_ns", 0)), int(data.get("start_ticks", 0)))


@dataclass(frozen=True)
class Hold:
    """`holder` holds `resources` of this host under `lease`; `journal`: its journal's entries
    for this host (a mirror, so that whoever takes over after it died can clean up)."""

    holder: Holder
    resources: tuple[str, ...]
    lease: Lease
    journal: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class Ticket:
    """`holder` waits for `resources` of this host; tickets are served in `number` order."""

    number: int
    holder: Holder
    resources: tuple[str, ...]
    lease: Lease


@dataclass(frozen=True)
class Leftover:
    """What a dead holder of `resources` left on this host (its journal's entries), to be
    cleaned by whoever takes any of those resources next."""

    holder: Holder
    resources: tuple[str, ...]
    journal: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class LockState:
    """Every lock of one host; `version` is new with every change (0: the empty state; see
    vsperf.pool.hostlock)."""

    version: int = 0
    holds: tuple[Hold, ...] = ()
    tickets: tuple[Ticket, ...] = ()
    leftovers: tuple[Leftover, ...] = ()
    next_ticket: int = 1
    log: tuple[str, ...] = field(default=())  # forced unlocks, newest last (at most LOG_LINES)

    @property
    def empty(self) -> bool:
        """True when nothing is held, awaited, left or logged (its file is then removed)."""
        return not (self.holds or self.tickets or self.leftovers or self.log)

    def hold_of(self, token: str) -> Hold | None:
        return next((h for h in self.holds if h.holder.token == token), None)

    def ticket_of(self, token: str) -> Ticket | None:
        return next((t for t in self.tickets if t.holder.token == token), None)

    # --- the file -------------------------------------------------------------------------------

    def to_text(self) -> str:
        """The state file: its version, one line of JSON, the end mark."""
        body = {
            "holds": [{"holder": h.holder.as_dict(), "resources": list(h.resources), "lease": _lease(h.lease),
                       "journal": [dict(e) for e in h.journal]} for h in self.holds],
            "tickets": [{"number": t.number, "holder": t.holder.as_dict(), "resources": list(t.resources),
                         "lease": _lease(t.lease)} for t in self.tickets],
            "leftovers": [{"holder": o.holder.as_dict(), "resources": list(o.resources),
                           "journal": [dict(e) for e in o.journal]} for o in self.leftovers],
            "next_ticket": self.next_ticket,
            "log": list(self.log),
        }
        return f"{self.version}\n{json.dumps(body, separators=(',', ':'))}\n{STATE_END}\n"

    @classmethod
    def from_text(cls, version: str, body: str) -> LockState:
        """The state of a file's version line and JSON line ("" : an empty state of that version)."""
        try:
            number = int(version or 0)
            data = json.loads(body) if body.strip() else {}
            if not isinstance(data, dict):
                raise StateError("not a JSON object")
            return cls(
                version=number,
                holds=tuple(Hold(Holder.from_dict(h["holder"]), _strs(h["resources"]), _lease_of(h["lease"]),
                                 tuple(h.get("journal", ()))) for h in data.get("holds", ())),
                tickets=tuple(Ticket(int(t["number"]), Holder.from_dict(t["holder"]), _strs(t["resources"]),
                                     _lease_of(t["lease"])) for t in data.get("tickets", ())),
                leftovers=tuple(Leftover(Holder.from_dict(o["holder"]), _strs(o["resources"]),
                                         tuple(o.get("journal", ()))) for o in data.get("leftovers", ())),
                next_ticket=int(data.get("next_ticket", 1)),
                log=_strs(data.get("log", ())),
            )
        except StateError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise StateError(f"not a vsperf lock state ({type(exc).__name__}: {exc})") from None


def _lease(lease: Lease) -> dict[str, Any]:
    return {"boot_id": lease.boot_id, "renewed_s": lease.renewed_s, "lease_s": lease.lease_s}


def _lease_of(data: Mapping[str, Any]) -> Lease:
    return Lease(str(data["boot_id"]), float(data["renewed_s"]), float(data["lease_s"]))


def _strs(values: Sequence[Any]) -> tuple[str, ...]:
    if isinstance(values, str) or not isinstance(values, list | tuple):
        raise TypeError(f"expected a list, got {values!r}")
    return tuple(str(v) for v in values)


# --- decisions ------------------------------------------------------------------------------------

LOG_LINES = 50


@dataclass(frozen=True)
class Blocked:
    """Why resources cannot be taken now: live holds of others on them, or others who wait for
    them and came first. Empty: they can be taken."""

    holds: tuple[Hold, ...] = ()
    ahead: tuple[Ticket, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.holds or self.ahead)


def blocked(state: LockState, clock: HostClock, token: str, resources: Sequence[str], *,
            queue: bool, dead: Collection[str] = ()) -> Blocked:
    """What keeps `token` from taking `resources` now. With `queue` (the host where the
    testbed's waiters queue: its DUT host) the live tickets of others for conflicting resources
    count too: those numbered before `token`'s own ticket, or all of them when it has none (a
    run that arrives now does not pass those already waiting). `dead`: tokens of holders known
    to be gone (their process, on the caller's own controller), whatever their lease says."""
    holds = tuple(h for h in state.holds if h.holder.token != token and not h.lease.expired(clock)
                  and h.holder.token not in dead and overlap(resources, h.resources))
    ahead: tuple[Ticket, ...] = ()
    if queue:
        mine = state.ticket_of(token)
        ahead = tuple(t for t in state.tickets if t.holder.token != token and not t.lease.expired(clock)
                      and t.holder.token not in dead and overlap(resources, t.resources)
                      and (mine is None or t.number < mine.number))
    return Blocked(holds, tuple(sorted(ahead, key=lambda t: t.number)))


def take(state: LockState, clock: HostClock, holder: Holder, resources: Sequence[str],
         lease_s: float, dead: Collection[str] = ()) -> tuple[LockState, tuple[Hold, ...]]:
    """`holder` takes `resources` (the caller checked `blocked`); the holds of others on them
    whose lease expired (or whose token is in `dead`) are taken over: their resources freed,
    what they left kept as leftovers. Returns the new state and the holds taken over."""
    dead_holds = tuple(h for h in state.holds if h.holder.token != holder.token
                       and (h.lease.expired(clock) or h.holder.token in dead) and overlap(resources, h.resources))
    kept = tuple(h for h in state.holds if h not in dead_holds and h.holder.token != holder.token)
    mine = Hold(holder, tuple(resources), Lease.start(clock, lease_s))
    leftovers = state.leftovers + tuple(Leftover(h.holder, h.resources, h.journal) for h in dead_holds if h.journal)
    return replace(state, holds=(*kept, mine), leftovers=leftovers), dead_holds


class LeaseLost(Exception):
    """The holder's lock is not on the host any more (taken over after its lease expired, or
    unlocked by someone with --force)."""


def renew(state: LockState, clock: HostClock, token: str, journal: Sequence[Mapping[str, Any]] | None) -> LockState:
    """`token`'s lease renewed (and its journal mirror replaced, unless None); LeaseLost when
    it holds nothing here any more, or its lease expired (someone may have taken over)."""
    hold = state.hold_of(token)
    if hold is None:
        raise LeaseLost("the lock is gone: another run took it over, or it was unlocked with --force")
    if hold.lease.expired(clock):
        age = hold.lease.age_s(clock)
        why = "the host booted since" if age is None else f"not renewed for {age:.0f} s"
        raise LeaseLost(f"the lease expired ({why}; lease {hold.lease.lease_s:g} s)")
    new = replace(hold, lease=Lease.start(clock, hold.lease.lease_s),
                  journal=hold.journal if journal is None else tuple(dict(e) for e in journal))
    return replace(state, holds=tuple(new if h is hold else h for h in state.holds))


def drop(state: LockState, token: str) -> LockState:
    """`token`'s hold and ticket removed (a run that ends, or gives a testbed back)."""
    return replace(state, holds=tuple(h for h in state.holds if h.holder.token != token),
                   tickets=tuple(t for t in state.tickets if t.holder.token != token))


def enqueue(state: LockState, clock: HostClock, holder: Holder, resources: Sequence[str],
            lease_s: float) -> LockState:
    """`holder` waits for `resources`: a new ticket at the end of the queue, or its ticket's
    lease renewed. Tickets of waiters that stopped renewing are dropped."""
    live = tuple(t for t in state.tickets if not t.lease.expired(clock))
    mine = next((t for t in live if t.holder.token == holder.token), None)
    if mine is not None:
        renewed = replace(mine, lease=Lease.start(clock, lease_s))
        return replace(state, tickets=tuple(renewed if t is mine else t for t in live))
    ticket = Ticket(state.next_ticket, holder, tuple(resources), Lease.start(clock, lease_s))
    return replace(state, tickets=(*live, ticket), next_ticket=state.next_ticket + 1)


def leftovers_on(state: LockState, resources: Sequence[str]) -> tuple[Leftover, ...]:
    """The leftovers whose resources conflict with `resources`: the taker's to clean."""
    return tuple(o for o in state.leftovers if overlap(resources, o.resources))


def cleaned(state: LockState, leftover: Leftover, remaining: Sequence[Mapping[str, Any]]) -> LockState:
    """`leftover` cleaned: dropped, or kept with the entries that could not be undone."""
    others = tuple(o for o in state.leftovers if o.holder.token != leftover.holder.token)
    if remaining:
        others += (replace(leftover, journal=tuple(dict(e) for e in remaining)),)
    return replace(state, leftovers=others)


def unlock(state: LockState, resources: Sequence[str], line: str) -> tuple[LockState, tuple[Hold, ...]]:
    """Every hold on `resources` removed by force (what it left kept as a leftover), `line`
    added to the host's log of forced unlocks. Returns the new state and the holds removed."""
    gone = tuple(h for h in state.holds if overlap(resources, h.resources))
    leftovers = state.leftovers + tuple(Leftover(h.holder, h.resources, h.journal) for h in gone if h.journal)
    return replace(state, holds=tuple(h for h in state.holds if h not in gone), leftovers=leftovers,
                   log=(*state.log, line)[-LOG_LINES:]), gone
