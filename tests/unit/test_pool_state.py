"""One host's locks as a value: who may take what, leases judged by the host's clock only,
takeovers, the queue in arrival order, leftovers, forced unlocks, the file's text."""

from __future__ import annotations

import pytest

from vsperf.pool import state as st
from vsperf.pool.state import Hold, Holder, HostClock, Lease, LeaseLost, LockState, StateError


def holder(run_id: str, token: str | None = None) -> Holder:
    return Holder(run_id, token or f"t{run_id}", "alice", "ctl1", 4242, "2031-05-01T12:00:01+02:00", "lab.yaml",
                  ("phy2phy_tput",))


AT_100 = HostClock("boot1", 100.0)
PORTS = ("port:ens2f0", "port:ens2f1")


def held(state: LockState, h: Holder, resources: tuple[str, ...], clock: HostClock = AT_100,
         lease_s: float = 60) -> LockState:
    assert not st.blocked(state, clock, h.token, resources, queue=False)
    return st.take(state, clock, h, resources, lease_s)[0]


def test_the_dut_host_excludes_everything_ports_only_themselves() -> None:
    assert st.conflict("dut", "dut") and st.conflict("dut", "port:a") and st.conflict("port:a", "dut")
    assert st.conflict("port:a", "port:a")
    assert not st.conflict("port:a", "port:b") and not st.conflict("port:a", "location:h;1;1")
    # two testbeds sharing a generator host on different ports run at once; the same port never
    state = held(LockState(), holder("aaa"), ("port:a", "port:b"))
    assert not st.blocked(state, AT_100, "tbbb", ("port:c", "port:d"), queue=False)
    assert st.blocked(state, AT_100, "tbbb", ("port:b", "port:c"), queue=False).holds[0].holder.run_id == "aaa"
    assert st.blocked(state, AT_100, "tbbb", ("dut",), queue=False)  # the host as a DUT: nobody else on it


def test_a_lease_expires_by_the_hosts_uptime_or_a_reboot_only() -> None:
    lease = Lease("boot1", 100.0, 60.0)
    assert lease.age_s(HostClock("boot1", 130.0)) == 30.0 and not lease.expired(HostClock("boot1", 160.0))
    assert lease.expired(HostClock("boot1", 160.5))
    assert lease.age_s(HostClock("boot2", 5.0)) is None and lease.expired(HostClock("boot2", 5.0))


def test_a_live_hold_blocks_an_expired_one_is_taken_over_and_its_journal_kept_as_a_leftover() -> None:
    entry: dict[str, object] = {"kind": "link", "host": "dut", "name": "vspaaab0", "netns": None, "pid": 0,
                                "start_ticks": 0, "state": {}}
    state = held(LockState(), holder("aaa"), ("dut",))
    state = st.renew(state, HostClock("boot1", 110.0), "taaa", [entry])
    assert st.blocked(state, HostClock("boot1", 170.0), "tbbb", ("dut",), queue=False)  # renewed at 110
    later = HostClock("boot1", 170.5)
    assert not st.blocked(state, later, "tbbb", ("dut",), queue=False)
    new, dead = st.take(state, later, holder("bbb"), ("dut",), 30)
    assert [h.holder.run_id for h in dead] == ["aaa"]
    assert [h.holder.run_id for h in new.holds] == ["bbb"] and new.holds[0].lease == Lease("boot1", 170.5, 30)
    assert [(o.holder.run_id, o.journal) for o in st.leftovers_on(new, ("dut",))] == [("aaa", (entry,))]
    assert st.cleaned(new, new.leftovers[0], []).leftovers == ()
    assert st.cleaned(new, new.leftovers[0], [entry]).leftovers[0].journal == (entry,)


def test_renewing_a_lock_that_is_gone_or_expired_says_so() -> None:
    state = held(LockState(), holder("aaa"), ("dut",))
    with pytest.raises(LeaseLost, match="the lock is gone: another run took it over, or it was unlocked"):
        st.renew(state, AT_100, "tzzz", None)
    with pytest.raises(LeaseLost, match=r"the lease expired \(not renewed for 61 s; lease 60 s\)"):
        st.renew(state, HostClock("boot1", 161.0), "taaa", None)
    with pytest.raises(LeaseLost, match=r"the lease expired \(the host booted since; lease 60 s\)"):
        st.renew(state, HostClock("boot2", 1.0), "taaa", None)
    renewed = st.renew(state, HostClock("boot1", 150.0), "taaa", None)
    assert renewed.holds[0].lease.renewed_s == 150.0 and renewed.holds[0].resources == ("dut",)


def test_waiters_are_served_in_arrival_order_and_a_newcomer_does_not_pass_them() -> None:
    state = held(LockState(), holder("aaa"), ("dut",))
    for run_id in ("bbb", "ccc"):
        state = st.enqueue(state, AT_100, holder(run_id), ("dut",), 30)
    assert [t.number for t in state.tickets] == [1, 2]
    state = st.drop(state, "taaa")  # the holder ends
    assert not st.blocked(state, AT_100, "tbbb", ("dut",), queue=True)
    assert [t.holder.run_id for t in st.blocked(state, AT_100, "tccc", ("dut",), queue=True).ahead] == ["bbb"]
    newcomer = st.blocked(state, AT_100, "tddd", ("dut",), queue=True)  # no ticket: behind everyone
    assert [t.holder.run_id for t in newcomer.ahead] == ["bbb", "ccc"]
    # tickets count only on the testbed's queue host: a generator port elsewhere is first come
    assert not st.blocked(state, AT_100, "tddd", ("dut",), queue=False)


def test_a_waiter_that_stops_renewing_its_place_loses_it() -> None:
    state = st.enqueue(LockState(), AT_100, holder("bbb"), ("dut",), 30)
    state = st.enqueue(state, HostClock("boot1", 120.0), holder("ccc"), ("dut",), 30)
    later = HostClock("boot1", 131.0)  # bbb's place (100 + 30) expired, ccc's (120 + 30) did not
    assert not st.blocked(state, later, "tccc", ("dut",), queue=True)
    state = st.enqueue(state, later, holder("ccc"), ("dut",), 30)  # renewing drops the dead ticket
    assert [(t.holder.run_id, t.number, t.lease.renewed_s) for t in state.tickets] == [("ccc", 2, 131.0)]
    assert st.enqueue(state, later, holder("eee"), ("dut",), 30).tickets[-1].number == 3


def test_a_forced_unlock_keeps_what_the_holder_left_and_logs() -> None:
    state = held(LockState(), holder("aaa"), PORTS)
    state = st.renew(state, AT_100, "taaa", [{"kind": "port", "host": "gen", "name": "ens2f0"}])
    state = held(state, holder("bbb"), ("port:ens2f9",))
    new, gone = st.unlock(state, ("port:ens2f0",), "12:00 bob@ctl2: vsperf testbed unlock --force lab.yaml")
    assert [h.holder.run_id for h in gone] == ["aaa"] and [h.holder.run_id for h in new.holds] == ["bbb"]
    assert [o.holder.run_id for o in new.leftovers] == ["aaa"] and new.log[-1].startswith("12:00 bob@ctl2")


def test_the_state_file_round_trips_and_a_damaged_one_is_refused() -> None:
    state = held(LockState(version=7), holder("aaa"), ("dut", *PORTS))
    state = st.enqueue(state, AT_100, holder("bbb"), ("dut",), 30)
    text = state.to_text()
    version, body, end, trailing = text.split("\n")
    assert (version, end, trailing) == ("7", st.STATE_END, "")
    assert LockState.from_text(version, body) == state
    assert LockState.from_text("0", "") == LockState()
    for bad in ('{"holds": [{"holder": {}}]}', "[1, 2]", "{not json", '{"holds": "x"}'):
        with pytest.raises(StateError, match="not a"):
            LockState.from_text("3", bad)


def test_holder_describes_itself_with_the_controllers_clock_marked() -> None:
    assert holder("aaa").describe() == ("run aaa (alice@ctl1, pid 4242, started 2031-05-01 12:00:01 by its "
                                        "controller's clock)")
    assert Holder.from_dict(holder("aaa").as_dict()) == holder("aaa")


def test_hold_of_and_ticket_of() -> None:
    state = st.enqueue(held(LockState(), holder("aaa"), ("dut",)), AT_100, holder("bbb"), ("dut",), 30)
    assert isinstance(state.hold_of("taaa"), Hold) and state.hold_of("tbbb") is None
    assert state.ticket_of("tbbb") is not None and st.drop(state, "tbbb").ticket_of("tbbb") is None
