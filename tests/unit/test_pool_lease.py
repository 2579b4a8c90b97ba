"""The holder's lease keeper: renews every quarter of the lease, mirrors the journal soon after
it changes, and calls on_lost once, with one line, when the lock is gone, a host connection is
lost, or no renewal worked (or answered) for three quarters of the lease."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from vsperf.errors import CommandError
from vsperf.host.journal import Entry, Journal, Owner
from vsperf.pool.lease import LeaseKeeper
from vsperf.pool.state import Holder, LeaseLost
from vsperf.pool.testbedlock import TestbedLock
from vsperf.remote.connection import HostLostError


class StubLock:
    """What the keeper uses of a TestbedLock; `fail` decides what each renewal does."""

    testbed = "lab.yaml"
    holder = Holder("abc123", "t", "alice", "ctl1", 1, "2031-01-01T00:00:00", "lab.yaml")

    def __init__(self, lease_s: float, fail: Any = None) -> None:
        self.lease_s = lease_s
        self.fail = fail
        self.renewed: list[Mapping[str, Sequence[Mapping[str, Any]]] | None] = []

    def renew(self, journals: Mapping[str, Sequence[Mapping[str, Any]]] | None = None) -> None:
        self.renewed.append(journals)
        if callable(self.fail):
            self.fail()
        elif self.fail is not None:
            raise self.fail


def keeper(lock: StubLock, journal: Journal | None = None) -> tuple[LeaseKeeper, list[str]]:
    lost: list[str] = []
    return LeaseKeeper(cast(TestbedLock, lock), journal, lost.append).start(), lost


def wait_for(condition: Any, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)


def test_renews_every_quarter_of_the_lease_until_stopped() -> None:
    lock = StubLock(lease_s=0.8)
    running, lost = keeper(lock)
    time.sleep(1.1)
    running.stop()
    count = len(lock.renewed)
    assert 3 <= count <= 6 and lost == [] and running.renewals in (count - 1, count)  # the last one may be under way
    time.sleep(0.4)
    assert len(lock.renewed) == count  # stopped


def test_the_journal_is_mirrored_by_host_soon_after_it_changes(tmp_path: Path) -> None:
    journal = Journal("abc123", root=tmp_path, owner=Owner(1, 1))
    lock = StubLock(lease_s=600)  # no renewal is due for 150 s
    running, _lost = keeper(lock, journal)
    try:
        journal.record(Entry("netns", "dut", "vspabc123s"))
        journal.record(Entry("port", "gen", "ens2f0"))
        wait_for(lambda: bool(lock.renewed and lock.renewed[-1] and len(lock.renewed[-1]) == 2))
        mirrored = lock.renewed[-1]
        assert mirrored is not None
        assert {h: [e["name"] for e in entries] for h, entries in mirrored.items()} == {"dut": ["vspabc123s"],
                                                                                        "gen": ["ens2f0"]}
    finally:
        running.stop()


def test_a_lock_taken_away_is_lost_at_once_in_one_line() -> None:
    running, lost = keeper(StubLock(0.8, LeaseLost("host dut: the lock is gone: another run took it over")))
    wait_for(lambda: lost)
    running.stop()
    assert lost == ["testbed lab.yaml: lost its lock on host dut: the lock is gone: another run took it over"]


def test_a_lost_connection_stops_the_run_before_the_lease_can_expire() -> None:
    error = HostLostError("lost the SSH connection to host dut (root@198.18.0.2:22)")
    started = time.monotonic()
    running, lost = keeper(StubLock(1.6, error))
    wait_for(lambda: lost)
    elapsed = time.monotonic() - started
    running.stop()
    assert 1.0 < elapsed < 1.6  # meanwhile the run's own commands on that host fail its test, in one line
    assert lost == ["testbed lab.yaml: its lock not renewed for 1 s (lease 1.6 s): lost the SSH connection to host "
                    "dut (root@198.18.0.2:22)"]


def test_failed_renewals_stop_the_run_before_the_lease_can_expire() -> None:
    started = time.monotonic()
    running, lost = keeper(StubLock(1.6, CommandError(["sh"], 1, "no route to host")))
    wait_for(lambda: lost)
    elapsed = time.monotonic() - started
    running.stop()
    assert 1.0 < elapsed < 1.6  # three quarters of the lease: before another run may take over
    assert len(lost) == 1 and lost[0].startswith("testbed lab.yaml: its lock not renewed for 1 s (lease 1.6 s): ")


def test_a_host_that_never_answers_stops_the_run_too() -> None:
    hang = threading.Event()
    started = time.monotonic()
    running, lost = keeper(StubLock(1.6, lambda: hang.wait(30)))
    wait_for(lambda: lost)
    elapsed = time.monotonic() - started
    hang.set()
    running.stop()
    assert 1.0 < elapsed < 1.6
    assert lost == ["testbed lab.yaml: its lock not renewed for 1 s (lease 1.6 s): no answer from its hosts"]
