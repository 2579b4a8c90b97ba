from pathlib import Path

import pytest

from vsperf.errors import CommandError
from vsperf.executor import CommandLog, LocalExecutor, netns_argv


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
