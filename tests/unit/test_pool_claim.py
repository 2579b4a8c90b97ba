"""Claiming a run's testbed from its pool: the first free suitable one, what was skipped and why,
a busy testbed in one line naming its holder (nothing touched), waiting in arrival order, the
lock held until the hosts are released. Testbeds here are this machine with one lock directory
each (the hosts' opening is RunHosts.open on a cable-less copy: no port is checked)."""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from settings_util import make_settings

from vsperf.backends import build_registries
from vsperf.catalog import Catalog
from vsperf.errors import UserError
from vsperf.executor import CommandLog, LocalExecutor
from vsperf.host.hosts import RunHosts
from vsperf.pool import claim as claim_module
from vsperf.pool.claim import Claim, ClaimRequest, NoTestbedError, claim_testbed, spare_for_me
from vsperf.pool.hostlock import LockPlace, read_state
from vsperf.pool.state import Blocked, Hold, Holder, HostClock, Lease, Ticket
from vsperf.pool.testbedlock import Busy, LockSite, TestbedLock
from vsperf.run.plan import PlannedTest, plan_tests
from vsperf.testbed.file import load_testbed

REGS = build_registries()
TESTBED = """
hosts:
  local: {{lock_dir: {locks}}}
dut_host: local
trafficgen_host: local
ports:
  - dut: {{interface: zz{n}a0}}
    trafficgen: {{interface: zz{n}b0}}
"""


def plan(**settings: Any) -> list[PlannedTest]:
    values = make_settings({"TRAFFICGEN": "dummy", **settings})
    return plan_tests([Catalog.load().get("phy2phy_tput")], values, REGS)


@pytest.fixture
def beds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Three testbed files; opening one connects nothing and checks no port."""
    def open_hosts(_plan: Any, testbed_file: str, *, run_id: str, command_log: CommandLog, claim: Any = None,
                   **_kw: Any) -> RunHosts:
        testbed = replace(load_testbed(Path(testbed_file)), cables=())
        if "unsuitable" in testbed_file:
            raise UserError(f"testbed {testbed_file}: hosts and ports checked, but test phy2phy_tput: no switch")
        return RunHosts.open(testbed, run_id=run_id, command_log=command_log, state_root=tmp_path / "state",
                             claim=claim)
    monkeypatch.setattr(claim_module, "open_hosts", open_hosts)
    monkeypatch.setattr(claim_module, "POLL_S", 0.05)
    files = []
    for n, name in enumerate(("one", "two", "unsuitable")):
        path = tmp_path / f"{name}.yaml"
        path.write_text(TESTBED.format(locks=tmp_path / f"locks-{name}", n=n))
        files.append(path)
    return files


def request(files: list[Path], run_id: str = "run1", **kw: Any) -> ClaimRequest:
    return ClaimRequest(plan(), REGS, tuple(str(f) for f in files), run_id, CommandLog(None), **kw)


def hold(path: Path, run_id: str = "other") -> TestbedLock:
    """Another run's lock on testbed `path`."""
    lock_dir = str(path.parent / f"locks-{path.stem}")
    holder = Holder(run_id, f"t-{run_id}", "bob", "ctl2", 777, "2031-01-01T08:00:00+00:00", str(path))
    lock = TestbedLock(str(path), (LockSite("local", LockPlace(LocalExecutor(), lock_dir), ("dut",), True),),
                       holder, 60)
    assert lock.take() is None
    return lock


def queued(path: Path, run_id: str) -> TestbedLock:
    """Another run waiting for testbed `path` (its ticket, as a waiter of a pool leaves one)."""
    lock_dir = str(path.parent / f"locks-{path.stem}")
    holder = Holder(run_id, f"t-{run_id}", "carol", "ctl3", 778, "2031-01-01T08:00:00+00:00", str(path))
    lock = TestbedLock(str(path), (LockSite("local", LockPlace(LocalExecutor(), lock_dir), ("dut",), True),),
                       holder, 60)
    lock.queue()
    return lock


def held_by(path: Path) -> list[str]:
    state, _ = read_state(LockPlace(LocalExecutor(), str(path.parent / f"locks-{path.stem}")))
    return [h.holder.run_id for h in state.holds]


def test_given_testbeds_of_the_setting() -> None:
    files = claim_module.given_testbeds
    assert files("") == () and files("a.yaml") == ("a.yaml",)
    assert files(["a.yaml", "b.yaml"]) == ("a.yaml", "b.yaml")


def test_one_testbed_is_locked_until_its_hosts_are_released(beds: list[Path]) -> None:
    claim = claim_testbed(request(beds[:1]))
    try:
        assert claim.testbed == str(beds[0]) and held_by(beds[0]) == ["run1"]
        assert claim.keeper is not None and claim.hosts is not None
        record = claim.record()
        assert record is not None and (record["name"], record["skipped"], record["lease_s"]) == ("one", [], 60.0)
    finally:
        claim.close()
    assert held_by(beds[0]) == []


def test_a_traffic_only_run_leaves_the_users_dut_host_unlocked(beds: list[Path]) -> None:
    """--mode trafficgen: the DUT is the user's; another run's hold on it does not stop this run,
    which holds its generator ports only (none here: one host, no cables)."""
    other = hold(beds[0])
    only = replace(request(beds[:1]), plan=plan_tests([Catalog.load().get("phy2phy_tput")],
                                                      make_settings({"TRAFFICGEN": "dummy"}), REGS, traffic_only=True))
    assert only.traffic_only and not request(beds[:1]).traffic_only
    claim = claim_testbed(only)
    try:
        assert claim.testbed == str(beds[0]) and held_by(beds[0]) == ["other", "run1"]
        state, _ = read_state(LockPlace(LocalExecutor(), str(beds[0].parent / "locks-one")))
        assert [h.resources for h in state.holds] == [("dut",), ()]
    finally:
        claim.close()
        other.release()


def test_a_busy_testbed_is_one_line_naming_its_holder_and_nothing_is_touched(beds: list[Path]) -> None:
    other = hold(beds[0])
    with pytest.raises(NoTestbedError) as info:
        claim_testbed(request(beds[:1]))
    assert str(info.value) == (
        f"testbed {beds[0]} is busy: host local is held by run other (bob@ctl2, pid 777, started 2031-01-01 08:00:00 "
        f"by its controller's clock), its lease renewed 0 s ago; wait for it with --testbed-wait SECONDS, or see "
        f"vsperf testbed status {beds[0]}")
    assert held_by(beds[0]) == ["other"] and not (beds[0].parent / "state").exists()
    other.release()


def test_a_pool_takes_the_first_free_suitable_testbed_and_says_what_it_skipped(
        beds: list[Path], caplog: pytest.LogCaptureFixture) -> None:
    other = hold(beds[0])
    with caplog.at_level(logging.INFO):
        claim = claim_testbed(request([beds[2], beds[0], beds[1]]))
    try:
        assert claim.testbed == str(beds[1]) and held_by(beds[1]) == ["run1"]
        assert [(s.path, s.reason) for s in claim.skipped] == [(str(beds[2]), "unsuitable"), (str(beds[0]), "busy")]
        record = claim.record()
        assert record is not None and record["pool"] == [str(beds[2]), str(beds[0]), str(beds[1])]
        assert "no switch" in record["skipped"][0]["why"] and "run other (bob@ctl2" in record["skipped"][1]["why"]
        assert any(r.getMessage().startswith(f"testbed {beds[1]} taken (skipped: {beds[2]} unsuitable (")
                   for r in caplog.records)
    finally:
        claim.close()
        other.release()


def test_when_no_testbed_of_a_pool_can_be_taken_one_line_says_why_for_each(beds: list[Path]) -> None:
    others = [hold(beds[0]), hold(beds[1], "third")]
    with pytest.raises(NoTestbedError, match=rf"^no testbed of 3 could be taken: {beds[0]} busy \(host local is held "
                                             rf"by run other .*\); {beds[1]} busy \(.*run third .*\); {beds[2]} "
                                             rf"unsuitable \(.*no switch\); wait for one with --testbed-wait SECONDS$"):
        claim_testbed(request(beds))
    for lock in others:
        lock.release()


def test_a_single_unsuitable_testbed_keeps_its_own_message(beds: list[Path]) -> None:
    with pytest.raises(UserError, match=r"^testbed .*unsuitable\.yaml: hosts and ports checked, but test "):
        claim_testbed(request(beds[2:]))


def test_waiting_takes_the_testbed_once_its_holder_ends_and_says_so_meanwhile(
        beds: list[Path], caplog: pytest.LogCaptureFixture) -> None:
    other = hold(beds[0])
    threading.Timer(0.6, other.release).start()
    started = time.monotonic()
    with caplog.at_level(logging.INFO):
        claim = claim_testbed(request(beds[:1], wait_s=30))
    try:
        elapsed = time.monotonic() - started
        assert 0.5 < elapsed < 10 and held_by(beds[0]) == ["run1"]
        assert any(re.match(rf"waiting for a testbed \(\d+ s of 30 s\): {beds[0]} busy \(host local is held by run "
                            r"other", r.getMessage()) for r in caplog.records)
        record = claim.record()
        assert record is not None and 0.1 < record["waited_s"] <= elapsed
        state, _ = read_state(LockPlace(LocalExecutor(), str(beds[0].parent / "locks-one")))
        assert state.tickets == ()  # its place in the queue given up
    finally:
        claim.close()


def test_waiting_ends_after_the_wait_with_one_line(beds: list[Path]) -> None:
    other = hold(beds[0])
    started = time.monotonic()
    with pytest.raises(NoTestbedError, match=rf"^testbed {beds[0]} is busy \(waited 1 s\): host local is held by run "
                                             r"other"):
        claim_testbed(request(beds[:1], wait_s=0.8))
    assert time.monotonic() - started < 5
    state, _ = read_state(LockPlace(LocalExecutor(), str(beds[0].parent / "locks-one")))
    assert state.tickets == ()  # withdrawn
    other.release()


def test_a_look_while_waiting_reads_each_machine_once(beds: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Two busy testbeds on this machine (a lock directory each, a probe and an executor each):
    every look reads both lock directories with one command, not one per testbed."""
    others = [hold(beds[0]), hold(beds[1])]
    reads: list[list[str]] = []
    real = claim_module.read_states

    def counted(executor: Any, lock_dirs: Any) -> Any:
        reads.append(list(lock_dirs))
        return real(executor, lock_dirs)
    monkeypatch.setattr(claim_module, "read_states", counted)
    with pytest.raises(NoTestbedError, match=r"^no testbed of 2 could be taken \(waited 1 s\)"):
        claim_testbed(request(beds[:2], wait_s=0.6))
    both = sorted(str(b.parent / f"locks-{b.stem}") for b in beds[:2])
    assert reads and all(r == both for r in reads), reads
    for other in others:
        other.release()


def test_a_waiting_run_that_finds_a_free_testbed_at_its_first_look_never_queues(
        beds: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool of a busy and a free testbed: the free one is taken at once, and no ticket is
    written or withdrawn anywhere (a ticket on every testbed of the pool, then its withdrawal,
    is two writes per testbed: it made a pool of 20 serve jobs slower than one testbed)."""
    other = hold(beds[0])
    changes: list[str] = []
    for name in ("queue", "withdraw"):
        real = getattr(TestbedLock, name)
        monkeypatch.setattr(TestbedLock, name, lambda self, real=real, name=name: (changes.append(name), real(self))[1])
    try:
        claim = claim_testbed(request(beds[:2], wait_s=20))
        try:
            assert claim.testbed == str(beds[1]) and changes == []
        finally:
            claim.close()
        other.release()
        other = hold(beds[1])  # now the only one free is the first: still taken at once
        claim = claim_testbed(request(beds[:2], run_id="run2", wait_s=20))
        try:
            assert claim.testbed == str(beds[0]) and changes == []
        finally:
            claim.close()
    finally:
        other.release()


def test_free_testbeds_go_to_the_waiters_ahead_one_each_not_all_to_the_first() -> None:
    clock = HostClock("boot1", 100.0)
    lease = Lease.start(clock, 60)

    def who(run_id: str) -> Holder:
        return Holder(run_id, f"t-{run_id}", "u", "c", 1, "2031-01-01T08:00:00+00:00", "")

    def waited(*run_ids: str) -> Busy:
        return Busy("bed", "local", Blocked((), tuple(Ticket(n, who(r), ("dut",), lease)
                                                       for n, r in enumerate(run_ids))), clock)
    held = Busy("bed", "local", Blocked((Hold(who("h"), ("dut",), lease),)), clock)
    a, b, c = Path("a.yaml"), Path("b.yaml"), Path("c.yaml")
    assert spare_for_me({a: waited("w1"), b: waited("w1")}) == {a, b}  # w1 takes one of two
    assert spare_for_me({a: waited("w1"), b: waited("w2")}) == frozenset()  # two waiters, two testbeds
    assert spare_for_me({a: waited("w1"), b: waited("w1", "w2"), c: waited("w2")}) == {a, b, c}
    assert spare_for_me({a: waited("w1"), b: held}) == frozenset()  # a held testbed is never spare
    assert spare_for_me({}) == frozenset()


def test_a_waiter_queued_on_every_testbed_does_not_keep_them_all(beds: list[Path]) -> None:
    """A pool of two free testbeds, another run queued on both (it takes one): this run takes
    the other at once; with one testbed only, it waits behind that run."""
    ahead = [queued(beds[0], "ahead"), queued(beds[1], "ahead")]
    try:
        started = time.monotonic()
        claim = claim_testbed(request(beds[:2], wait_s=20))
        try:
            assert claim.testbed in (str(beds[0]), str(beds[1])) and time.monotonic() - started < 10
        finally:
            claim.close()
        with pytest.raises(NoTestbedError, match=r"1 run waits for it first \(the first: run ahead"):
            claim_testbed(request(beds[:1], run_id="run2", wait_s=0.8))
    finally:
        for lock in ahead:
            lock.withdraw()


def test_waiters_are_served_in_arrival_order(beds: list[Path]) -> None:
    other = hold(beds[0])
    order: list[str] = []
    claims: list[Claim] = []

    def run(run_id: str) -> None:
        claim = claim_testbed(request(beds[:1], run_id=run_id, wait_s=30))
        order.append(run_id)
        time.sleep(0.2)
        claims.append(claim)
        claim.close()

    first = threading.Thread(target=run, args=("first",))
    first.start()
    time.sleep(0.5)  # "first" is queued before "second" arrives
    second = threading.Thread(target=run, args=("second",))
    second.start()
    time.sleep(0.5)
    other.release()
    first.join(30)
    second.join(30)
    assert order == ["first", "second"]


def test_the_local_lab_claims_no_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claim_module, "open_hosts", lambda *a, **kw: None)
    claim = claim_testbed(ClaimRequest(plan(), REGS, (), "run1", CommandLog(None)))
    assert claim.hosts is None and claim.lock is None and claim.record() is None
    claim.close()
