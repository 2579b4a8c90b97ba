"""Where TRex's server runs, today's adapters: the local lab and a testbed's generator host."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from vsperf.executor import CommandLog, LocalExecutor, Process, StreamSpec
from vsperf.trafficgen.trex.hosts import LabHost, TestbedHost, is_loopback, running_server_forwards


def test_lab_host_files_processes_and_log(tmp_path: Path) -> None:
    host = LabHost(LocalExecutor(CommandLog(tmp_path / "commands.log")), None, tmp_path / "trex", "ab12cd")
    assert host.name == "local" and host.file_prefix == "vspab12cdt"  # the lab's tag: swept after a kill
    path = f"{host.run_dir}/trex_cfg.yaml"
    host.put("- version: 2\n", path)
    assert Path(path).read_text() == "- version: 2\n"
    proc = host.spawn("TRex server", ["sh", "-c", "echo started; echo ready; sleep 30"])
    deadline = time.monotonic() + 5
    while "ready" not in host.log_tail(2) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert host.log_tail(2) == "started | ready"
    assert host.run(["true"]).returncode == 0 and host.run(["no-such-program-here"]).returncode != 0
    host.stop(proc, timeout_s=5.0)
    assert proc.poll() is not None
    host.remove([host.run_dir])
    assert not Path(host.run_dir).exists()
    assert "[background] sh -c" in (tmp_path / "commands.log").read_text()


class RecordingSession:
    """A testbed session's HostProcesses, recording what it journals."""

    def __init__(self) -> None:
        self.executor = LocalExecutor()
        self.journal: list[tuple[str, str, int]] = []

    def spawn(self, host: str, label: str, argv: Sequence[str], *, stdout: StreamSpec = subprocess.DEVNULL,
              stderr: StreamSpec = subprocess.DEVNULL, stdin: int | None = None) -> Process:
        proc = self.executor.spawn(argv, stdout=stdout, stderr=stderr, stdin=stdin)
        self.journal.append((host, label, proc.pid))
        return proc

    def stop_process(self, host: str, proc: Process, *, timeout_s: float = 5.0) -> int | None:
        proc.terminate()
        self.journal = [e for e in self.journal if e[2] != proc.pid]
        return proc.wait(timeout_s)

    def record_qdisc(self, host: str, interface: str, qdisc: str) -> None:
        raise AssertionError("TRex adds no qdisc")


def test_testbed_host_journals_the_server_and_names_its_files(tmp_path: Path) -> None:
    session = RecordingSession()
    run_id = f"t{int(time.time() * 1000) % 10**6:06d}"
    host = TestbedHost(LocalExecutor(), session, "gen", run_id, tmp_path / "server.log")
    # swept after a kill by the next run: /tmp/vsperf-RUNID-* and /var/run/dpdk/vsperf-RUNID-*
    assert host.run_dir == f"/tmp/vsperf-{run_id}-trex" and host.file_prefix == f"vsperf-{run_id}-trex"
    try:
        host.put("cfg", f"{host.run_dir}/trex_cfg.yaml")
        assert Path(host.run_dir, "trex_cfg.yaml").read_text() == "cfg"
        assert Path(host.run_dir).stat().st_mode & 0o777 == 0o700
        proc = host.spawn("TRex server", ["sleep", "30"])
        assert session.journal == [("gen", "TRex server", proc.pid)]
        host.stop(proc, timeout_s=5.0)
        assert session.journal == []
        assert host.forward(4501) == 4501  # a `local` generator host: this machine's loopback already
    finally:
        host.remove([host.run_dir])
    assert not Path(host.run_dir).exists()


def test_a_running_server_here_needs_no_forward() -> None:
    assert running_server_forwards(None, 4501, 4500) == (4501, 4500, [])
    assert running_server_forwards(LocalExecutor(), 40001, 40000)[:2] == (40001, 40000)


def test_loopback_addresses() -> None:
    assert all(is_loopback(a) for a in ("127.0.0.1", "127.0.1.1", "localhost", "::1"))
    assert not any(is_loopback(a) for a in ("198.18.0.1", "trex.lab"))

