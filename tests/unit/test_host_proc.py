"""A process's identity (PID + start time in clock ticks) from its /proc/PID/stat line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from vsperf.host.proc import ProcStat, local_stat, own_start_ticks, parse_stat, same_local_process

# Field 3 (state) is "S", field 20 (threads) 4, field 22 (start time) 123456.
LINE = "4242 (ovs-vswitchd) S 1 4242 4242 0 -1 4194624 9 0 0 0 1 2 0 0 20 0 4 0 123456 1 2 3\n"


def test_the_identity_fields_are_read_after_the_name() -> None:
    assert parse_stat(LINE) == ProcStat(4242, "S", 4, 123456)
    tricky = LINE.replace("(ovs-vswitchd)", "(a) b (c) Z 9)")  # a name may hold spaces and parentheses
    assert parse_stat(tricky) == ProcStat(4242, "S", 4, 123456)


@pytest.mark.parametrize("bad", ["", "\n", "x (y) S 1", "4242 (short) S 1 2 3", "pid (x) " + "1 " * 30])
def test_malformed_lines_are_none(bad: str) -> None:
    assert parse_stat(bad) is None


def test_a_zombie_runs_while_other_threads_of_it_do() -> None:
    assert ProcStat(1, "S", 1, 5).running and ProcStat(1, "R", 1, 5).running and ProcStat(1, "D", 1, 5).running
    assert not ProcStat(1, "Z", 1, 5).running
    assert ProcStat(1, "Z", 3, 5).running  # the main thread exited, the others still hold what it owns


def test_this_process_and_a_gone_one() -> None:
    me = local_stat(os.getpid())
    assert me is not None and me.pid == os.getpid() and me.running and me.threads >= 1
    assert own_start_ticks() == me.start_ticks > 0
    assert same_local_process(os.getpid(), me.start_ticks)
    assert not same_local_process(os.getpid(), me.start_ticks + 1)  # our PID, another start: reused
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert local_stat(child.pid) is None and not same_local_process(child.pid, me.start_ticks)


def test_an_exited_child_not_yet_reaped_is_not_running() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        for _ in range(200):
            stat = local_stat(child.pid)
            if stat is not None and stat.state == "Z":
                break
            os.sched_yield()
            subprocess.run(["sleep", "0.01"], check=True)
        assert stat is not None and stat.state == "Z"
        assert not same_local_process(child.pid, stat.start_ticks)
    finally:
        child.wait()
