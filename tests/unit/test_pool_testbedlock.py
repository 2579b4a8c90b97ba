"""A testbed's lock over its hosts (here: this machine, one lock directory per "host"): all or
nothing, the DUT host first; a dead holder taken over and what it left cleaned through the one
release path; leases renewed with the journal mirrored; the lock given back."""

from __future__ import annotations

import logging
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from vsperf.executor import LocalExecutor
from vsperf.host.journal import Entry
from vsperf.host.proc import local_stat
from vsperf.pool import state as st
from vsperf.pool.hostlock import LockPlace, change, read_state
from vsperf.pool.state import Holder, HostClock, LeaseLost, LockState
from vsperf.pool.testbedlock import LockSite, TestbedBusyError, TestbedLock, gone_here, lock_sites, this_controller
from vsperf.remote.connection import SshHost
from vsperf.testbed.model import Cable, DutPort, GenPortSpec, Testbed, TestbedHost


def holder(run_id: str) -> Holder:
    return Holder(run_id, f"token-{run_id}", "alice", "ctl1", 4242, "2031-05-01T12:00:01+00:00", "lab.yaml")


def sites(tmp_path: Path, gen_ports: tuple[str, ...] = ("port:b0", "port:b1")) -> tuple[LockSite, ...]:
    executor = LocalExecutor()
    return (LockSite("dut", LockPlace(executor, str(tmp_path / "dut")), ("dut",), True),
            LockSite("gen", LockPlace(executor, str(tmp_path / "gen")), gen_ports, False))


def lock(tmp_path: Path, run_id: str, lease_s: float = 60, **kw: tuple[str, ...]) -> TestbedLock:
    return TestbedLock("lab.yaml", sites(tmp_path, **kw), holder(run_id), lease_s)


def holders(tmp_path: Path, host: str) -> list[str]:
    return [h.holder.run_id for h in read_state(LockPlace(LocalExecutor(), str(tmp_path / host)))[0].holds]


def test_lock_sites_of_a_testbed() -> None:
    ssh = SshHost("tgen", "198.18.0.6")
    bed = Testbed("lab.yaml", (TestbedHost("dut", SshHost("dut", "198.18.0.2"), "/run/dut-locks"),
                               TestbedHost("tgen", ssh)), "dut", "tgen",
                  (Cable(DutPort("ens1f0", None, "kernel"), GenPortSpec("ens2f0", None)),
                   Cable(DutPort("ens1f1", None, "kernel"), GenPortSpec(None, "192.0.2.50;1;2"))))
    found = lock_sites(bed, {"dut": LocalExecutor(), "tgen": LocalExecutor()})
    assert [(s.host, s.place.lock_dir, s.resources, s.queue) for s in found] == [
        ("dut", "/run/dut-locks", ("dut",), True),
        ("tgen", "/run/vsperf/locks", ("port:ens2f0", "location:192.0.2.50;1;2"), False)]
    one_host = replace(bed, trafficgen_host="dut")
    assert [(s.host, s.resources) for s in lock_sites(one_host, {"dut": LocalExecutor()})] == [
        ("dut", ("dut", "port:ens2f0", "location:192.0.2.50;1;2"))]
    # --mode trafficgen: the DUT is the user's, nothing is written on its host
    only_ports = lock_sites(bed, {"dut": LocalExecutor(), "tgen": LocalExecutor()}, traffic_only=True)
    assert [(s.host, s.resources, s.queue) for s in only_ports] == [
        ("tgen", ("port:ens2f0", "location:192.0.2.50;1;2"), True)]


def test_taken_then_busy_for_the_next_naming_the_holder(tmp_path: Path) -> None:
    first = lock(tmp_path, "aaa")
    assert first.take() is None and first.taken
    assert holders(tmp_path, "dut") == ["aaa"] and holders(tmp_path, "gen") == ["aaa"]
    busy = lock(tmp_path, "bbb").take()
    assert busy is not None and busy.host == "dut" and busy.holder.run_id == "aaa"
    assert str(TestbedBusyError(busy)) == (
        "testbed lab.yaml is busy: host dut is held by run aaa (alice@ctl1, pid 4242, started 2031-05-01 12:00:01 "
        "by its controller's clock), its lease renewed 0 s ago; wait for it with --testbed-wait SECONDS, or see "
        "vsperf testbed status lab.yaml")
    first.release()
    assert holders(tmp_path, "dut") == [] and holders(tmp_path, "gen") == [] and not first.taken
    assert lock(tmp_path, "bbb").take() is None


def test_all_or_nothing_a_busy_generator_port_gives_the_dut_host_back(tmp_path: Path) -> None:
    other = TestbedLock("other.yaml", (sites(tmp_path)[1],), holder("ccc"), 60)  # holds port b1 on gen
    other.sites = (replace(other.sites[0], resources=("port:b1",)),)
    assert other.take() is None
    busy = lock(tmp_path, "aaa").take()
    assert busy is not None and busy.host == "gen" and busy.holder.run_id == "ccc"
    assert holders(tmp_path, "dut") == []  # rolled back
    # another testbed on other ports of the same generator host runs at once
    assert TestbedLock("lab2.yaml", sites(tmp_path, gen_ports=("port:b2",))[1:], holder("ddd"), 60).take() is None


def test_a_dead_holder_is_taken_over_in_one_line_and_what_it_left_is_cleaned(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    dead = lock(tmp_path, "aaa", lease_s=3)
    assert dead.take() is None
    left = Path(f"/tmp/vsperf-aaa-{tmp_path.name[-6:]}")  # a directory the dead run made, by its name
    left.mkdir()
    try:
        entry = Entry("dir", "dut-as-it-named-it", str(left))
        dead.renew({"dut": [entry.as_dict()]})
        # its lease expires (by the host's clock: the test moves the recorded renewal back)
        for site in dead.sites:
            change(site.place, lambda s, c: (_age(s, 10.0), None))
        taker = lock(tmp_path, "bbb")
        with caplog.at_level(logging.WARNING):
            assert taker.take() is None
        assert [(host, h.holder.run_id) for host, h in taker.taken_over] == [("dut", "aaa"), ("gen", "aaa")]
        lines = [r.getMessage() for r in caplog.records if "taking over" in r.getMessage()]
        assert lines[0].startswith("testbed lab.yaml: host dut: taking over from run aaa (alice@ctl1, pid 4242")
        assert "its lease expired (not renewed for 1" in lines[0] and "lease 3 s); cleaning what it left" in lines[0]
        assert left.exists()
        assert taker.clean_leftovers() == [f"run aaa: host dut: dir {left} removed"]
        assert not left.exists() and read_state(taker.sites[0].place)[0].leftovers == ()
    finally:
        if left.exists():
            left.rmdir()


def _age(state: LockState, seconds: float) -> LockState:
    holds = tuple(replace(h, lease=replace(h.lease, renewed_s=h.lease.renewed_s - seconds)) for h in state.holds)
    return replace(state, holds=holds)


def test_renewing_mirrors_each_hosts_entries_and_a_lost_lock_names_the_host(tmp_path: Path) -> None:
    mine = lock(tmp_path, "aaa")
    assert mine.take() is None
    mine.renew({"dut": [{"kind": "netns", "host": "dut", "name": "vspaaas"}], "gen": []})
    dut_hold = read_state(mine.sites[0].place)[0].holds[0]
    assert [e["name"] for e in dut_hold.journal] == ["vspaaas"]
    for site in mine.sites[1:]:  # someone unlocks the generator host by hand
        change(site.place, lambda s, c: (st.unlock(s, ("port:b0",), "by hand")[0], None))
    with pytest.raises(LeaseLost, match=r"^host gen: the lock is gone"):
        mine.renew(None)


def test_the_queue_lives_on_the_dut_host_and_a_newcomer_waits_behind_it(tmp_path: Path) -> None:
    holding, waiter = lock(tmp_path, "aaa"), lock(tmp_path, "bbb")
    assert holding.take() is None
    waiter.queue()
    holding.release()
    busy = lock(tmp_path, "ccc").take()  # free, but bbb waits for it first
    assert busy is not None and busy.blocked.ahead[0].holder.run_id == "bbb"
    assert "1 run waits for it first (the first: run bbb" in busy.describe()
    assert waiter.peek() is None and waiter.take() is None
    assert read_state(waiter.sites[0].place)[0].tickets == ()  # its place is given up once it holds


def test_a_traffic_only_run_and_a_full_run_exclude_each_other_by_the_ports_and_queue_fairly(
        tmp_path: Path) -> None:
    """A traffic-only run holds the generator ports on their host only; a full run of the same
    testbed (DUT host, then those ports) is kept out, and gives the DUT host back; a traffic-only
    run waiting on the generator host goes before a full run that arrives after it."""
    executor = LocalExecutor()
    ports_only = (LockSite("gen", LockPlace(executor, str(tmp_path / "gen")), ("port:b0", "port:b1"), True),)
    traffic = TestbedLock("lab.yaml", ports_only, holder("ttt"), 60)
    assert traffic.take() is None
    assert holders(tmp_path, "gen") == ["ttt"] and not (tmp_path / "dut").exists()  # nothing on the DUT host
    full = lock(tmp_path, "fff")
    busy = full.take()
    assert busy is not None and busy.host == "gen" and busy.holder.run_id == "ttt"
    assert holders(tmp_path, "dut") == []  # all or nothing
    traffic.release()
    # The other way round, with a traffic-only run waiting when the full run lets go:
    assert full.take() is None
    waiter = TestbedLock("lab.yaml", ports_only, holder("www"), 60)
    assert waiter.take() is not None
    waiter.queue()
    full.release()
    late = lock(tmp_path, "lll").take()  # free, but www waits for the ports first
    assert late is not None and late.host == "gen" and late.blocked.ahead[0].holder.run_id == "www"
    assert holders(tmp_path, "dut") == []
    assert waiter.take() is None and read_state(ports_only[0].place)[0].tickets == ()


def test_withdraw_and_release_are_quiet_when_there_is_nothing(tmp_path: Path) -> None:
    nothing = lock(tmp_path, "aaa")
    nothing.withdraw()
    nothing.release()
    assert read_state(nothing.sites[0].place)[0] == LockState()
    assert isinstance(read_state(nothing.sites[0].place)[1], HostClock)


def test_a_holder_of_this_controller_whose_process_is_gone_is_taken_over_at_once(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    child = subprocess.Popen(["sleep", "30"])
    boot, pid_ns = this_controller()
    ticks = local_stat(child.pid)
    assert ticks is not None
    gone = replace(holder("aaa"), pid=child.pid, boot_id=boot, pid_ns=pid_ns, start_ticks=ticks.start_ticks)
    dead = TestbedLock("lab.yaml", sites(tmp_path), gone, 600)
    assert dead.take() is None
    assert lock(tmp_path, "bbb").take() is not None  # its process runs: busy
    child.kill()
    child.wait()
    assert gone_here(gone) and not gone_here(holder("aaa"))  # a holder elsewhere: only its lease says
    with caplog.at_level(logging.WARNING):
        assert lock(tmp_path, "bbb").take() is None  # at once, not after its 600 s lease
    assert (f"taking over from run aaa (alice@ctl1, pid {child.pid}, started 2031-05-01 12:00:01 by its controller's "
            f"clock): its process is gone (pid {child.pid} on this controller); cleaning what it left first"
            ) in caplog.text


def test_what_a_run_of_this_controller_left_is_the_sweeps_to_clean(tmp_path: Path) -> None:
    dead = lock(tmp_path, "aaa", lease_s=3)
    assert dead.take() is None
    dead.renew({"dut": [Entry("dir", "dut", "/tmp/vsperf-aaa-logs").as_dict()]})
    for site in dead.sites:
        change(site.place, lambda s, c: (_age(s, 10.0), None))
    journal = tmp_path / "state" / "aaa" / "journal.json"
    journal.parent.mkdir(parents=True)
    journal.write_text("{}")  # its own journal is on this controller: RunHosts' sweep releases it
    taker = lock(tmp_path, "bbb")
    assert taker.take() is None
    assert taker.clean_leftovers(tmp_path / "state") == []
    assert read_state(taker.sites[0].place)[0].leftovers == ()


def test_a_testbed_taken_with_nothing_left_on_it_costs_no_read_to_clean(tmp_path: Path) -> None:
    taker = lock(tmp_path, "aaa")
    assert taker.take() is None
    commands: list[list[str]] = []
    executor = taker.sites[0].place.executor  # both "hosts" are this machine, through one executor
    original = executor.run

    def counting(argv: list[str], *args: object, **kw: object) -> object:
        commands.append(argv)
        return original(argv, *args, **kw)  # type: ignore[arg-type]
    executor.run = counting  # type: ignore[method-assign]
    assert taker.clean_leftovers() == [] and commands == []  # the take saw nothing left: read nothing
    taker.release()
    assert len(commands) == 4  # the release: a read and a write on each host
    assert holders(tmp_path, "dut") == [] and holders(tmp_path, "gen") == []
