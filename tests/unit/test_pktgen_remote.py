"""Pktgen-DPDK on a testbed's generator host: names the next run's sweep removes, the command
line, the SSH forward of the Lua socket and the staging commands, against fakes (the real thing
runs in tests/integration/test_testbed_pktgen.py)."""

from __future__ import annotations

import fnmatch
import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from types import SimpleNamespace
from typing import cast

import paramiko
import pytest

from vsperf.config.loader import load_settings
from vsperf.host.workdir import RunContext
from vsperf.deploy.base import GenPort
from vsperf.errors import PrerequisiteError, TrafficGenError
from vsperf.executor import Executor, LocalExecutor, Process, StreamSpec
from vsperf.remote.connection import SshHost
from vsperf.remote.ssh import SshExecutor
from vsperf.testbed.session import host_run_dirs_removal
from vsperf.trafficgen.pktgen.backend import PktgenTrafficGenerator
from vsperf.trafficgen.pktgen.process import CONSOLE_NICE, TIMER_NICE, PktgenConfig, pktgen_argv
from vsperf.trafficgen.pktgen.remote import (
    CALM_SCRIPT,
    COUNTERS_SCRIPT,
    LOOPBACK,
    HostCounters,
    file_prefix,
    launcher,
    remote_dir,
    stage,
    tunnel_argv,
    tunnel_opener,
    unstage,
)
from vsperf.trafficgen.pktgen.txclock import TxClock


def _swept(run_id: str) -> list[str]:
    """The name patterns host_run_dirs_removal deletes in /tmp and /var/run/dpdk."""
    argv = host_run_dirs_removal(run_id)
    return [argv[i + 1] for i, a in enumerate(argv) if a == "-name"]


def test_the_run_directory_and_the_dpdk_prefix_are_swept_by_the_next_run() -> None:
    patterns = _swept("ab12cd")
    assert any(fnmatch.fnmatch(remote_dir("ab12cd").name, p) for p in patterns)
    assert any(fnmatch.fnmatch(file_prefix("ab12cd", 0), p) for p in patterns)
    assert not any(fnmatch.fnmatch(file_prefix("ff0000", 0), p) for p in patterns)  # another run's


def test_command_line_on_the_host_listens_on_its_loopback_only() -> None:
    cfg = PktgenConfig(binary="pktgen", file_prefix=file_prefix("ab12cd", 0), memory_mb=3072, lcores="0@0,1@1",
                       driver="af_packet", ifnames=("eth1", "eth2"), lua_port=22022, lua_address=LOOPBACK)
    argv = pktgen_argv(cfg, launcher("ab12cd"))
    assert argv[:3] == ["python3", "/tmp/vsperf-ab12cd-pktgen/ptyexec.py", "pktgen"]
    assert "--file-prefix=vsperf-ab12cd-pktgen0" in argv
    assert argv[argv.index("-g") + 1] == "127.0.0.1:22022"
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "--vdev"] == \
        ["net_af_packet0,iface=eth1", "net_af_packet1,iface=eth2"]
    # the lab's default: its own pty launcher module, the namespace's localhost
    lab = pktgen_argv(PktgenConfig(binary="/usr/local/bin/pktgen", file_prefix="vspab12cdpg0", memory_mb=1536,
                                   lcores="0@0,1@1", driver="af_packet", ifnames=("g0",), lua_port=22022))
    assert lab[1:3] == ["-m", "vsperf.trafficgen.pktgen.ptyexec"] and "localhost:22022" in lab


def _executor() -> SshExecutor:
    return SshExecutor(SshHost("gen", "198.18.0.10", port=2222, key_file=Path("/keys/id"),
                               known_hosts_file=Path("/keys/known_hosts")))


def test_the_forward_is_logged_as_the_openssh_command_that_opens_it() -> None:
    assert tunnel_argv(_executor(), 22022) == [
        "ssh", "-p", "2222", "-o", "UserKnownHostsFile=/keys/known_hosts", "-i", "/keys/id",
        "-N", "-L", "22022:127.0.0.1:22022", "root@198.18.0.10"]


CHANNEL = object()  # what the transport opened


class FakeTransport:
    def __init__(self, error: Exception | None) -> None:
        self.error = error
        self.opened: list[tuple[str, tuple[str, int], tuple[str, int], float]] = []

    def open_channel(self, kind: str, dest: tuple[str, int], src: tuple[str, int], timeout: float) -> object:
        self.opened.append((kind, dest, src, timeout))
        if self.error is not None:
            raise self.error
        return CHANNEL


def _fake_ssh(transport: FakeTransport) -> SshExecutor:
    client = SimpleNamespace(get_transport=lambda: transport)
    return cast(SshExecutor, SimpleNamespace(host="gen", connection=SimpleNamespace(client=lambda: client)))


def test_the_lua_socket_is_a_direct_tcpip_channel_to_the_hosts_loopback() -> None:
    transport = FakeTransport(None)
    assert tunnel_opener(_fake_ssh(transport), 22022)(2.0) is CHANNEL
    assert transport.opened == [("direct-tcpip", ("127.0.0.1", 22022), ("127.0.0.1", 0), 2.0)]


@pytest.mark.parametrize(("error", "kind", "message"), [
    (paramiko.ChannelException(2, "Connect failed"), ConnectionRefusedError,
     "host gen: SSH forward to 127.0.0.1:22022 refused (Connect failed; sshd needs AllowTcpForwarding)"),
    (paramiko.SSHException("Unable to open channel."), ConnectionError, "host gen: Unable to open channel."),
])
def test_a_refused_or_broken_forward_is_an_os_error(error: Exception, kind: type[Exception], message: str) -> None:
    # OSErrors: the client retries them while pktgen starts, then reports the last one
    with pytest.raises(kind) as raised:
        tunnel_opener(_fake_ssh(FakeTransport(error)), 22022)(2.0)
    assert str(raised.value) == message and isinstance(raised.value, OSError)


class Recorder:
    """A generator host whose commands all succeed, except `grep` when `lua` is False."""

    def __init__(self, lua: bool = True) -> None:
        self.lua = lua
        self.calls: list[list[str]] = []
        self.puts: list[tuple[Path, str, int | None]] = []

    @property
    def host(self) -> str:
        return "gen"

    def run(self, argv: Sequence[str], *, netns: str | None = None, check: bool = True,
            timeout_s: float | None = 60.0, env: Mapping[str, str] | None = None,
            input_text: str | None = None) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(argv))
        code = 1 if argv[0] == "sh" and not self.lua else 0
        return subprocess.CompletedProcess(list(argv), code, "", "")

    def put(self, local: Path, remote: PurePosixPath | str, *, mode: int | None = None) -> None:
        self.puts.append((local, str(remote), mode))


def test_staging_checks_lua_then_copies_the_launcher_and_unstaging_removes_the_runs_files() -> None:
    host = Recorder()
    stage(cast(Executor, host), "ab12cd", "pktgen")
    check, mkdir = host.calls
    assert check[:2] == ["sh", "-c"] and check[-2:] == ["pktgen", "Pktgen_Version"]  # the name is an argument
    assert mkdir == ["mkdir", "-p", "-m", "700", "/tmp/vsperf-ab12cd-pktgen"]
    (local, remote, mode), = host.puts
    assert local.name == "ptyexec.py" and remote == "/tmp/vsperf-ab12cd-pktgen/ptyexec.py" and mode == 0o600
    unstage(cast(Executor, host), "ab12cd", [file_prefix("ab12cd", 0)])
    assert host.calls[-1] == ["rm", "-rf", "--", "/tmp/vsperf-ab12cd-pktgen", "/var/run/dpdk/vsperf-ab12cd-pktgen0"]


def test_a_pktgen_without_lua_is_refused_before_anything_is_staged() -> None:
    host = Recorder(lua=False)
    with pytest.raises(PrerequisiteError, match="host gen: pktgen is not a pktgen built with Lua: rebuild "
                                                "Pktgen-DPDK with meson -Denable_lua=true there"):
        stage(cast(Executor, host), "ab12cd", "pktgen")
    assert len(host.calls) == 1 and host.puts == []


class LocalProcesses:
    """`HostProcesses` on this machine: what the testbed session would journal, recorded."""

    def __init__(self) -> None:
        self.started: list[tuple[str, list[str]]] = []
        self.stopped: list[int] = []

    def spawn(self, host: str, label: str, argv: Sequence[str], *, stdout: StreamSpec = subprocess.DEVNULL,
              stderr: StreamSpec = subprocess.DEVNULL, stdin: int | None = None) -> Process:
        self.started.append((label, list(argv)))
        return LocalExecutor().spawn(argv, stdout=stdout, stderr=stderr, stdin=stdin)

    def stop_process(self, host: str, proc: Process, *, timeout_s: float = 5.0) -> int | None:
        self.stopped.append(proc.pid)
        if proc.poll() is None:
            proc.kill()
        return proc.wait(timeout_s)

    def record_qdisc(self, host: str, interface: str, qdisc: str) -> None:
        raise AssertionError("pktgen adds no qdisc")


def test_host_counters_read_the_hosts_interfaces_on_request() -> None:
    processes = LocalProcesses()
    counters = HostCounters(processes, "local", ["lo"])
    try:
        first = counters.tx_packets()["lo"]
        assert counters.tx_packets()["lo"] >= first >= 0  # same loop, read again
        assert processes.started == [("pktgen transmit counters", [
            "sh", "-c", COUNTERS_SCRIPT, "sh", "/sys/class/net/lo/statistics/tx_packets"])]
    finally:
        counters.close()
    assert counters.proc.poll() == 0  # ended by the end of its input
    assert processes.stopped == [counters.proc.pid]


def test_host_counters_of_a_missing_interface_raise() -> None:
    counters = HostCounters(LocalProcesses(), "local", ["vsperf-none0"])
    try:
        with pytest.raises(TrafficGenError, match="host local: cannot read the transmit counters of vsperf-none0"):
            counters.tx_packets()
    finally:
        counters.close()


class StepCounters:
    """A host whose port sends 100 frames per read after the second read."""

    def __init__(self) -> None:
        self.reads = 0

    def tx_packets(self) -> dict[str, int]:
        self.reads += 1
        return {"eth1": max(0, self.reads - 2) * 100, "eth2": 7}


def test_the_transmit_clock_times_another_hosts_counters() -> None:
    clock = TxClock([(None, "eth1"), (None, "eth2")], period_s=0.001, counters=StepCounters())
    clock.start()
    assert clock.wait_first_frame(0, 5.0)
    time.sleep(0.05)
    windows = clock.stop()
    sent, idle = windows
    assert sent is not None and sent.frames > 0 and sent.seconds > 0
    assert idle is None  # eth2 sent nothing
    times = [s.t_s for s in clock.samples[0]]
    assert times == [s.t_s for s in clock.samples[1]]  # one request reads both


# A process shaped like pktgen: its main thread and one more thread named "pktgen" (the timer).
_PKTGEN_LIKE = """
import os, sys, threading, time
def timer():
    with open(f"/proc/self/task/{threading.get_native_id()}/comm", "w") as fh:
        fh.write("pktgen")
    print(threading.get_native_id(), flush=True)
    time.sleep(30)
threading.Thread(target=timer, daemon=True).start()
time.sleep(30)
"""


def test_the_calm_script_lowers_the_console_and_the_timer_thread() -> None:
    proc = subprocess.Popen([sys.executable, "-c", _PKTGEN_LIKE], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        timer = int(proc.stdout.readline())
        done = subprocess.run(["sh", "-c", CALM_SCRIPT, "sh", str(proc.pid), str(CONSOLE_NICE), str(TIMER_NICE)],
                              capture_output=True, text=True, check=True, timeout=10)
        assert done.stdout.split() == [str(proc.pid), str(timer)]
        assert os.getpriority(os.PRIO_PROCESS, proc.pid) == CONSOLE_NICE
        assert os.getpriority(os.PRIO_PROCESS, timer) == TIMER_NICE
        assert os.sched_getaffinity(timer) == os.sched_getaffinity(proc.pid)
    finally:
        proc.kill()
        proc.wait()


def test_a_local_generator_host_runs_pktgen_through_the_journal(tmp_path: Path) -> None:
    # A testbed whose generator host is `local` has no lab state: pktgen goes through the
    # session (journaled, stopped by the next run after a SIGKILL) as on a host over SSH.
    fake = tmp_path / "fake-pktgen"
    fake.write_text("#!/bin/sh\n# Pktgen_Version\necho 'fake pktgen: no ports'\nexit 3\n")
    fake.chmod(0o755)
    with socket.socket() as free:  # a port no real pktgen listens on
        free.bind((LOOPBACK, 0))
        lua_port = free.getsockname()[1]
    settings = dict(load_settings(env={}))
    settings.update(TRAFFICGEN_PKTGEN_BINARY=str(fake), TRAFFICGEN_PKTGEN_PORT=lua_port,
                    TRAFFICGEN_PKTGEN_TIMEOUT_S=5.0)
    run_id = f"u{os.getpid()}"
    gen = PktgenTrafficGenerator(settings, RunContext(run_id, tmp_path, tmp_path, LocalExecutor()))
    processes = LocalProcesses()
    gen.use_host_processes(processes, "local")
    ports = [GenPort(None, "lo", "02:00:00:00:00:01", "198.18.0.1"), GenPort(None, "lo", "02:00:00:00:00:02",
                                                                            "198.18.0.2")]
    with pytest.raises(TrafficGenError, match=r"pktgen 0 on host local exited \(code 3\) while starting: "
                                              r"fake pktgen: no ports"):
        gen.start(ports)
    (label, argv), = processes.started
    assert label == "pktgen 0" and argv[:3] == ["python3", f"/tmp/vsperf-{run_id}-pktgen/ptyexec.py", str(fake)]
    assert f"--file-prefix={file_prefix(run_id, 0)}" in argv and f"{LOOPBACK}:{lua_port}" in argv
    assert len(processes.stopped) == 1  # stopped through the session, which forgets it
    assert not Path(f"/tmp/vsperf-{run_id}-pktgen").exists()  # the run's directory removed
