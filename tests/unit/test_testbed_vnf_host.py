"""The netns VNF on a testbed's DUT host: its commands through the host's executor, its namespace
and veths journaled before they exist, removed at stop, and by the next run after a killed one."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import cast

from settings_util import make_settings
from test_testbed_switch_host import Host
from vsperf.testbed.journal import PortJournal
from vsperf.testbed.session import TestbedSession
from vsperf.testbed.vnf_host import TestbedVnfHost, host_vnf_names

from vsperf.executor import Executor, LocalExecutor
from vsperf.host.workdir import RunContext
from vsperf.testbed.model import Testbed, TestbedHost
from vsperf.vnf.netns import NetnsVnf


def _session(tmp_path: Path, host: Host, run_id: str = "abc123") -> TestbedSession:
    testbed = Testbed("lab.yaml", (TestbedHost("dut"),), "dut", "dut", ())
    return TestbedSession(testbed, cast(dict[str, Executor], {"dut": host}), PortJournal.create(tmp_path, run_id))


def test_names_carry_the_run_id_and_fit_an_interface_name() -> None:
    names = host_vnf_names("abc12345", 0)
    assert names.netns == "vstabc12345v0" and names.switch_ifs == ("vstabc12345v0s0", "vstabc12345v0s1")
    assert names.inner_ifs[1] == "vstabc12345v0i1" and names.bridge == "vstabc12345v0b"
    assert max(len(n) for n in (*names.switch_ifs, *names.inner_ifs, names.bridge)) <= 15


def test_the_netns_vnf_is_built_on_the_host_journaled_first_and_removed(tmp_path: Path) -> None:
    host = Host()
    session = _session(tmp_path, host)
    journal_seen: list[tuple[list[tuple[str, str]], list[tuple[str, str]]]] = []
    run = host.run

    def recording_run(argv: list[str], **kw: object) -> object:
        journal_seen.append((list(session.journal.namespaces), list(session.journal.links)))
        return run(argv, **kw)  # type: ignore[arg-type]

    host.run = recording_run  # type: ignore[method-assign]
    settings = make_settings()
    vnf = NetnsVnf(settings, RunContext("abc123", tmp_path, tmp_path, cast(Executor, host)))
    ports = vnf.create_on(TestbedVnfHost(session, "dut", "abc123"), 0, 1500)
    assert [p.ifname for p in ports] == ["vstabc123v0s0", "vstabc123v0s1"] and ports[0].name == "vnf0.0"
    add_ns = host.calls.index(["ip", "netns", "add", "vstabc123v0"])
    assert ("dut", "vstabc123v0") in journal_seen[add_ns][0]  # journaled before it exists
    add_veth = next(i for i, c in enumerate(host.calls) if c[:4] == ["ip", "link", "add", "vstabc123v0s0"])
    assert host.calls[add_veth][-2:] == ["netns", "vstabc123v0"] and "veth" in host.calls[add_veth]
    assert ("dut", "vstabc123v0s0") in journal_seen[add_veth][1]
    vnf.start()
    assert ["ip", "link", "set", "dev", "vstabc123v0i1", "master", "vstabc123v0b"] in host.calls
    assert vnf.details() == {"loopback": "linux_bridge", "namespace": "vstabc123v0"}
    assert session.journal.path.exists()
    vnf.stop()
    assert host.calls[-1] == ["ip", "netns", "del", "vstabc123v0"]
    assert ["ip", "link", "del", "dev", "vstabc123v0s1"] in host.calls
    assert session.journal.namespaces == [] and session.journal.links == [] and not session.journal.path.exists()
    calls = len(host.calls)
    vnf.stop()  # twice: nothing more
    assert len(host.calls) == calls


def test_a_killed_runs_namespaces_are_deleted_by_the_next_run(tmp_path: Path) -> None:
    journal = PortJournal.create(tmp_path, "dead01")
    journal.record_netns("dut", "vstdead01v0")
    journal.record_link("dut", "vstdead01v0s0")
    assert PortJournal.load(journal.path).namespaces == [("dut", "vstdead01v0")]
    journal.owner_pid = 0  # no such process: its run was killed
    journal.save()
    host = Host()
    done = _session(tmp_path, host, "new001").restore_leftovers(tmp_path)
    assert "host dut: namespace vstdead01v0 deleted" in done
    assert host.calls.index(["ip", "netns", "del", "vstdead01v0"]) < \
        host.calls.index(["ip", "link", "del", "dev", "vstdead01v0s0"])
    assert not journal.path.exists()


def _local_host(tmp_path: Path, run_id: str) -> tuple[TestbedVnfHost, TestbedSession]:
    """A testbed host `dut` that is this machine (a host `local` of a testbed file)."""
    testbed = Testbed("lab.yaml", (TestbedHost("dut"),), "dut", "dut", ())
    session = TestbedSession(testbed, {"dut": LocalExecutor()}, PortJournal.create(tmp_path, run_id))
    return TestbedVnfHost(session, "dut", run_id), session


def test_a_vnf_process_runs_on_the_host_journaled_by_pid_its_output_in_a_log_there(tmp_path: Path) -> None:
    run_id = f"u{os.getpid() % 10**6}"
    host, session = _local_host(tmp_path, run_id)
    try:
        log = host.log_path("sleeper.log")
        assert log == Path(f"/tmp/vsperf-{run_id}-vnf/sleeper.log") and log.parent.is_dir()
        proc = host.spawn("sleeper", ["sh", "-c", 'echo "up $$"; echo oops >&2; exec sleep 30'], log_path=log)
        deadline = time.monotonic() + 10
        while "oops" not in host.read_text(log) and time.monotonic() < deadline:
            time.sleep(0.02)
        # the PID is the command's own (every wrapper execs in place): its output says so
        assert f"up {proc.pid}" in host.read_text(log) and "oops" in proc.log_tail(1)
        assert proc.alive() and proc.returncode() is None and proc.wait(0.05) is None
        assert [(h, p, label) for h, p, _ticks, label in session.journal.processes] == [("dut", proc.pid, "sleeper")]
        host.stop_process(proc, timeout_s=5)
        assert not proc.alive() and proc.returncode() == -signal.SIGTERM
        assert session.journal.processes == []
    finally:
        host.remove_dirs()
    assert not Path(f"/tmp/vsperf-{run_id}-vnf").exists()


def test_a_process_interrupted_reports_and_its_dirs_go_at_teardown(tmp_path: Path) -> None:
    run_id = f"w{os.getpid() % 10**6}"
    host, _session = _local_host(tmp_path, run_id)
    prefix = host.dpdk_file_prefix("t0")
    assert prefix == f"vsperf-{run_id}-t0"
    runtime = host.track_dir(tmp_path / prefix)  # a stand-in for /var/run/dpdk/<prefix>
    work = host.work_dir("vhost")
    assert work == Path(f"/tmp/vsperf-{run_id}-vhost") and work.is_dir() and runtime.is_dir()
    (work / "v0p0.sock").write_text("")
    host.remove_files([work / "v0p0.sock", work / "gone"])
    assert list(work.iterdir()) == []
    log = host.log_path("trap.log")
    proc = host.spawn("trap", ["sh", "-c", 'trap "echo stats; exit 3" INT; echo ready; while :; do sleep 0.1; done'],
                      log_path=log)
    try:
        deadline = time.monotonic() + 10
        while "ready" not in host.read_text(log) and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.interrupt()  # SIGINT to its group: it reports and ends by itself
        assert proc.wait(10) == 3 and "stats" in host.read_text(log)
    finally:  # stopped and its directories removed even when an assertion above fails
        host.stop_process(proc)
        host.remove_dir(runtime)
        host.remove_dirs()
    assert not runtime.exists()
    assert not work.exists() and not log.parent.exists()
    assert host.read_text(log) == ""
