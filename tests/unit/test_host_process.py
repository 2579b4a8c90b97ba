"""A process on a host, known by PID and start time: asked about and signalled through its host's
executor (this machine here), never mistaken for another process that got its PID."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path, PurePosixPath

from fake_host import FakeMachine, RemoteMachine

from vsperf.errors import CommandError
from vsperf.executor import CommandLog, LocalExecutor
from vsperf.host.process import HostProcess, read_stat, send_signal
from vsperf.remote.connection import HostLostError


def _start(executor: LocalExecutor, argv: list[str], log_path: Path | None = None, **kwargs: int) -> HostProcess:
    """`argv` started in a session of its own (as `Host.spawn` starts it), as a HostProcess."""
    popen = executor.spawn(argv, **kwargs)  # type: ignore[arg-type]
    stat = read_stat(executor, popen.pid)
    assert stat is not None
    return HostProcess("sleeper", popen.pid, stat.start_ticks, executor, popen,
                       PurePosixPath(log_path) if log_path else None)


def _wait_for(predicate: object, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.02)


def test_read_stat_goes_through_the_executor(tmp_path: Path) -> None:
    executor = LocalExecutor(CommandLog(tmp_path / "commands.log"))
    proc = _start(executor, ["sleep", "30"])
    try:
        stat = read_stat(executor, proc.pid)
        assert stat is not None and stat.pid == proc.pid and stat.start_ticks == proc.start_ticks and stat.running
        assert f"cat /proc/{proc.pid}/stat" in (tmp_path / "commands.log").read_text()
    finally:
        proc.terminate()
    assert read_stat(executor, proc.pid) is None  # reaped: no such process


def test_a_host_that_does_not_answer_has_no_process() -> None:
    lost = RemoteMachine("dut")
    lost.failing[("cat",)] = "lost"
    assert read_stat(lost, 4242) is None

    class Gone(FakeMachine):
        def run(self, *args: object, **kwargs: object) -> subprocess.CompletedProcess[str]:
            raise HostLostError("lost the SSH connection to host dut")

    assert read_stat(Gone("dut"), 4242) is None
    adopted = HostProcess("ovs-vswitchd", 4242, 99, Gone("dut"))
    assert not adopted.alive() and adopted.host == "dut"


def test_a_spawned_process_logs_and_stops(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    with log.open("ab") as out:
        proc = _start(LocalExecutor(), [sys.executable, "-c", "print('hello', flush=True); import time; "
                                                           "time.sleep(60)"], log, stdout=out)  # type: ignore[arg-type]
    _wait_for(lambda: "hello" in log.read_text())
    assert proc.alive() and proc.returncode() is None and proc.host == "local"
    assert proc.log_tail() == "hello" and proc.read_log() == "hello\n"
    assert proc.wait(0.05) is None  # still running
    assert proc.terminate() == -signal.SIGTERM
    assert not proc.alive() and proc.returncode() == -signal.SIGTERM
    assert proc.terminate() == -signal.SIGTERM  # stopped already: its exit code again, nothing sent


def test_log_tail_joins_the_last_lines(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("".join(f"line {i}\n" for i in range(10)))
    proc = HostProcess("x", 1, 1, LocalExecutor(), log_path=PurePosixPath(log))
    assert proc.log_tail(3) == "line 7 | line 8 | line 9"
    assert HostProcess("x", 1, 1, LocalExecutor()).log_tail() == ""  # no log
    assert HostProcess("x", 1, 1, LocalExecutor()).read_log() == ""
    assert HostProcess("x", 1, 1, LocalExecutor(), log_path=PurePosixPath(tmp_path / "none")).log_tail() == ""
    assert HostProcess("x", 1, 1, LocalExecutor(), log_path=PurePosixPath(tmp_path / "none")).read_log() == ""
    broken = FakeMachine("dut")
    broken.failing[("tail",)] = "tail: not found"
    assert HostProcess("x", 1, 1, broken, log_path=PurePosixPath("/tmp/x.log")).log_tail() == ""

    class NoTail(FakeMachine):
        def run(self, argv: object, **kwargs: object) -> subprocess.CompletedProcess[str]:
            raise CommandError(["tail"], 127, "tail: not found on host dut")

    assert HostProcess("x", 1, 1, NoTail("dut"), log_path=PurePosixPath("/tmp/x.log")).log_tail() == ""


def test_one_that_ignores_sigterm_gets_sigkill_with_what_it_forked() -> None:
    proc = _start(LocalExecutor(), ["sh", "-c", "trap '' TERM; sleep 60 & sleep 60; wait"])
    time.sleep(0.2)
    kids = [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()]
    assert len(kids) == 2
    assert proc.terminate(0.3) == -signal.SIGKILL
    _wait_for(lambda: not any(Path(f"/proc/{k}").exists() for k in kids))
    assert not any(Path(f"/proc/{k}").exists() for k in kids)  # the group went with it


def test_interrupt_is_a_terminals_ctrl_c() -> None:
    # The vsperf command handles SIGINT (vsperf.signals), so what it starts begins with SIGINT's
    # default action; a test run started in the background inherits SIGINT ignored, and so would
    # its children: start this one as vsperf would.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = _start(LocalExecutor(), ["sleep", "30"])
    finally:
        signal.signal(signal.SIGINT, previous)
    proc.interrupt()
    assert proc.wait(5) == -signal.SIGINT


def test_pipes_are_the_process_stdin_and_stdout() -> None:
    proc = _start(LocalExecutor(), ["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"hello\n")
    proc.stdin.close()
    assert proc.stdout.read() == b"hello\n" and proc.wait(5) == 0
    assert HostProcess("x", 1, 1, LocalExecutor()).stdin is None
    assert HostProcess("x", 1, 1, LocalExecutor()).stdout is None


def test_an_adopted_process_is_asked_about_and_signalled_by_pid_and_start_time() -> None:
    sleeper = subprocess.Popen(["sleep", "30"], start_new_session=True)  # a daemon vsperf did not start
    try:
        executor = LocalExecutor()
        stat = read_stat(executor, sleeper.pid)
        assert stat is not None
        reused = HostProcess("daemon", sleeper.pid, stat.start_ticks - 10, executor)  # the PID of another
        assert not reused.alive()
        reused.signal(signal.SIGTERM)
        send_signal(executor, sleeper.pid, stat.start_ticks - 10, signal.SIGTERM)
        time.sleep(0.1)
        assert sleeper.poll() is None  # never signalled
        daemon = HostProcess("daemon", sleeper.pid, stat.start_ticks, executor)
        assert daemon.alive() and daemon.returncode() is None and daemon.wait(0.05) is None
        assert daemon.terminate(2.0) is None  # stopped, but only its parent knows the exit code
        assert sleeper.wait(5) == -signal.SIGTERM
        assert not daemon.alive()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_signals_to_a_remote_process_go_through_its_hosts_executor() -> None:
    dut = RemoteMachine("dut")
    daemon = dut.add_process(survives_term=True)
    proc = HostProcess("ovs-vswitchd", daemon.pid, daemon.start_ticks, dut)
    assert proc.alive()
    assert proc.terminate(0.1) is None
    assert dut.signals == [(daemon.pid, signal.SIGTERM), (daemon.pid, signal.SIGKILL)] and not proc.alive()
    assert all(argv[0] in ("cat", "sh") for argv, _ns in dut.commands)  # /proc/PID/stat, and the signal script

