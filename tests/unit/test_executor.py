"""The Executor contract on this machine: commands logged replayably (kept until the log has a
file), failures, background processes signalled by group, file copies, TCP to a loopback port."""

import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from vsperf.errors import CommandError
from vsperf.executor import CommandLog, LocalExecutor, LocalProcess, Process, in_netns, netns_argv


def test_commands_are_logged_replayably(tmp_path: Path) -> None:
    log = tmp_path / "commands.log"
    ex = LocalExecutor(CommandLog(log))
    out = ex.run(["echo", "hello world"])
    assert out.stdout == "hello world\n"
    assert "echo 'hello world'" in log.read_text()


def test_failure_raises_with_the_command_and_its_stderr(tmp_path: Path) -> None:
    ex = LocalExecutor()
    with pytest.raises(CommandError, match=r"exit 3.*boom"):
        ex.run(["sh", "-c", "echo boom >&2; exit 3"])
    assert ex.run(["sh", "-c", "exit 3"], check=False).returncode == 3


def test_missing_program_and_timeout() -> None:
    ex = LocalExecutor()
    with pytest.raises(CommandError, match="not found"):
        ex.run(["no-such-program-vsperf"])
    with pytest.raises(CommandError, match="timed out"):
        ex.run(["sleep", "5"], timeout_s=0.2)


def test_netns_prefix() -> None:
    assert netns_argv(["ip", "link"], "ns1") == ["ip", "netns", "exec", "ns1", "ip", "link"]
    assert netns_argv(["ip", "link"], None) == ["ip", "link"]


def test_spawn_is_logged_and_returns_a_process(tmp_path: Path) -> None:
    log = tmp_path / "c.log"
    proc = LocalExecutor(CommandLog(log)).spawn(["sleep", "0.1"])
    assert proc.wait(timeout=5) == 0
    assert "[background] sleep 0.1" in log.read_text()


def _running(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting for its new parent to reap it does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_spawn_returns_the_process_interface_and_signals_its_group(tmp_path: Path) -> None:
    ex = LocalExecutor()
    assert ex.host == "local"
    proc = ex.spawn(["sh", "-c", "sleep 30 & sleep 30 & wait"])
    assert isinstance(proc, Process) and isinstance(proc, LocalProcess) and proc.host == "local"
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(timeout=0.1)
    time.sleep(0.2)
    kids = [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()]
    assert len(kids) == 2
    proc.terminate()
    assert proc.wait(timeout=5) == -signal.SIGTERM
    time.sleep(0.2)
    assert not any(_running(k) for k in kids)
    proc.kill()  # ended: a no-op


def test_put_get_copy_on_this_machine(tmp_path: Path) -> None:
    ex = LocalExecutor()
    src = tmp_path / "a"
    src.write_text("x")
    ex.put(src, str(tmp_path / "b"), mode=0o700)
    assert (tmp_path / "b").read_text() == "x" and (tmp_path / "b").stat().st_mode & 0o777 == 0o700
    ex.get(str(tmp_path / "b"), tmp_path / "c")
    assert (tmp_path / "c").read_text() == "x"


def test_spawn_with_a_piped_stdin(tmp_path: Path) -> None:
    proc = LocalExecutor().spawn(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None
    out, _ = proc.communicate(b"hello\n", timeout=5)
    assert out == b"hello\n" and proc.returncode == 0


def test_a_command_log_without_a_file_keeps_its_lines_until_attached(tmp_path: Path) -> None:
    log = CommandLog(None)
    ex = LocalExecutor(log)
    ex.run(["echo", "before the run directory exists"])
    ex.spawn(["true"]).wait(timeout=5)
    assert log.path is None and not list(tmp_path.iterdir())
    log.attach(tmp_path / "results" / "commands.log")
    ex.run(["echo", "after"])
    lines = (tmp_path / "results" / "commands.log").read_text().splitlines()
    assert [line.split(" ", 2)[2] for line in lines] == [
        "echo 'before the run directory exists'", "[background] true", "echo after"]  # in order, once each


def test_the_kept_lines_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(CommandLog, "_MAX_PENDING", 3)
    log = CommandLog(None)
    for i in range(5):
        log.record(["echo", str(i)], None)
    log.attach(tmp_path / "c.log")
    assert [line.split(" ", 2)[2] for line in (tmp_path / "c.log").read_text().splitlines()] == [
        "echo 0", "echo 1", "echo 2"]


def test_environment_of_a_command_is_logged_and_merged(tmp_path: Path) -> None:
    log = tmp_path / "c.log"
    out = LocalExecutor(CommandLog(log)).run(["sh", "-c", 'echo "$VSPERF_X:$HOME"'], env={"VSPERF_X": "a b"})
    assert out.stdout.startswith("a b:/")  # the rest of the environment is still there
    assert "VSPERF_X='a b' sh -c" in log.read_text()


def test_open_tcp_connects_to_the_loopback_port() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        stream = LocalExecutor().open_tcp(port, timeout_s=2.0)
        try:
            peer, _addr = server.accept()
            with peer:
                stream.sendall(b"ping")
                assert peer.recv(4) == b"ping"
                peer.sendall(b"pong")
                assert stream.recv(4) == b"pong"
        finally:
            stream.close()
    with pytest.raises(ConnectionRefusedError):
        LocalExecutor().open_tcp(port, timeout_s=2.0)  # nothing listens any more


def test_open_tcp_into_a_namespace_that_does_not_exist_is_an_oserror() -> None:
    with pytest.raises(FileNotFoundError):
        LocalExecutor().open_tcp(9, netns="vspnone0s")
    with pytest.raises(FileNotFoundError):
        in_netns("vspnone0s", lambda: 1)
def test_a_command_log_that_cannot_be_written_warns_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    log = CommandLog(tmp_path / "commands.log")

    def full(*args: object, **kwargs: object) -> object:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "open", full)
    ex = LocalExecutor(log)
    assert ex.run(["true"]).returncode == 0  # the command still runs (a full disk stops the run elsewhere)
    ex.run(["true"])
    warnings = [r.getMessage() for r in caplog.records if "commands.log" in r.getMessage()]
    assert warnings == [f"{tmp_path / 'commands.log'}: cannot write (No space left on device); commands are no "
                        f"longer logged there"]


def test_an_attached_command_log_exists_while_no_command_ran(tmp_path: Path) -> None:
    CommandLog(None).attach(tmp_path / "run" / "commands.log")
    assert (tmp_path / "run" / "commands.log").read_text() == ""
