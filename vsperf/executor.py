"""Every external command vsperf runs goes through an Executor and into the command log.

Argument lists only, never a shell string. `LocalExecutor` runs on this machine; a remote
(SSH) executor implements the same interface later.
"""

from __future__ import annotations

import logging
import shlex
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Protocol

from vsperf.errors import CommandError

log = logging.getLogger(__name__)


class Executor(Protocol):
    """Runs commands, optionally inside a network namespace."""

    def run(
        self,
        argv: Sequence[str],
        *,
        netns: str | None = None,
        check: bool = True,
        timeout_s: float | None = 60.0,
        env: Mapping[str, str] | None = None,
        input_text: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run to completion; raise CommandError on a non-zero exit when `check`."""
        ...

    def spawn(
        self,
        argv: Sequence[str],
        *,
        netns: str | None = None,
        env: Mapping[str, str] | None = None,
        stdout: IO[bytes] | int | None = subprocess.DEVNULL,
        stderr: IO[bytes] | int | None = subprocess.DEVNULL,
    ) -> subprocess.Popen[bytes]:
        """Start a background process; the caller owns it and must stop it by its PID."""
        ...


def netns_argv(argv: Sequence[str], netns: str | None) -> list[str]:
    """`argv` prefixed so that it runs inside network namespace `netns`."""
    return ["ip", "netns", "exec", netns, *argv] if netns else list(argv)


class CommandLog:
    """Append-only log of every command, replayable by a user (one shell-quoted line each)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)

    def record(self, argv: Sequence[str], env: Mapping[str, str] | None, note: str = "") -> None:
        envs = " ".join(f"{k}={shlex.quote(v)}" for k, v in (env or {}).items())
        line = f"{time.strftime('%Y-%m-%d %H:%M:%S')} {note}{envs + ' ' if envs else ''}{shlex.join(argv)}"
        log.debug("run: %s", line)
        if self.path is None:
            return
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")


class LocalExecutor:
    """Runs commands on this machine and logs them to the per-run command log."""

    def __init__(self, command_log: CommandLog | None = None) -> None:
        self.command_log = command_log or CommandLog(None)

    def _env(self, env: Mapping[str, str] | None) -> dict[str, str] | None:
        if env is None:
            return None
        import os

        merged = dict(os.environ)
        merged.update(env)
        return merged

    def run(
        self,
        argv: Sequence[str],
        *,
        netns: str | None = None,
        check: bool = True,
        timeout_s: float | None = 60.0,
        env: Mapping[str, str] | None = None,
        input_text: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        full = netns_argv(argv, netns)
        self.command_log.record(full, env)
        try:
            proc = subprocess.run(
                full,
                capture_output=True,
                text=True,
                timeout=timeout_s,
                env=self._env(env),
                input=input_text,
                check=False,
            )
        except FileNotFoundError as exc:
            raise CommandError(full, 127, f"{full[0]}: not found") from exc
        except subprocess.TimeoutExpired as exc:
            raise CommandError(full, -1, f"timed out after {timeout_s} s") from exc
        if check and proc.returncode != 0:
            raise CommandError(full, proc.returncode, proc.stderr or proc.stdout)
        return proc

    def spawn(
        self,
        argv: Sequence[str],
        *,
        netns: str | None = None,
        env: Mapping[str, str] | None = None,
        stdout: IO[bytes] | int | None = subprocess.DEVNULL,
        stderr: IO[bytes] | int | None = subprocess.DEVNULL,
    ) -> subprocess.Popen[bytes]:
        full = netns_argv(argv, netns)
        self.command_log.record(full, env, note="[background] ")
        try:
            # A new session keeps Ctrl-C on the terminal away from helpers: vsperf stops
            # them itself, in order, during teardown.
            return subprocess.Popen(
                full, stdout=stdout, stderr=stderr, env=self._env(env), start_new_session=True
            )
        except FileNotFoundError as exc:
            raise CommandError(full, 127, f"{full[0]}: not found") from exc
