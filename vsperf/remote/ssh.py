"""`SshExecutor`: the Executor contract of `LocalExecutor`, on another host over SSH.

One connection per host, one channel per command (no new TCP or SSH handshake per command).
Foreground commands run under `timeout -k` so that one that overruns dies on the remote host;
background commands report their remote PID and are signalled by it. Every command lands in the
command log as an `ssh ... -- COMMAND` line a user can paste to replay it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import subprocess
import threading
import time
from pathlib import Path, PurePosixPath
from typing import IO, Any, cast

import paramiko

from vsperf.errors import CommandError
from vsperf.executor import Command, CommandLog, Executor, Streams, TcpStream
from vsperf.remote.command import (
    KILL_AFTER_S,
    ReplayTarget,
    env_netns_argv,
    parse_stat_line,
    run_command,
    signal_command,
    spawn_command,
)
from vsperf.remote.connection import Connection, HostLostError, SshHost

log = logging.getLogger(__name__)

# Beyond a command's own limit (and `timeout`'s kill delay), how long to wait for the remote
# side to report before giving up on the channel.
_LOCAL_GRACE_S = 5.0
_POLL_S = 0.05
_TIMEOUT_CODES = (124, 128 + signal.SIGKILL)  # `timeout` after SIGTERM / after its SIGKILL
# How `timeout` and `ip netns exec` say that they could not start the program itself.
_NOT_STARTED = ("failed to run command", "exec of ")


def _drain(chan: paramiko.Channel, out: list[bytes], err: list[bytes]) -> None:
    while chan.recv_ready():
        out.append(chan.recv(65536))
    while chan.recv_stderr_ready():
        err.append(chan.recv_stderr(65536))


def collect(chan: paramiko.Channel, deadline: float | None) -> tuple[bytes, bytes, int | None]:
    """Read a channel's stdout and stderr until it reports its exit code (None: `deadline`,
    a `time.monotonic()` value, passed first)."""
    out: list[bytes] = []
    err: list[bytes] = []
    while True:
        _drain(chan, out, err)
        if chan.exit_status_ready() and (chan.eof_received or chan.closed):
            _drain(chan, out, err)
            return b"".join(out), b"".join(err), chan.recv_exit_status()
        if chan.closed and not chan.exit_status_ready():
            return b"".join(out), b"".join(err), None
        wait = _POLL_S if deadline is None else min(_POLL_S, max(deadline - time.monotonic(), 0.0))
        if deadline is not None and wait <= 0:
            return b"".join(out), b"".join(err), None
        if chan.eof_received:
            chan.status_event.wait(wait)  # output ended; only the exit status is still to come
        else:
            select.select([chan], [], [], wait)


class SshExecutor(Executor):
    """Runs commands on one remote host over its (shared) SSH connection."""

    def __init__(self, host: SshHost, command_log: CommandLog | None = None) -> None:
        self.ssh_host = host
        self.connection = Connection(host)
        self.command_log = command_log or CommandLog(None)
        self.replay = ReplayTarget(host.user, host.address, host.port, host.key_file, host.known_hosts_file)
        self._forwarded: set[int] = set()  # ports `open_tcp` logged a forward for

    @property
    def host(self) -> str:
        """The testbed's name for the host."""
        return self.ssh_host.name

    @property
    def machine(self) -> str:
        return f"{self.replay.user}@{self.replay.address}:{self.replay.port}"

    def connect(self) -> None:
        """Connect now (a preflight: unreachable host, wrong key or refused key end here)."""
        self.connection.client()

    def close(self) -> None:
        """Close the connection; background processes keep running (stop them first)."""
        self.connection.close()

    def _log(self, command: str, note: str = "") -> None:
        self.command_log.record(self.replay.argv(command), None, note=f"[{self.host}] {note}")

    def _channel(self, command: str) -> paramiko.Channel:
        chan = self.connection.open_channel()
        try:
            chan.exec_command(command)
        except (paramiko.SSHException, OSError, EOFError) as exc:
            chan.close()
            raise HostLostError(f"host {self.ssh_host.label}: cannot run a command: {exc}") from exc
        return chan

    def _complete(
        self, cmd: Command, timeout_s: float | None, input_text: str | None
    ) -> subprocess.CompletedProcess[str]:
        """Run `cmd` on the host under `timeout -k` (see `run_command`)."""
        argv = cmd.argv
        full = env_netns_argv(argv, cmd.netns, cmd.env)
        command = run_command(argv, netns=cmd.netns, env=cmd.env, timeout_s=timeout_s)
        self._log(command)
        started = time.monotonic()
        deadline = None if timeout_s is None else started + timeout_s + KILL_AFTER_S + _LOCAL_GRACE_S
        chan = self._channel(command)
        try:
            if input_text:
                chan.sendall(input_text.encode())
            chan.shutdown_write()
            out_b, err_b, code = collect(chan, deadline)
        except (OSError, EOFError, paramiko.SSHException) as exc:
            raise HostLostError(f"lost the SSH connection to host {self.ssh_host.label}: {exc}") from exc
        finally:
            chan.close()
        out, err = out_b.decode(errors="replace"), err_b.decode(errors="replace")
        if code is None:
            if not self.alive():
                raise HostLostError(f"lost the SSH connection to host {self.ssh_host.label} while running {argv[0]}")
            raise CommandError(full, -1, f"timed out after {timeout_s} s (no answer from host {self.host})")
        if timeout_s is not None and code in _TIMEOUT_CODES and time.monotonic() - started >= timeout_s:
            raise CommandError(full, -1, f"timed out after {timeout_s} s on host {self.host}")
        if code == 127 and argv[0] in err and any(s in err for s in _NOT_STARTED):
            raise CommandError(full, 127, f"{argv[0]}: not found on host {self.host}")
        if code == -1 and not self.alive():
            raise HostLostError(f"lost the SSH connection to host {self.ssh_host.label} while running {argv[0]}")
        return subprocess.CompletedProcess(full, code, out, err)

    def alive(self) -> bool:
        """True while the connection to the host works."""
        try:
            transport = self.connection.client().get_transport()
        except HostLostError:
            return False
        return transport is not None and transport.is_active()

    def _start(self, cmd: Command, streams: Streams) -> RemoteProcess:
        """Start `cmd` in the background on the host; it is stopped by its remote PID.

        `stdout`/`stderr`: DEVNULL (on the host), PIPE (a stream on the returned process),
        STDOUT (stderr only), or a local binary file that receives the output as it comes.
        `stdin`: PIPE makes `stdin` a writable stream carried by the channel (closing it is the
        process's end of input); anything else is /dev/null on the host.
        """
        full = env_netns_argv(cmd.argv, cmd.netns, cmd.env)
        stdout, stderr, stdin = streams.stdout, streams.stderr, streams.stdin
        command = spawn_command(full, stdout=stdout, stderr=stderr, stdin=stdin)
        self._log(command, note="[background] ")
        chan = self._channel(command)
        if stdin != subprocess.PIPE:
            chan.shutdown_write()
        out = chan.makefile("rb")
        chan.settimeout(self.ssh_host.connect_timeout_s)  # the PID comes at once, or something is wrong
        try:
            pid, ticks = parse_stat_line(out.readline().decode(errors="replace"))
        except (ValueError, IndexError, TimeoutError) as exc:
            chan.close()
            raise CommandError(full, -1, f"no PID from host {self.host}: {exc}") from None
        chan.settimeout(None)
        proc = RemoteProcess(self, chan, pid, ticks)
        if stdin == subprocess.PIPE:
            proc.stdin = cast(IO[bytes], chan.makefile_stdin("wb"))
        if stdout == subprocess.PIPE:
            proc.stdout = cast(IO[bytes], out)
        elif not isinstance(stdout, int) and stdout is not None:
            proc.pump(out, stdout)
        if stderr == subprocess.PIPE:
            proc.stderr = cast(IO[bytes], chan.makefile_stderr("rb"))
        elif not isinstance(stderr, int) and stderr is not None:
            proc.pump(chan.makefile_stderr("rb"), stderr)
        return proc

    def run_text(self, command: str, timeout_s: float = 10.0) -> str:
        """Run a prepared command line (from vsperf.remote.command) and return its stdout."""
        chan = self._channel(command)
        try:
            chan.shutdown_write()
            out, _err, _code = collect(chan, time.monotonic() + timeout_s)
        finally:
            chan.close()
        return out.decode(errors="replace").strip()

    def signal(self, pid: int, start_ticks: int | None, sig: int) -> None:
        """Send `sig` to the process group `pid` on the host (if it is still that process)."""
        command = signal_command(pid, start_ticks, sig)
        self._log(command)
        self.run_text(command)

    # --- files --------------------------------------------------------------------------------

    def _scp_log(self, src: str, dst: str) -> None:
        t = self.replay
        opts = ["-P", str(t.port), "-o", f"UserKnownHostsFile={t.known_hosts_file}"]
        if t.key_file is not None:
            opts += ["-i", str(t.key_file)]
        self.command_log.record(["scp", *opts, src, dst], None, note=f"[{self.host}] ")

    def put(self, local: Path, remote: PurePosixPath | str, *, mode: int | None = None) -> None:
        """Copy a local file to the host over SFTP (permissions `mode` when given)."""
        self._scp_log(str(local), f"{self.replay.user}@{self.replay.address}:{remote}")
        sftp = self.connection.sftp()
        try:
            sftp.put(str(local), str(remote))
            if mode is not None:
                sftp.chmod(str(remote), mode)
        except OSError as exc:
            raise CommandError(["sftp", "put", str(local), str(remote)], -1, f"host {self.host}: {exc}") from exc

    def get(self, remote: PurePosixPath | str, local: Path) -> None:
        """Copy a file from the host to this machine over SFTP."""
        self._scp_log(f"{self.replay.user}@{self.replay.address}:{remote}", str(local))
        try:
            self.connection.sftp().get(str(remote), str(local))
        except OSError as exc:
            raise CommandError(["sftp", "get", str(remote), str(local)], -1, f"host {self.host}: {exc}") from exc

    def open_tcp(self, port: int, *, netns: str | None = None, timeout_s: float = 5.0) -> TcpStream:
        """A `direct-tcpip` channel to 127.0.0.1:`port` of the host over its SSH connection (what
        `ssh -L` uses: nothing listens on the host's network); a refused or forbidden forward is
        a ConnectionRefusedError naming the host."""
        if netns is not None:
            raise ConnectionRefusedError(f"host {self.host}: a TCP connection into namespace {netns} cannot be "
                                         f"forwarded over SSH")
        if port not in self._forwarded:  # once per port: a client retrying its connection is one forward
            self._forwarded.add(port)
            argv = self.replay.argv("")[:-2]  # `ssh -N -L` for the command log (without "-- COMMAND")
            self.command_log.record([*argv[:-1], "-N", "-L", f"{port}:127.0.0.1:{port}", argv[-1]], None,
                                    note=f"[{self.host}] [forward] ")
        try:
            transport = self.connection.client().get_transport()
        except HostLostError as exc:
            raise ConnectionError(str(exc)) from exc
        if transport is None:
            raise ConnectionError(f"no SSH connection to host {self.host}")
        try:
            chan: TcpStream = transport.open_channel("direct-tcpip", ("127.0.0.1", port), ("127.0.0.1", 0),
                                                     timeout=timeout_s)
        except paramiko.ChannelException as exc:  # the host's sshd could not (or may not) connect
            raise ConnectionRefusedError(f"host {self.host}: SSH forward to 127.0.0.1:{port} refused "
                                         f"({exc.text or exc.code}; sshd needs AllowTcpForwarding)") from exc
        except (paramiko.SSHException, EOFError) as exc:
            raise ConnectionError(f"host {self.host}: {exc}") from exc
        return chan

    def __repr__(self) -> str:
        return f"SshExecutor({self.ssh_host.label})"


class RemoteProcess:
    """A background process on a remote host, tied to the SSH channel that started it.

    Honours the `vsperf.executor.Process` contract: `wait` raises `subprocess.TimeoutExpired`,
    signals go to its process group by its remote PID (checked against its start time first).
    When the connection breaks, `poll` and `wait` raise `HostLostError`: its state is unknown.
    """

    def __init__(self, executor: SshExecutor, chan: paramiko.Channel, pid: int, start_ticks: int | None) -> None:
        self.executor = executor
        self.chan = chan
        self.pid = pid
        self.host = executor.host
        self.start_ticks = start_ticks  # /proc/PID/stat starttime: the process's identity with its PID
        self.stdin: IO[bytes] | None = None
        self.stdout: IO[bytes] | None = None
        self.stderr: IO[bytes] | None = None
        self.returncode: int | None = None
        self._pumps: list[threading.Thread] = []

    def pump(self, stream: paramiko.ChannelFile, target: IO[bytes]) -> None:
        """Copy `stream` into the local file `target` line by line as output arrives (on a
        duplicate of its descriptor: the caller may close its own file object right away)."""
        fd = os.dup(target.fileno())

        def copy() -> None:
            try:
                while line := stream.readline():
                    os.write(fd, line if isinstance(line, bytes) else line.encode())
            except (OSError, EOFError):
                pass
            finally:
                os.close(fd)

        thread = threading.Thread(target=copy, name=f"ssh-pump-{self.pid}", daemon=True)
        thread.start()
        self._pumps.append(thread)

    def poll(self) -> int | None:
        if self.returncode is not None:
            return self.returncode
        if not self.chan.exit_status_ready():
            return None
        if self.chan.closed and not self.executor.alive():
            raise HostLostError(f"lost the SSH connection to host {self.executor.ssh_host.label}")
        self.returncode = self.chan.recv_exit_status()
        for thread in self._pumps:
            thread.join(timeout=1.0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        self.chan.status_event.wait(timeout)
        code = self.poll()
        if code is None:
            assert timeout is not None
            raise subprocess.TimeoutExpired(f"pid {self.pid} on host {self.host}", timeout)
        return code

    def communicate(self, input: bytes | None = None, timeout: float | None = None) -> tuple[Any, Any]:
        """Read piped stdout/stderr to the end and wait; `input` needs stdin=PIPE (it is
        written, then stdin is closed)."""
        if input:
            if self.stdin is None:
                raise ValueError("a remote background process started without stdin=PIPE has no stdin")
            self.stdin.write(input)
        if self.stdin is not None:
            with contextlib.suppress(OSError, EOFError):
                self.stdin.close()
        results: dict[str, bytes] = {}
        readers = [threading.Thread(target=lambda k=k, f=f: results.__setitem__(k, f.read()), daemon=True)
                   for k, f in (("out", self.stdout), ("err", self.stderr)) if f is not None]
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in readers:
            thread.start()
        for thread in readers:
            thread.join(None if deadline is None else max(deadline - time.monotonic(), 0.0))
            if thread.is_alive():
                raise subprocess.TimeoutExpired(f"pid {self.pid} on host {self.host}", timeout or 0.0)
        self.wait(None if deadline is None else max(deadline - time.monotonic(), 0.0))
        return (results.get("out") if self.stdout else None), (results.get("err") if self.stderr else None)

    def send_signal(self, sig: int) -> None:
        if self.chan.exit_status_ready():
            return
        try:
            self.executor.signal(self.pid, self.start_ticks, sig)
        except HostLostError as exc:
            # Nothing can be sent; the next run's cleanup finds the process by its record.
            log.warning("cannot signal pid %d: %s", self.pid, exc)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def close(self) -> None:
        """Close the channel (the process, if it still runs, is not affected)."""
        with contextlib.suppress(Exception):
            self.chan.close()

    def __repr__(self) -> str:
        return f"RemoteProcess(host={self.host!r}, pid={self.pid})"


__all__ = ["RemoteProcess", "SshExecutor"]
