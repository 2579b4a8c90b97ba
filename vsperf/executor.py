"""Every external command vsperf runs goes through an Executor and into the command log.

Argument lists only, never a shell string. `LocalExecutor` runs on this machine;
`vsperf.remote.ssh.SshExecutor` runs on another host over SSH with the same contract.
Background commands return a `Process`: a handle with the host's PID, signalled by that PID.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import shlex
import shutil
import socket
import subprocess
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any, Protocol, TypeVar, runtime_checkable

from vsperf.errors import CommandError

log = logging.getLogger(__name__)


@runtime_checkable
class Process(Protocol):
    """A background process started by an executor, on the executor's host.

    The subset of `subprocess.Popen` that a remote process can honour too: `wait` raises
    `subprocess.TimeoutExpired` on timeout, and signals go to the process's group (it was
    started as a session leader), so that what it forked stops with it.
    """

    pid: int  # on its own host (for a remote process: the remote PID)
    host: str  # `local`, or the testbed's name for the host
    stdin: IO[bytes] | None  # a stream when spawned with stdin=subprocess.PIPE (close it: end of input)
    stdout: IO[bytes] | None  # a stream when spawned with stdout=subprocess.PIPE
    stderr: IO[bytes] | None  # a stream when spawned with stderr=subprocess.PIPE
    returncode: int | None  # set once it has ended (negative: killed by that signal)

    def poll(self) -> int | None:
        """Exit code once it has ended, else None."""
        ...

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the end; raise `subprocess.TimeoutExpired` after `timeout` seconds."""
        ...

    def communicate(self, input: bytes | None = None, timeout: float | None = None) -> tuple[Any, Any]:
        """Read its piped stdout and stderr to the end and wait for it (as Popen does)."""
        ...

    def send_signal(self, sig: int) -> None:
        """Send `sig` to its process group; a process that has ended is left alone."""
        ...

    def terminate(self) -> None:
        """SIGTERM (see `send_signal`)."""
        ...

    def kill(self) -> None:
        """SIGKILL (see `send_signal`)."""
        ...


class LocalProcess(subprocess.Popen[bytes]):
    """A child process of vsperf on this machine, started in a session of its own."""

    host = "local"

    def send_signal(self, sig: int) -> None:
        # poll() reaps a child that exited, so its PID cannot have been reused when we signal.
        if self.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if os.getpgid(self.pid) == self.pid:
                os.killpg(self.pid, sig)
            else:
                os.kill(self.pid, sig)


class TcpStream(Protocol):
    """A TCP connection to a port of a host: a socket, or an SSH channel (paramiko.Channel)."""

    def fileno(self) -> int: ...

    def sendall(self, data: bytes) -> None: ...

    def recv(self, size: int) -> bytes: ...

    def settimeout(self, timeout: float | None) -> None: ...

    def close(self) -> None: ...


NETNS_DIR = "/run/netns"
_CLONE_NEWNET = 0x40000000
_T = TypeVar("_T")


def in_netns(ns: str, opener: Callable[[], _T]) -> _T:
    """`opener()` called from a short-lived thread that entered network namespace `ns` of this
    machine (setns changes only the calling thread; a socket opened there keeps that namespace);
    its OSError, or the namespace's, is raised here."""
    result: dict[str, Any] = {}

    def enter_and_open() -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            nsfd = os.open(os.path.join(NETNS_DIR, ns), os.O_RDONLY)
            try:
                if libc.setns(nsfd, _CLONE_NEWNET) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, f"setns({ns}): {os.strerror(err)}")
            finally:
                os.close(nsfd)
            result["value"] = opener()
        except OSError as exc:
            result["error"] = exc

    worker = threading.Thread(target=enter_and_open, name=f"netns-{ns}")
    worker.start()
    worker.join()
    if "error" in result:
        raise result["error"]
    value: _T = result["value"]
    return value


# Where a background command's output goes: DEVNULL, PIPE, STDOUT (stderr only) or a local binary file.
StreamSpec = IO[bytes] | int | None


@dataclass(frozen=True)
class Command:
    """A command as its caller asked for it; each executor adds the wrapping its host needs."""

    argv: tuple[str, ...]
    netns: str | None  # run inside this network namespace (None: the host's own)
    env: Mapping[str, str] | None  # merged into the host's environment


@dataclass(frozen=True)
class Streams:
    """A background command's stdout and stderr (`StreamSpec`) and stdin (PIPE, or not)."""

    stdout: StreamSpec
    stderr: StreamSpec
    stdin: int | None


class Executor(ABC):
    """Runs commands on one host, optionally inside a network namespace.

    `run` and `spawn` are the one contract callers use, whatever the host; an executor supplies
    how a command completes (`_complete`) or starts (`_start`) there, and how files travel.
    """

    command_log: CommandLog

    @property
    @abstractmethod
    def host(self) -> str:
        """`local`, or the testbed's name for the remote host."""

    @property
    def machine(self) -> str:
        """The machine its commands run on, the same for every executor reaching it (`local`, or
        user@address:port over SSH): where one command can read what several executors wrote."""
        return self.host

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
        """Run to completion; raise CommandError on a non-zero exit when `check` (and, whatever
        `check`, when the program is missing or overruns `timeout_s`)."""
        proc = self._complete(Command(tuple(argv), netns, env), timeout_s, input_text)
        if check and proc.returncode != 0:
            raise CommandError(list(proc.args), proc.returncode, proc.stderr or proc.stdout)
        return proc

    def spawn(
        self,
        argv: Sequence[str],
        *,
        netns: str | None = None,
        env: Mapping[str, str] | None = None,
        stdout: StreamSpec = subprocess.DEVNULL,
        stderr: StreamSpec = subprocess.DEVNULL,
        stdin: int | None = None,
    ) -> Process:
        """Start a background process; the caller owns it and must stop it by its PID.

        `stdout`/`stderr`: DEVNULL, PIPE, STDOUT (stderr only) or a local binary file.
        `stdin`: PIPE for a writable `Process.stdin` (a control channel); otherwise a local
        process inherits vsperf's (None) or reads DEVNULL, a remote one reads /dev/null.
        """
        return self._start(Command(tuple(argv), netns, env), Streams(stdout, stderr, stdin))

    @abstractmethod
    def _complete(
        self, cmd: Command, timeout_s: float | None, input_text: str | None
    ) -> subprocess.CompletedProcess[str]:
        """Run `cmd` to its end, its full argument list as `args`; CommandError when it cannot
        start or overruns `timeout_s`."""

    @abstractmethod
    def _start(self, cmd: Command, streams: Streams) -> Process:
        """Start `cmd` in the background; CommandError when it cannot start."""

    @abstractmethod
    def put(self, local: Path, remote: PurePosixPath | str, *, mode: int | None = None) -> None:
        """Copy a file of this machine to the host (permissions `mode` when given)."""

    @abstractmethod
    def open_tcp(self, port: int, *, netns: str | None = None, timeout_s: float = 5.0) -> TcpStream:
        """A TCP connection to `port` on the host's loopback (127.0.0.1), inside namespace `netns`;
        OSError (ConnectionRefusedError, ...) when it cannot be made. Nothing is opened to the
        host's network: over SSH it is a channel of the connection vsperf already has."""

    @abstractmethod
    def get(self, remote: PurePosixPath | str, local: Path) -> None:
        """Copy a file of the host to this machine."""


def netns_argv(argv: Sequence[str], netns: str | None) -> list[str]:
    """`argv` prefixed so that it runs inside network namespace `netns`."""
    return ["ip", "netns", "exec", netns, *argv] if netns else list(argv)


class CommandLog:
    """Append-only log of every command, replayable by a user (one shell-quoted line each).

    Opened without a path (before the run's directory exists: the checks made before anything
    is created), it keeps its lines until `attach` names the file, then writes them there first.
    """

    _MAX_PENDING = 10_000

    def __init__(self, path: Path | None) -> None:
        self.path: Path | None = None
        self._lock = threading.Lock()
        self._pending: list[str] = []
        self._failed = False
        if path is not None:
            self.attach(path)

    def attach(self, path: Path) -> None:
        """Write to `path` from now on, after the lines recorded so far; the file exists from
        now on even while empty (a run that ran no command says so with an empty log)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            self.path = path
            pending, self._pending = self._pending, []
            self._append("".join(f"{line}\n" for line in pending))

    def record(self, argv: Sequence[str], env: Mapping[str, str] | None, note: str = "") -> None:
        envs = " ".join(f"{k}={shlex.quote(v)}" for k, v in (env or {}).items())
        line = f"{time.strftime('%Y-%m-%d %H:%M:%S')} {note}{envs + ' ' if envs else ''}{shlex.join(argv)}"
        log.debug("run: %s", line)
        with self._lock:
            if self.path is None:
                if len(self._pending) < self._MAX_PENDING:
                    self._pending.append(line)
                return
            self._append(line + "\n")

    def _append(self, text: str) -> None:
        """Append `text` to the attached file (lock held); after a failure nothing more is tried."""
        if self._failed or self.path is None:
            return
        try:
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:  # a full disk: the command still runs; results.json's writer stops the run
            self._failed = True
            log.warning("%s: cannot write (%s); commands are no longer logged there", self.path, exc.strerror or exc)


class LocalExecutor(Executor):
    """Runs commands on this machine and logs them to the per-run command log."""

    host = "local"

    def __init__(self, command_log: CommandLog | None = None) -> None:
        self.command_log = command_log or CommandLog(None)

    def _env(self, env: Mapping[str, str] | None) -> dict[str, str] | None:
        if env is None:
            return None
        merged = dict(os.environ)
        merged.update(env)
        return merged

    def _complete(
        self, cmd: Command, timeout_s: float | None, input_text: str | None
    ) -> subprocess.CompletedProcess[str]:
        full = netns_argv(cmd.argv, cmd.netns)
        self.command_log.record(full, cmd.env)
        try:
            return subprocess.run(
                full,
                capture_output=True,
                text=True,
                timeout=timeout_s,
                env=self._env(cmd.env),
                input=input_text,
                check=False,
            )
        except FileNotFoundError as exc:
            raise CommandError(full, 127, f"{full[0]}: not found") from exc
        except subprocess.TimeoutExpired as exc:
            raise CommandError(full, -1, f"timed out after {timeout_s} s") from exc

    def _start(self, cmd: Command, streams: Streams) -> LocalProcess:
        full = netns_argv(cmd.argv, cmd.netns)
        self.command_log.record(full, cmd.env, note="[background] ")
        try:
            # A new session keeps Ctrl-C on the terminal away from helpers: vsperf stops
            # them itself, in order, during teardown.
            return LocalProcess(
                full,
                stdin=streams.stdin,
                stdout=streams.stdout,
                stderr=streams.stderr,
                env=self._env(cmd.env),
                start_new_session=True,
            )
        except FileNotFoundError as exc:
            raise CommandError(full, 127, f"{full[0]}: not found") from exc

    def put(self, local: Path, remote: PurePosixPath | str, *, mode: int | None = None) -> None:
        """Copy `local` to the path `remote` of this same machine."""
        if Path(remote) != local:
            shutil.copyfile(local, remote)
        if mode is not None:
            os.chmod(remote, mode)

    def get(self, remote: PurePosixPath | str, local: Path) -> None:
        """Copy the path `remote` of this same machine to `local`."""
        if Path(remote) != local:
            shutil.copyfile(remote, local)

    def open_tcp(self, port: int, *, netns: str | None = None, timeout_s: float = 5.0) -> TcpStream:
        """A socket to 127.0.0.1:`port`, opened inside namespace `netns` of this machine."""
        def connect() -> socket.socket:
            return socket.create_connection(("127.0.0.1", port), timeout=timeout_s)

        return connect() if netns is None else in_netns(netns, connect)
