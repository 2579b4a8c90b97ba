"""Leftovers of killed runs: runs whose owner is gone are cleaned, live ones are left alone."""

import os
import subprocess
import sys
from pathlib import Path

from test_lab_release import FakeOps

from vsperf.executor import LocalExecutor
from vsperf.lab.leftovers import cleanup_leftovers, find_leftover_runs
from vsperf.lab.process import process_start_time
from vsperf.lab.state import STATE_FILE, Owner, Resource, RunState


def _dead_owner() -> Owner:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    start = process_start_time(proc.pid) or 1.0
    proc.wait()
    return Owner(proc.pid, start)


def _run(root: Path, run_id: str, owner: Owner) -> RunState:
    state = RunState(run_id, root=root, owner=owner)
    state.add(Resource("netns", f"vsp{run_id}s"))
    state.add(Resource("process", "ovs-vswitchd", pid=999999, start_time=5.0))
    return state


def test_dead_runs_are_cleaned_live_ones_kept(tmp_path: Path) -> None:
    dead = _run(tmp_path, "dead01", _dead_owner())
    live = _run(tmp_path, "11ve01", Owner.current())
    ops = FakeOps()
    removed = cleanup_leftovers(LocalExecutor(), root=tmp_path, ops=ops, list_namespaces=False)
    assert ops.calls == ["pid 999999", "netns vspdead01s"]
    assert removed == ["run dead01: process ovs-vswitchd (pid 999999)", "run dead01: netns vspdead01s"]
    assert not dead.directory.exists()
    assert live.path.exists()


def test_reused_owner_pid_counts_as_dead(tmp_path: Path) -> None:
    # Our own PID with another start time: the owner died and its PID went to someone else.
    me = Owner(os.getpid(), (process_start_time(os.getpid()) or 0.0) - 100)
    _run(tmp_path, "feed01", me)
    runs, problems = find_leftover_runs(tmp_path)
    assert [r.run_id for r in runs] == ["feed01"] and problems == []


def test_an_empty_state_file_is_itself_the_leftover(tmp_path: Path) -> None:
    state = RunState("abc123", root=tmp_path, owner=_dead_owner())
    state.save()
    removed = cleanup_leftovers(LocalExecutor(), root=tmp_path, ops=FakeOps(), list_namespaces=False)
    assert removed == [f"run abc123: empty state file {state.path}"]
    assert not state.directory.exists()


def test_unreadable_state_files_are_skipped(tmp_path: Path) -> None:
    bad = tmp_path / "zz" / STATE_FILE
    bad.parent.mkdir()
    bad.write_text("{")
    runs, problems = find_leftover_runs(tmp_path)
    assert runs == [] and len(problems) == 1
    assert bad.exists()


def test_no_state_root_means_nothing_to_do(tmp_path: Path) -> None:
    assert cleanup_leftovers(LocalExecutor(), root=tmp_path / "absent", ops=FakeOps(),
                             list_namespaces=False) == []


def test_a_dead_runs_dpdk_runtime_directories_go_with_it(tmp_path: Path) -> None:
    _run(tmp_path, "dead01", _dead_owner())
    _run(tmp_path, "11ve01", Owner.current())
    dpdk = tmp_path / "dpdk"
    for prefix in ("vspdead01t", "vspdead01pg0", "vsp11ve01t", "other"):
        (dpdk / prefix).mkdir(parents=True)
        (dpdk / prefix / "config").write_text("")
    removed = cleanup_leftovers(LocalExecutor(), root=tmp_path, ops=FakeOps(), list_namespaces=False, dpdk_root=dpdk)
    assert f"run dead01: DPDK runtime directory {dpdk / 'vspdead01t'}" in removed
    assert sorted(p.name for p in dpdk.iterdir()) == ["other", "vsp11ve01t"]  # a live run's and a stranger's stay
