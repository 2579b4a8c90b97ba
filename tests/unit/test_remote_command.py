"""Remote command lines: quoting, netns/env/timeout wrapping, PID scripts, replay lines."""

from __future__ import annotations

import shlex
import signal
import subprocess
from pathlib import Path

import pytest

from vsperf.errors import UserError
from vsperf.executor import LocalProcess
from vsperf.remote.command import (
    ReplayTarget,
    env_netns_argv,
    parse_stat_line,
    run_command,
    signal_command,
    spawn_command,
)
from vsperf.remote.connection import HostKeyError, SshHost, connect


def test_arguments_survive_the_remote_shell_unchanged() -> None:
    argv = ["printf", "%s|", "a b", "it's", "$HOME", "`x`", ";rm -rf /", ""]
    line = run_command(argv)
    # The remote shell splits the line back into exactly the argument list.
    assert shlex.split(line) == argv


def test_netns_env_and_timeout_wrap_in_that_order() -> None:
    line = run_command(["ip", "link"], netns="ns1", env={"A": "1 2"}, timeout_s=3)
    assert shlex.split(line) == ["timeout", "-k", "2", "3", "env", "A=1 2", "ip", "netns", "exec", "ns1", "ip", "link"]
    assert env_netns_argv(["x"], None, None) == ["x"]
    assert run_command(["x"], timeout_s=None) == "x"


def test_spawn_line_prints_the_pid_then_execs_the_quoted_command() -> None:
    line = spawn_command(["sleep", "1 2"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    words = shlex.split(line)
    assert words[:3] == ["exec", "sh", "-c"]
    assert words[3].startswith('read -r s </proc/$$/stat; echo "$s"; exec "$@"') and words[3].endswith(" 2>&1")
    assert " 1>/dev/null" not in words[3]
    assert words[4:] == ["sh", "sleep", "1 2"]
    quiet = shlex.split(spawn_command(["x"]))[3]
    assert quiet.endswith("</dev/null 1>/dev/null 2>/dev/null")


def test_the_spawn_line_runs_as_promised_in_a_local_shell(tmp_path: Path) -> None:
    # The same string a remote login shell gets, given to /bin/sh here: PID first, then output.
    line = spawn_command(["sh", "-c", "echo 'out put'"], stdout=subprocess.PIPE)
    proc = subprocess.run(["sh", "-c", line], capture_output=True, text=True, check=True)
    first, rest = proc.stdout.split("\n", 1)
    pid, ticks = parse_stat_line(first)
    assert pid > 1 and ticks is not None and ticks > 0 and rest == "out put\n"


def test_stat_lines_with_awkward_process_names() -> None:
    fields = " ".join(str(i) for i in range(3, 30))  # field 22 holds "22"
    assert parse_stat_line(f"4242 (a) b (c)) {fields}") == (4242, 22)
    assert parse_stat_line("77 (short) S 1") == (77, None)


def test_signal_line_checks_the_start_time_before_killing() -> None:
    line = signal_command(1234, 5678, signal.SIGTERM)
    script = shlex.split(line)[2]
    assert "/proc/1234/stat" in script and '[ "$1" = 5678 ] || exit 0' in script
    assert "kill -15 -1234" in script
    # A process that is not the one we started (wrong start time) is left alone.
    proc = LocalProcess(["sleep", "30"], start_new_session=True)
    try:
        subprocess.run(["sh", "-c", signal_command(proc.pid, 1, signal.SIGTERM)], check=True)
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(0.3)
        stat = Path(f"/proc/{proc.pid}/stat").read_text()
        ticks = int(stat.rsplit(")", 1)[1].split()[19])
        subprocess.run(["sh", "-c", signal_command(proc.pid, ticks, signal.SIGTERM)], check=True)
        assert proc.wait(5) == -signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()


def test_replay_line_is_an_openssh_command() -> None:
    target = ReplayTarget("root", "198.18.0.2", 2222, Path("/k/id"), Path("/k/known"))
    argv = target.argv(run_command(["echo", "a b"], timeout_s=5))
    assert argv[:8] == ["ssh", "-p", "2222", "-o", "UserKnownHostsFile=/k/known", "-i", "/k/id", "root@198.18.0.2"]
    # Pasted into a shell, ssh receives one string, which the remote shell splits right.
    words = shlex.split(shlex.join(argv))
    assert words[-2] == "--" and shlex.split(words[-1]) == ["timeout", "-k", "2", "5", "echo", "a b"]


def test_local_process_handle() -> None:
    proc = LocalProcess(["sh", "-c", "exit 4"], start_new_session=True)
    assert proc.host == "local"
    assert proc.wait(5) == 4 and proc.poll() == 4
    proc.terminate()  # ended already: a no-op, not an error


def test_host_settings_are_checked() -> None:
    with pytest.raises(UserError, match="port 0"):
        SshHost("a", "198.18.0.1", port=0)
    host = SshHost("dut", "198.18.0.1", 2222, known_hosts_file=Path("/nonexistent/known_hosts"))
    assert host.label == "dut (root@198.18.0.1:2222)"
    with pytest.raises(HostKeyError, match=r"^host dut .*known_hosts file /nonexistent/known_hosts does not exist"):
        connect(host)


def test_a_spawn_line_with_a_piped_stdin_reads_what_is_written() -> None:
    line = spawn_command(["cat"], stdout=subprocess.PIPE, stdin=subprocess.PIPE)
    assert "</dev/null" not in shlex.split(line)[3]
    proc = subprocess.run(["sh", "-c", line], input="quit\n", capture_output=True, text=True, check=True)
    assert proc.stdout.split("\n", 1)[1] == "quit\n"
