"""A machine of the run: what it creates is journaled (processes, directories, DPDK runtime
directories), every command goes through its executor, and messages name it when it is not this
machine. A probe host answers questions and creates nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path, PurePosixPath

import pytest
from fake_host import FakeMachine, RemoteMachine

from vsperf.errors import CommandError, DeploymentError, PrerequisiteError
from vsperf.executor import CommandLog, LocalExecutor
from vsperf.host.host import Host, parse_cpu_list
from vsperf.host.journal import Entry, Journal
from vsperf.host.names import RunNames
from vsperf.host.process import HostProcess
from vsperf.remote.connection import HostLostError

WHICH = ("sh", "-c", 'command -v "$1"', "sh")


def _host(tmp_path: Path, executor: FakeMachine | LocalExecutor, name: str = "local") -> Host:
    return Host(name, executor, RunNames("ab12"), Journal("ab12", root=tmp_path / "state"))


def _journal(host: Host) -> list[dict[str, object]]:
    """The journal as its file holds it."""
    assert host.journal is not None
    if not host.journal.path.exists():
        return []
    entries = json.loads(host.journal.path.read_text())["entries"]
    assert isinstance(entries, list)
    return entries


# --- the journal and a probe ---------------------------------------------------------------------


def test_what_a_host_records_carries_its_name(tmp_path: Path) -> None:
    host = _host(tmp_path, RemoteMachine("dut"), "dut")
    entry = host.record("netns", "vspab12s")
    assert entry == Entry("netns", "dut", "vspab12s")
    assert [(e["kind"], e["host"], e["name"]) for e in _journal(host)] == [("netns", "dut", "vspab12s")]
    host.forget(entry)
    assert _journal(host) == []
    assert (host.name, host.run_id, host.local, repr(host)) == ("dut", "ab12", False, "Host('dut')")


def test_a_probe_host_answers_and_creates_nothing() -> None:
    probe = Host.probe()
    assert probe.name == "local" and probe.local and probe.journal is None and isinstance(probe.executor, LocalExecutor)
    assert probe.which("sh") and not probe.which("no-such-program-vsperf")
    with pytest.raises(DeploymentError, match="host local: a probe host creates nothing"):
        probe.work_dir("logs")
    with pytest.raises(DeploymentError, match="a probe host creates nothing"):
        probe.dpdk_file_prefix("o")
    with pytest.raises(DeploymentError, match=r"host local: a probe host starts nothing \(sleeper\)"):
        probe.spawn("sleeper", ["sleep", "1"])
    dut = RemoteMachine("dut", answers={("getconf", "_NPROCESSORS_ONLN"): "8\n"})
    remote = Host.probe(dut, name="dut")
    assert remote.cpu_count() == 8 and remote.executor is dut
    probe.forget(Entry("netns", "local", "x"))  # nothing to forget: no error


# --- processes -----------------------------------------------------------------------------------


def test_spawn_records_the_process_by_pid_and_start_time(tmp_path: Path) -> None:
    dut = RemoteMachine("dut")
    host = _host(tmp_path, dut, "dut")
    proc = host.spawn("testpmd vnf0", ["dpdk-testpmd", "-l", "1"], netns="vspab12v0", env={"A": "1"})
    started = dut.procs[proc.pid]
    assert (proc.label, proc.start_ticks, proc.executor, proc.log_path) == ("testpmd vnf0", started.start_ticks, dut,
                                                                            None)
    assert dut.commands[0] == (("dpdk-testpmd", "-l", "1"), "vspab12v0")
    assert [(e["kind"], e["host"], e["name"], e["pid"], e["start_ticks"]) for e in _journal(host)] == [
        ("process", "dut", "testpmd vnf0", proc.pid, started.start_ticks)]
    assert host.stop_process(proc) == -15
    assert _journal(host) == [] and proc.pid not in dut.procs


def test_spawn_with_a_log_appends_output_there_and_keeps_the_pid(tmp_path: Path) -> None:
    dut = RemoteMachine("dut")
    host = _host(tmp_path, dut, "dut")
    log = PurePosixPath("/tmp/vsperf-ab12-logs/x.log")
    host.spawn("x", ["prog", "a b"], log_path=log)
    host.spawn("y", ["prog"], log_path=log, pipes=True)
    assert dut.ran("sh") == [
        ("sh", "-c", 'f=$1; shift; exec "$@" >>"$f" 2>&1', "sh", str(log), "prog", "a b"),
        ("sh", "-c", 'f=$1; shift; exec "$@" 2>>"$f"', "sh", str(log), "prog")]  # stdout stays a pipe


def test_a_process_that_could_not_start_is_a_deployment_error_naming_the_host(tmp_path: Path) -> None:
    class NoProgram(RemoteMachine):
        def _start(self, cmd: object, streams: object) -> object:  # type: ignore[override]
            raise CommandError(["prog"], 127, "prog: not found on host dut")

    host = _host(tmp_path, NoProgram("dut"), "dut")
    with pytest.raises(DeploymentError, match=r"^host dut: trafgen: .*prog: not found on host dut"):
        host.spawn("trafgen", ["prog"])
    assert _journal(host) == []


def test_a_process_that_ended_at_once_is_not_recorded(tmp_path: Path) -> None:
    class Brief(FakeMachine):
        def _start(self, cmd: object, streams: object) -> object:  # type: ignore[override]
            proc = super()._start(cmd, streams)  # type: ignore[arg-type]
            del self.procs[proc.pid]  # gone before its start time could be read
            return proc

    host = _host(tmp_path, Brief("local"))
    proc = host.spawn("brief", ["true"])
    assert proc.start_ticks is None and _journal(host) == []


def test_a_local_process_logs_and_stops(tmp_path: Path) -> None:
    host = _host(tmp_path, LocalExecutor(CommandLog(tmp_path / "commands.log")))
    log = PurePosixPath(tmp_path / "out.log")
    proc = host.spawn("echoer", [sys.executable, "-c", "print('hello', flush=True); import time; time.sleep(60)"],
                      log_path=log)
    try:
        deadline = time.monotonic() + 5
        while "hello" not in proc.read_log() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.alive() and proc.log_tail() == "hello"
        assert [e["pid"] for e in _journal(host)] == [proc.pid]
        assert "[background] sh -c" in (tmp_path / "commands.log").read_text()
    finally:
        code = host.stop_process(proc)
    assert code == -15 and not proc.alive() and _journal(host) == []


def test_adopt_records_the_daemon_of_a_pid_file(tmp_path: Path) -> None:
    daemon = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        pidfile = tmp_path / "d.pid"
        pidfile.write_text(f"{daemon.pid}\n")
        host = _host(tmp_path, LocalExecutor())
        adopted = host.adopt("ovs-vswitchd", PurePosixPath(pidfile), timeout_s=1, log_path=PurePosixPath("/x.log"))
        assert (adopted.pid, adopted.popen, adopted.log_path) == (daemon.pid, None, PurePosixPath("/x.log"))
        assert adopted.alive()
        assert [(e["name"], e["pid"], e["start_ticks"]) for e in _journal(host)] == [
            ("ovs-vswitchd", daemon.pid, adopted.start_ticks)]
        host.forget_process(adopted)  # it was stopped some other way (ovs-appctl exit)
        assert _journal(host) == []
    finally:
        daemon.kill()
        daemon.wait()


def test_adopt_times_out_without_a_live_pid(tmp_path: Path) -> None:
    host = _host(tmp_path, LocalExecutor())
    with pytest.raises(DeploymentError, match=r"^daemon did not write a live PID to .*missing.pid within 0.1 s"):
        host.adopt("daemon", PurePosixPath(tmp_path / "missing.pid"), timeout_s=0.1)
    dut = RemoteMachine("dut")
    dut.files["/run/x.pid"] = "not a pid\n"
    with pytest.raises(DeploymentError, match=r"^host dut: daemon did not write a live PID to /run/x.pid"):
        _host(tmp_path, dut, "dut").adopt("daemon", PurePosixPath("/run/x.pid"), timeout_s=0.05)
    assert _journal(host) == []


def test_a_process_on_a_lost_host_stays_in_the_journal(tmp_path: Path) -> None:
    dut = RemoteMachine("dut")
    host = _host(tmp_path, dut, "dut")
    proc = host.spawn("x", ["prog"])

    class Lost(HostProcess):
        def terminate(self, timeout_s: float = 5.0) -> int | None:
            raise HostLostError("lost the SSH connection to host dut")

    lost = Lost(proc.label, proc.pid, proc.start_ticks, dut)
    assert host.stop_process(lost) is None
    assert [e["pid"] for e in _journal(host)] == [proc.pid]  # the next run stops it


# --- directories and files -----------------------------------------------------------------------


def test_work_dirs_are_recorded_then_made_once(tmp_path: Path) -> None:
    dut = RemoteMachine("dut")
    host = _host(tmp_path, dut, "dut")
    assert host.work_dir("ovs") == PurePosixPath("/tmp/vsperf-ab12-ovs")
    assert host.work_dir("ovs") == PurePosixPath("/tmp/vsperf-ab12-ovs")
    assert host.log_path("a.log") == PurePosixPath("/tmp/vsperf-ab12-logs/a.log")
    assert host.track_dir(PurePosixPath("/tmp/vsperf-ab12-x")) == PurePosixPath("/tmp/vsperf-ab12-x")
    assert [argv for argv, _ns in dut.commands] == [
        ("mkdir", "-p", "-m", "700", "--", "/tmp/vsperf-ab12-ovs"),
        ("mkdir", "-p", "-m", "700", "--", "/tmp/vsperf-ab12-logs"),
        ("mkdir", "-p", "-m", "700", "--", "/tmp/vsperf-ab12-x")]
    assert [(e["kind"], e["name"]) for e in _journal(host)] == [
        ("dir", "/tmp/vsperf-ab12-ovs"), ("dir", "/tmp/vsperf-ab12-logs"), ("dir", "/tmp/vsperf-ab12-x")]
    host.released()  # a release removed them: asked again, they are made again
    dut.commands.clear()
    host.work_dir("ovs")
    assert dut.ran("mkdir") == [("mkdir", "-p", "-m", "700", "--", "/tmp/vsperf-ab12-ovs")]
    with pytest.raises(ValueError, match="bad directory name"):
        host.work_dir("../etc")


def test_a_work_dir_that_cannot_be_made_is_an_error_and_still_recorded(tmp_path: Path) -> None:
    dut = RemoteMachine("dut")
    dut.failing[("mkdir",)] = "mkdir: cannot create directory: No space left on device"
    host = _host(tmp_path, dut, "dut")
    with pytest.raises(DeploymentError, match=r"^host dut: command failed .*No space left on device"):
        host.work_dir("ovs")
    assert [e["name"] for e in _journal(host)] == ["/tmp/vsperf-ab12-ovs"]  # whatever exists of it goes later


def test_dpdk_file_prefixes_record_their_runtime_directory(tmp_path: Path) -> None:
    dut = RemoteMachine("dut")
    host = _host(tmp_path, dut, "dut")
    assert host.dpdk_file_prefix("o") == "vspab12o"
    assert host.dpdk_file_prefix("pg0") == "vspab12pg0"
    assert [(e["kind"], e["name"]) for e in _journal(host)] == [("dir", "/var/run/dpdk/vspab12o"),
                                                                ("dir", "/var/run/dpdk/vspab12pg0")]
    assert dut.commands == []  # DPDK makes it


def test_files_are_written_read_and_removed_on_the_host(tmp_path: Path) -> None:
    dut = RemoteMachine("dut")
    host = _host(tmp_path, dut, "dut")
    host.write_file(PurePosixPath("/tmp/vsperf-ab12-files/x.lua"), "print(1)\n", mode=0o640)
    assert dut.files["/tmp/vsperf-ab12-files/x.lua"] == "print(1)\n"
    assert dut.ran("put")[0][2:] == ("/tmp/vsperf-ab12-files/x.lua", oct(0o640))
    assert host.read_text(PurePosixPath("/tmp/vsperf-ab12-files/x.lua")) == "print(1)\n"
    assert host.read_text(PurePosixPath("/tmp/none")) == ""
    host.remove_files([PurePosixPath("/tmp/vsperf-ab12-files/x.lua"), PurePosixPath("/tmp/y")])
    assert dut.ran("rm") == [("rm", "-f", "--", "/tmp/vsperf-ab12-files/x.lua", "/tmp/y")]
    assert dut.files == {}
    host.remove_files([])
    host.remove_dir(PurePosixPath("/tmp/vsperf-ab12-files"))
    assert dut.ran("rm")[1:] == [("rm", "-rf", "--", "/tmp/vsperf-ab12-files")]


def test_a_file_that_cannot_be_written_names_the_host_and_the_path(tmp_path: Path) -> None:
    class Full(RemoteMachine):
        def put(self, local: Path, remote: object, *, mode: int | None = None) -> None:
            raise OSError(28, "No space left on device")

    with pytest.raises(DeploymentError, match=r"^host dut: cannot write /tmp/a: .*No space left"):
        _host(tmp_path, Full("dut"), "dut").write_file(PurePosixPath("/tmp/a"), "x")
    with pytest.raises(DeploymentError, match=r"^host dut: cannot copy .*engine there: .*No space left"):
        engine = tmp_path / "engine"
        engine.write_text("x")
        _host(tmp_path, Full("dut"), "dut").stage_file(engine, "engine")


def test_staging_a_file_copies_it_only_to_another_host(tmp_path: Path) -> None:
    engine = tmp_path / "vsgen-engine"
    engine.write_text("ELF")
    engine.chmod(0o755)
    conf = tmp_path / "gen.conf"
    conf.write_text("conf")
    local = FakeMachine("local")
    assert _host(tmp_path, local).stage_file(engine, "vsgen-engine") == PurePosixPath(engine)
    assert local.commands == []  # this machine's own file, never copied nor changed
    dut = RemoteMachine("dut")
    host = _host(tmp_path, dut, "dut")
    assert host.stage_file(engine, "vsgen-engine") == PurePosixPath("/tmp/vsperf-ab12-files/vsgen-engine")
    assert host.stage_file(conf, "gen.conf") == PurePosixPath("/tmp/vsperf-ab12-files/gen.conf")
    assert [argv[2:] for argv in dut.ran("put")] == [("/tmp/vsperf-ab12-files/vsgen-engine", oct(0o500)),
                                                     ("/tmp/vsperf-ab12-files/gen.conf", oct(0o400))]
    assert [e["name"] for e in _journal(host)] == ["/tmp/vsperf-ab12-files"]  # removed at teardown


# --- commands and facts --------------------------------------------------------------------------


def test_run_returns_stdout_and_names_a_remote_host_in_errors(tmp_path: Path) -> None:
    dut = RemoteMachine("dut", answers={("ovs-vsctl", "show"): "bridges\n"})
    host = _host(tmp_path, dut, "dut")
    dut.netns.add("vspab12s")
    assert host.run(["ovs-vsctl", "show"], netns="vspab12s") == "bridges\n"
    assert dut.commands == [(("ovs-vsctl", "show"), "vspab12s")]
    with pytest.raises(DeploymentError, match=r"^host dut: command failed \(exit 1\): nope"):
        host.run(["nope"])
    assert host.run(["nope"], check=False) == ""
    local = _host(tmp_path, FakeMachine("local"))
    with pytest.raises(DeploymentError, match=r"^command failed \(exit 1\): nope"):
        local.run(["nope"])


def test_which_and_require_name_the_fix_and_the_host(tmp_path: Path) -> None:
    dut = RemoteMachine("dut", answers={(*WHICH, "ip"): "/usr/sbin/ip\n"})
    host = _host(tmp_path, dut, "dut")
    assert host.which("ip") and not host.which("trafgen")
    assert dut.commands[:2] == [((*WHICH, "ip"), None), ((*WHICH, "trafgen"), None)]
    host.require("ip", "apt-get install iproute2")
    with pytest.raises(PrerequisiteError) as info:
        host.require("trafgen", "apt-get install netsniff-ng")
    assert str(info.value) == "host dut: trafgen is missing: apt-get install netsniff-ng there"
    local = _host(tmp_path, FakeMachine("local"))
    with pytest.raises(PrerequisiteError) as info:
        local.require("trafgen", "apt-get install netsniff-ng")
    assert str(info.value) == "trafgen is missing: apt-get install netsniff-ng"

    class Lost(RemoteMachine):
        def run(self, *args: object, **kwargs: object) -> subprocess.CompletedProcess[str]:
            raise HostLostError("lost the SSH connection to host dut")

    assert not _host(tmp_path, Lost("dut"), "dut").which("ip")


def test_cpus_are_the_hosts_and_read_once(tmp_path: Path) -> None:
    dut = RemoteMachine("dut", answers={("grep", "^Cpus_allowed_list:", "/proc/self/status"):
                                        "Cpus_allowed_list:\t0-3,6\n"})
    host = _host(tmp_path, dut, "dut")
    assert host.cpus() == [0, 1, 2, 3, 6] and host.cpus() == [0, 1, 2, 3, 6]
    assert len(dut.commands) == 1
    assert _host(tmp_path, RemoteMachine("gen"), "gen").cpus() == []  # not answered: none known


def test_cpu_count_and_kernel_release_are_read_on_the_host(tmp_path: Path) -> None:
    dut = RemoteMachine("dut", answers={("getconf", "_NPROCESSORS_ONLN"): "16\n", ("uname", "-r"): "6.1.0-99-amd64\n"})
    host = _host(tmp_path, dut, "dut")
    assert host.cpu_count() == 16 and host.kernel_release() == "6.1.0-99-amd64"
    odd = RemoteMachine("dut", answers={("getconf", "_NPROCESSORS_ONLN"): "0\n"})
    with pytest.raises(DeploymentError, match=r"^host dut: getconf _NPROCESSORS_ONLN printed '0', not a CPU count"):
        _host(tmp_path, odd, "dut").cpu_count()


def test_reachable_follows_the_connection(tmp_path: Path) -> None:
    dut = RemoteMachine("dut")
    host = _host(tmp_path, dut, "dut")
    assert host.reachable()
    dut.connected = False
    assert not host.reachable()
    assert _host(tmp_path, LocalExecutor()).reachable()


@pytest.mark.parametrize("text, cpus", [("0-3,6", [0, 1, 2, 3, 6]), (" 5\n", [5]), ("0-1,3-4", [0, 1, 3, 4]),
                                        ("", []), ("0-", []), ("a", []), ("1,,2", [])])
def test_parse_cpu_list(text: str, cpus: list[int]) -> None:
    assert parse_cpu_list(text) == cpus
