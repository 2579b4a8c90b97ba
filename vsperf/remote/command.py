"""Remote command lines: an argument list made into the one string SSH carries, safely.

SSH runs a single string through the remote user's login shell, so every argument is quoted
with `shlex` here (never joined from input). Pure functions: unit-tested without a server.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vsperf.executor import StreamSpec

# After a timed-out command's SIGTERM, `timeout` sends SIGKILL this much later.
KILL_AFTER_S = 2.0

# The shell prints its /proc/PID/stat line (PID first, start time in field 22: with shell
# builtins only, no fork), then becomes the command (`exec` keeps the PID). sshd started the
# login shell as a session leader and the leading `exec` makes `sh` that same process, so the
# PID is also the process group: signals go to the command and everything it forks.
_PID_SCRIPT = 'read -r s </proc/$$/stat; echo "$s"; exec "$@"'


def env_netns_argv(argv: Sequence[str], netns: str | None, env: Mapping[str, str] | None) -> list[str]:
    """`argv` with `env K=V` (merged into the remote environment) and `ip netns exec NS`."""
    full = ["ip", "netns", "exec", netns, *argv] if netns else list(argv)
    if env:
        full = ["env", *(f"{k}={v}" for k, v in env.items()), *full]
    return full


def run_command(
    argv: Sequence[str],
    *,
    netns: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
) -> str:
    """The remote command line of a foreground command; under `timeout -k` when it has a
    time limit, so that a command that overruns is killed on the remote host, not abandoned."""
    full = env_netns_argv(argv, netns, env)
    if timeout_s is not None:
        full = ["timeout", "-k", f"{KILL_AFTER_S:g}", f"{timeout_s:g}", *full]
    return shlex.join(full)


def _redirect(spec: StreamSpec, fd: int) -> str:
    """The shell redirection for one output stream of a background command."""
    if spec == subprocess.DEVNULL or spec is None:
        return f" {fd}>/dev/null"
    if fd == 2 and spec == subprocess.STDOUT:
        return " 2>&1"
    return ""  # PIPE or a local file: the stream comes back over the channel


def spawn_command(
    argv: Sequence[str],
    *,
    stdout: StreamSpec = subprocess.DEVNULL,
    stderr: StreamSpec = subprocess.DEVNULL,
    stdin: int | None = None,
) -> str:
    """The remote command line of background command `argv` (already wrapped by
    `env_netns_argv`); its first output line is its PID. Its stdin is /dev/null, or the
    channel with `stdin` PIPE (what the caller writes)."""
    stdin_redirect = "" if stdin == subprocess.PIPE else " </dev/null"
    script = _PID_SCRIPT + stdin_redirect + _redirect(stdout, 1) + _redirect(stderr, 2)
    return "exec " + shlex.join(["sh", "-c", script, "sh", *argv])


def parse_stat_line(line: str) -> tuple[int, int | None]:
    """(PID, start time in clock ticks) from a /proc/PID/stat line (the name in field 2 may hold
    spaces and parentheses: fields after it are counted from its last ')')."""
    pid = int(line.split(None, 1)[0])
    rest = line.rsplit(")", 1)[-1].split()
    return pid, int(rest[19]) if len(rest) > 19 and rest[19].isdigit() else None


def signal_command(pid: int, start_ticks: int | None, sig: int) -> str:
    """Send `sig` to process group `pid`, only while `pid` is still the process that started at
    `start_ticks` (field 22 of /proc/PID/stat): a PID alone is not an identity. Shell builtins
    only (no fork). dash's `kill` takes a negative PID as a group without `--`, and refuses `--`."""
    check = ""
    if start_ticks is not None:
        check = (f'read -r s </proc/{pid}/stat || exit 0; s=${{s##*) }}; set -- $s; shift 19; '
                 f'[ "$1" = {start_ticks} ] || exit 0; ')
    return shlex.join(["sh", "-c", f"{check}kill -{int(sig)} -{pid} 2>/dev/null || kill -{int(sig)} {pid}"])


@dataclass(frozen=True)
class ReplayTarget:
    """What a user needs to re-run a logged command with OpenSSH's client."""

    user: str
    address: str
    port: int
    key_file: Path | None
    known_hosts_file: Path

    def argv(self, command: str) -> list[str]:
        """`ssh ... -- COMMAND` for the command log; `shlex.join` of it is a replayable line."""
        opts = ["-p", str(self.port), "-o", f"UserKnownHostsFile={self.known_hosts_file}"]
        if self.key_file is not None:
            opts += ["-i", str(self.key_file)]
        return ["ssh", *opts, f"{self.user}@{self.address}", "--", command]
