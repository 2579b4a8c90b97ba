"""A load generator's processes on the local lab (`LocalLoadHost`): in the run's state file from
the moment they start, so the lab's teardown and, after a SIGKILL of vsperf, the next run's
cleanup stop them; forgotten once stopped. Real (unprivileged) processes: `sleep`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from vsperf.host.workdir import RunContext
from vsperf.errors import DeploymentError
from vsperf.executor import CommandLog, LocalExecutor, Process
from vsperf.lab.env import LabEnv
from vsperf.host.names import RunNames
from vsperf.lab.process import is_same_process, process_start_time
from vsperf.lab.release import release_all
from vsperf.lab.state import RunState
from vsperf.loadgen.base import LocalLoadHost

RUN_ID = "10ad01"


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[LabEnv]:
    ctx = RunContext(RUN_ID, tmp_path, tmp_path, LocalExecutor(CommandLog(None)))
    env = LabEnv(ctx, RunNames(RUN_ID), RunState(RUN_ID, root=tmp_path / "state"))
    try:
        yield env
    finally:
        release_all(env.state)  # whatever a failing test left running, by PID


def _recorded(lab: LabEnv) -> list[tuple[str, int]]:
    """(label, pid) of the processes the state file on disk lists."""
    if not lab.state.path.exists():
        return []
    data = json.loads(lab.state.path.read_text())
    return [(r["name"], r["pid"]) for r in data["resources"] if r["kind"] == "process"]


def test_a_load_is_in_the_state_file_while_it_runs_and_forgotten_when_stopped(lab: LabEnv) -> None:
    host = LocalLoadHost(lab)
    proc = host.spawn("stress-ng", ["sleep", "30"])
    assert proc.poll() is None
    assert _recorded(lab) == [("stress-ng", proc.pid)]  # on disk before spawn returned
    assert host.stop(proc, timeout_s=5.0) is None  # stopped by a signal: no exit code of its own
    assert _recorded(lab) == []
    assert process_start_time(proc.pid) is None


def test_the_labs_teardown_stops_a_load_nobody_stopped(lab: LabEnv) -> None:
    proc = LocalLoadHost(lab).spawn("stress-ng", ["sleep", "30"])
    start = process_start_time(proc.pid)
    assert start is not None
    removed, errors = release_all(lab.state)  # what LabDeployment.teardown (and cleanup_leftovers) run
    assert errors == [] and removed == [f"process stress-ng (pid {proc.pid})"]
    proc.wait(timeout=5)
    assert not is_same_process(proc.pid, start)


def test_a_load_that_exited_at_once_is_forgotten(lab: LabEnv) -> None:
    host = LocalLoadHost(lab)
    proc = host.spawn("stress-ng", ["sh", "-c", "exit 3"])
    proc.wait(timeout=5)
    assert host.stop(proc, timeout_s=1.0) == 3
    assert _recorded(lab) == []


def test_a_process_it_did_not_start_is_refused(lab: LabEnv) -> None:
    other: Process = LocalExecutor(CommandLog(None)).spawn(["sleep", "30"])
    try:
        with pytest.raises(DeploymentError, match=f"process {other.pid} was not started by this load host"):
            LocalLoadHost(lab).stop(other, timeout_s=1.0)
    finally:
        other.kill()
        other.wait(timeout=5)
