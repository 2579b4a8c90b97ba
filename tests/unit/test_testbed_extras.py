"""A test's Load and Frame Modification on a testbed: what the preflight accepts and asks of the DUT
host, stress-ng on a `LoadHost` (the DUT host's: journaled processes), and the VLAN push of the
testbed's deployment (vsperf.testbed.extras, vsperf.loadgen, vsperf.testbed.deploy)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from settings_util import make_settings
from test_testbed_deploy import _pt, _session
from vsperf.testbed.checks import dut_tools, missing_tools, unsupported_on_testbed
from vsperf.testbed.deploy import TestbedDeployment
from vsperf.testbed.extras import TestbedLoadHost, frame_modification_vlan, load_programs, load_unsupported
from vsperf.testbed.session import TestbedSession

from vsperf.config import traffic_from_settings
from vsperf.errors import ConfigError, DeploymentError
from vsperf.executor import Executor, Process
from vsperf.host.workdir import RunContext
from vsperf.loadgen.stressng import StressNgLoad
from vsperf.run.plan import PlannedTest
from vsperf.vswitch.linux_bridge import LinuxBridgeVSwitch

CPU_LOAD = {"tool": "stress-ng", "load": 20, "reserved": 1, "pattern": "c"}


def _load_pt(loadgen: str = "stress-ng", **kw: Any) -> PlannedTest:
    test = SimpleNamespace(name="phy2phy_cpu_load", deployment="p2p", frame_modification=None, load=CPU_LOAD)
    return _pt(test=test, loadgen=loadgen, **kw)


def _mod_pt(modification: str | None, **settings: Any) -> PlannedTest:
    test = SimpleNamespace(name="phy2phy_tput_mod_vlan", deployment="p2p", frame_modification=modification, load={})
    return _pt(test=test, settings=make_settings(settings))


def test_load_and_frame_modification_run_on_a_testbed() -> None:
    assert unsupported_on_testbed([_load_pt(), _mod_pt("vlan")]) is None
    assert load_unsupported(_load_pt()) == "" and load_unsupported(_pt(loadgen=None)) == ""
    # a load generator that cannot run on the DUT host is refused by name, before anything is created
    why = unsupported_on_testbed([_load_pt(loadgen="thirdparty")])
    assert why == "test phy2phy_cpu_load: load generator thirdparty (only stress-ng runs on a testbed's DUT host)"


def test_the_preflight_looks_for_the_load_programs_on_the_dut_host(tmp_path: Path) -> None:
    tools = dut_tools([_load_pt()])
    assert tools["stress-ng"] == "stress-ng" and tools["getconf"] == "libc-bin"
    session, _calls, hosts = _session(tmp_path)
    hosts["dut"].absent.add("stress-ng")
    assert missing_tools(session, tools) == "host dut: stress-ng is missing: apt-get install stress-ng there"
    assert "stress-ng" not in dut_tools([_pt(loadgen=None)])
    assert load_programs(_load_pt(simulated=True)) == {}  # the simulated DUT gets no load


def test_frame_modification_vlan_pushes_vswitch_vlan_id() -> None:
    assert frame_modification_vlan(_mod_pt("vlan", VSWITCH_VLAN_ID=123)) == 123
    assert frame_modification_vlan(_mod_pt(None)) is None
    with pytest.raises(ConfigError, match="Frame Modification 'mac' is not supported"):
        frame_modification_vlan(_mod_pt("mac"))


def test_testbed_deployment_tags_frames_towards_the_generator(tmp_path: Path) -> None:
    session, calls, _hosts = _session(tmp_path)
    traffic = traffic_from_settings(make_settings(), 64)
    vswitch = LinuxBridgeVSwitch(make_settings(), RunContext("abc123", tmp_path, tmp_path, session.dut))
    with TestbedDeployment("p2p", session, run_id="abc123", traffic=traffic, vswitch=vswitch, vlan_id=123) as dep:
        # the generator counts only frames that carry the tag (vsgen flags the others)
        assert [p.rx_vlan_id for p in dep.gen_ports] == [123, 123]
        dut = [args for host, args in calls if host == "dut"]
        assert any(a[:4] == ["ip", "link", "add", "name"] and a[-2:] == ["vlan_filtering", "1"] for a in dut)
        # frames leave towards the generator on both DUT ports tagged (no "untagged")
        for ifname in ("ens1", "ens2"):
            assert ["bridge", "vlan", "add", "dev", ifname, "vid", "123", "pvid"] in dut


class FakeProcess:
    """A process that runs until stopped, or has exited at once (`code`)."""

    host = "dut"
    stdin = stdout = stderr = None

    def __init__(self, pid: int, code: int | None = None) -> None:
        self.pid = pid
        self.returncode = code

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is not None:
            return self.returncode
        raise subprocess.TimeoutExpired("stress-ng", timeout or 0)  # still running


class FakeLoadHost:
    """A DUT host with `cpus` CPUs that records what is started and stopped."""

    name = "dut"

    def __init__(self, cpus: int, exits_at_once: bool = False) -> None:
        self.cpus = cpus
        self.exits_at_once = exits_at_once
        self.spawned: list[tuple[str, list[str]]] = []
        self.stopped: list[int] = []

    def cpu_count(self) -> int:
        return self.cpus

    def spawn(self, label: str, argv: Sequence[str]) -> Process:
        self.spawned.append((label, list(argv)))
        return cast(Process, FakeProcess(4242, 1 if self.exits_at_once else None))

    def stop(self, proc: Process, *, timeout_s: float) -> int | None:
        self.stopped.append(proc.pid)
        return proc.returncode


class VersionExecutor:
    """The DUT host's executor as stress-ng's component reads it."""

    def run(self, argv: Sequence[str], **_kw: Any) -> subprocess.CompletedProcess[str]:
        assert list(argv) == ["stress-ng", "--version"]
        return subprocess.CompletedProcess(list(argv), 0, "stress-ng, version 0.15.06 (gcc 12.2)\n", "")


def _ctx(tmp_path: Path) -> RunContext:
    return RunContext("abc123", tmp_path, tmp_path, cast(Executor, VersionExecutor()))


def test_stress_ng_runs_on_its_host_with_that_hosts_cpus(tmp_path: Path) -> None:
    host = FakeLoadHost(cpus=8)
    load = StressNgLoad(CPU_LOAD, make_settings(), _ctx(tmp_path), host)
    with load:
        assert host.spawned == [("stress-ng", ["stress-ng", "--timeout", "0", "--metrics-brief", "--cpu", "7",
                                               "--cpu-load", "20"])]
        assert load.pids() == {"stress-ng": 4242}
        component = load.component()
        assert component.version == "0.15.06" and component.details["host"] == "dut"
    assert host.stopped == [4242] and load.pids() == {}


def test_stress_ng_that_exits_at_once_is_stopped_and_reported(tmp_path: Path) -> None:
    host = FakeLoadHost(cpus=2, exits_at_once=True)
    with pytest.raises(DeploymentError, match=r"stress-ng exited at once \(code 1\)"), \
            StressNgLoad(CPU_LOAD, make_settings(), _ctx(tmp_path), host):
        pass
    assert host.stopped == [4242]  # forgotten: the journal does not keep a process that is gone


class FakeSession:
    """The part of TestbedSession a TestbedLoadHost uses."""

    def __init__(self, nproc: str) -> None:
        self.testbed = SimpleNamespace(dut_host="dut")
        self.host = "dut"  # as its executor
        self.calls: list[tuple[Any, ...]] = []
        self.nproc = nproc
        self.dut = self

    def run(self, argv: Sequence[str], **_kw: Any) -> subprocess.CompletedProcess[str]:
        self.calls.append(("run", list(argv)))
        return subprocess.CompletedProcess(list(argv), 0, self.nproc, "")

    def spawn(self, host: str, label: str, argv: Sequence[str], **_kw: Any) -> Process:
        self.calls.append(("spawn", host, label, list(argv)))
        return cast(Process, FakeProcess(77))

    def stop_process(self, host: str, proc: Process, *, timeout_s: float = 5.0) -> int | None:
        self.calls.append(("stop", host, proc.pid, timeout_s))
        return 0


def test_testbed_load_host_journals_its_processes_on_the_dut_host() -> None:
    session = FakeSession("16\n")
    host = TestbedLoadHost(cast(TestbedSession, session))
    assert host.name == "dut" and host.cpu_count() == 16
    proc = host.spawn("stress-ng", ["stress-ng", "--cpu", "1"])
    assert host.stop(proc, timeout_s=3.0) == 0
    assert session.calls == [("run", ["getconf", "_NPROCESSORS_ONLN"]),
                             ("spawn", "dut", "stress-ng", ["stress-ng", "--cpu", "1"]), ("stop", "dut", 77, 3.0)]
    with pytest.raises(DeploymentError, match="not a CPU count"):
        TestbedLoadHost(cast(TestbedSession, FakeSession("x\n"))).cpu_count()


def test_journal_of_the_session_records_spawned_load(tmp_path: Path) -> None:
    """TestbedSession.spawn records the load's process (PID, start time, label) in the journal."""
    session, _calls, hosts = _session(tmp_path)
    started: list[list[str]] = []

    def spawn(argv: Sequence[str], **_kw: Any) -> Process:
        started.append(list(argv))
        proc = FakeProcess(555)
        proc.start_ticks = 1234  # type: ignore[attr-defined]
        return cast(Process, proc)

    hosts["dut"].spawn = spawn  # type: ignore[method-assign]
    proc = TestbedLoadHost(session).spawn("stress-ng", ["stress-ng", "--cpu", "1"])
    journal: Mapping[str, Any] = json.loads(session.journal.path.read_text())
    assert started == [["stress-ng", "--cpu", "1"]] and proc.pid == 555
    assert [(p["host"], p["pid"], p["label"]) for p in journal["processes"]] == [("dut", 555, "stress-ng")]
