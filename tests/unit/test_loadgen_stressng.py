"""vsperf.loadgen.stressng: VSPERF's Load as stress-ng arguments, run on the DUT host it is given
(this machine on the local lab, a testbed's DUT host otherwise) through `Host.spawn`: in the run's
journal from the moment it starts, so teardown and, after a SIGKILL of vsperf, the next run stop it;
forgotten once stopped. On this machine with real (unprivileged) processes: a `stress-ng` on PATH
that sleeps, or exits at once."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_machine import RUN_ID, FakeMachine
from settings_util import make_settings

from vsperf.errors import DeploymentError, PrerequisiteError
from vsperf.executor import CommandLog, LocalExecutor
from vsperf.host.host import Host
from vsperf.host.journal import Journal
from vsperf.host.names import RunNames
from vsperf.host.proc import local_stat
from vsperf.host.release import release
from vsperf.loadgen.stressng import StressNgLoad, stress_ng_argv

CPU_LOAD = {"tool": "stress-ng", "load": 20, "reserved": 1, "pattern": "c"}


def test_cpu_load_leaves_reserved_cores_free() -> None:
    argv = stress_ng_argv({"tool": "stress-ng", "load": 100, "reserved": 1, "pattern": "c"}, cpus=4)
    assert argv[argv.index("--cpu") + 1] == "3"
    assert argv[argv.index("--cpu-load") + 1] == "100"
    assert "--vm" not in argv


def test_memory_load_uses_load_memory_percent() -> None:
    argv = stress_ng_argv({"tool": "stress-ng", "load": 50, "reserved": 1, "pattern": "m", "load_memory": 80}, cpus=2)
    assert argv[argv.index("--vm") + 1] == "1"
    assert argv[argv.index("--vm-bytes") + 1] == "80%"
    assert "--cpu" not in argv


def _dut(tmp_path: Path, cpus: int = 8) -> tuple[Host, FakeMachine]:
    machine = FakeMachine("dut", cpus=cpus)
    journal = Journal(RUN_ID, root=tmp_path / "state")
    machine.watch(journal)
    machine.handlers["stress-ng"] = lambda argv: (0, "stress-ng, version 0.15.06 (gcc 12.2)\n")
    return Host("dut", machine, RunNames(RUN_ID), journal), machine


def test_stress_ng_runs_on_its_host_with_that_hosts_cpus(tmp_path: Path) -> None:
    host, machine = _dut(tmp_path, cpus=8)
    load = StressNgLoad(CPU_LOAD, make_settings(), host)
    with load:
        assert machine.spawned == [(["stress-ng", "--timeout", "0", "--metrics-brief", "--cpu", "7",
                                     "--cpu-load", "20"], None)]
        assert machine.commands()[0] == "getconf _NPROCESSORS_ONLN"  # the DUT host's CPUs, not this machine's
        pid = load.pids()["stress-ng"]
        assert [(e.host, e.name, e.pid) for e in host.journal or [] if e.kind == "process"] == [
            ("dut", "stress-ng", pid)]
        component = load.component()
        assert (component.role, component.name, component.version) == ("loadgen", "stress-ng", "0.15.06")
        assert component.details == {"tool": "stress-ng", "load": "20", "reserved": "1", "pattern": "c"}
    assert not machine.procs[pid].running and load.pids() == {}
    assert [e for e in host.journal or [] if e.kind == "process"] == []


def test_stress_ng_that_exits_at_once_is_reported_and_forgotten(tmp_path: Path) -> None:
    host, machine = _dut(tmp_path, cpus=2)
    machine.exits["stress-ng"] = 1
    with pytest.raises(DeploymentError, match=r"^stress-ng exited at once \(code 1\): stress-ng --timeout 0"), \
            StressNgLoad(CPU_LOAD, make_settings(), host):
        pass
    assert [e for e in host.journal or [] if e.kind == "process"] == []  # the journal keeps no process that is gone


def test_prerequisites_are_looked_for_on_the_dut_host(tmp_path: Path) -> None:
    host, machine = _dut(tmp_path)
    load = StressNgLoad(CPU_LOAD, make_settings(), host)
    load.check_prerequisites()
    machine.absent.add("stress-ng")
    with pytest.raises(PrerequisiteError) as err:
        load.check_prerequisites()
    assert str(err.value) == "host dut: stress-ng is missing: apt-get install stress-ng there"
    assert machine.spawned == []


# --- on this machine, real processes ---------------------------------------------------------------


@pytest.fixture
def local_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Host]:
    """This machine as the DUT host, with a `stress-ng` on PATH that sleeps (STRESS_EXIT: exits)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "stress-ng"
    fake.write_text('#!/bin/sh\n[ -n "$STRESS_EXIT" ] && exit "$STRESS_EXIT"\nexec sleep 30\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    run_id = f"{os.getpid() % 0xffffff:x}"
    journal = Journal(run_id, root=tmp_path / "state")
    host = Host("local", LocalExecutor(CommandLog(None)), RunNames(run_id), journal)
    try:
        yield host
    finally:
        release(journal, {"local": host.executor})  # whatever a failing test left running, by PID


def _recorded(host: Host) -> list[tuple[str, int]]:
    """(label, pid) of the processes the journal file on disk lists."""
    assert host.journal is not None
    if not host.journal.path.exists():
        return []
    return [(e.name, e.pid) for e in Journal.load(host.journal.path) if e.kind == "process"]


def _running(pid: int) -> bool:
    stat = local_stat(pid)
    return stat is not None and stat.running


def test_a_load_is_in_the_journal_file_while_it_runs_and_forgotten_when_stopped(local_host: Host) -> None:
    load = StressNgLoad(CPU_LOAD, make_settings(), local_host)
    load.start()
    pid = load.pids()["stress-ng"]
    assert _running(pid) and _recorded(local_host) == [("stress-ng", pid)]  # on disk before start returned
    load.stop()
    assert _recorded(local_host) == [] and not _running(pid)


def test_the_teardown_stops_a_load_nobody_stopped(local_host: Host) -> None:
    load = StressNgLoad(CPU_LOAD, make_settings(), local_host)
    load.start()
    pid = load.pids()["stress-ng"]
    assert local_host.journal is not None
    done = release(local_host.journal, {"local": local_host.executor})  # what a deployment's teardown runs
    assert done.errors == [] and done.done == [f"process stress-ng (pid {pid}) stopped"]
    assert not _running(pid)


def test_a_load_that_exited_at_once_is_forgotten(local_host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRESS_EXIT", "3")
    with pytest.raises(DeploymentError, match=r"stress-ng exited at once \(code 3\)"):
        StressNgLoad(CPU_LOAD, make_settings(), local_host).start()
    assert _recorded(local_host) == []
