"""One verified SSH connection per host: host keys from a known_hosts file, key authentication.

The security model: a host's key must already be in the named known_hosts file (paramiko's
`RejectPolicy`; nothing is ever added), authentication is by key only (a key file, or the SSH
agent when none is named), and no password is ever read from a file or asked for. Failures
to connect are `UserError`s (exit 2) in one line naming the host and what to fix.
"""

from __future__ import annotations

import errno
import logging
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

import paramiko

from vsperf.errors import DeploymentError, UserError
from vsperf.remote.credentials import agent_problem, key_file_problem, known_hosts_problem

log = logging.getLogger(__name__)
# paramiko logs every connection at INFO and its transport thread's failures as tracebacks at
# ERROR; vsperf raises those failures itself, as one line naming the host.
logging.getLogger("paramiko").setLevel(logging.CRITICAL)


class HostUnreachableError(UserError):
    """The host could not be reached (no route, refused, timed out)."""


class HostKeyError(UserError):
    """The host's key is not in, or does not match, the known_hosts file."""


class HostAuthError(UserError):
    """The host refused our key."""


class HostLostError(DeploymentError):
    """The connection to a host broke while vsperf was using it (the test fails, exit 1)."""


@dataclass(frozen=True)
class SshHost:
    """How to reach one host of a testbed over SSH."""

    name: str  # the testbed's name for the host ("dut", "tgen", ...)
    address: str  # IP address or DNS name
    port: int = 22
    user: str = "root"
    key_file: Path | None = None  # None: keys offered by the SSH agent
    known_hosts_file: Path = Path("~/.ssh/known_hosts")
    connect_timeout_s: float = 5.0  # TCP connect and the SSH banner
    auth_timeout_s: float = 10.0
    keepalive_s: int = 5  # SSH keepalive interval: a dead peer is noticed within a few

    def __post_init__(self) -> None:
        if not 0 < self.port < 65536:
            raise UserError(f"host {self.name}: port {self.port} is not a TCP port (1-65535)")
        if self.connect_timeout_s <= 0 or self.auth_timeout_s <= 0:
            raise UserError(f"host {self.name}: timeouts must be positive")

    @property
    def label(self) -> str:
        """`name (user@address:port)`: how messages name the host."""
        return f"{self.name} ({self.user}@{self.address}:{self.port})"


def _describe_os_error(exc: BaseException) -> str:
    if isinstance(exc, paramiko.ssh_exception.NoValidConnectionsError) and exc.errors:
        exc = next(iter(exc.errors.values()))  # one per address tried; the first says it
    if not isinstance(exc, OSError):
        return str(exc)
    if isinstance(exc, socket.timeout | TimeoutError):
        return "connection timed out"
    if isinstance(exc, socket.gaierror):
        return f"cannot resolve the address ({exc.strerror})"
    if exc.errno in (errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH):
        return exc.strerror or str(exc)
    return str(exc) or type(exc).__name__


def connect(host: SshHost) -> paramiko.SSHClient:
    """An authenticated SSH connection to `host`, its key verified against its known_hosts file."""
    known = host.known_hosts_file.expanduser()
    # Each file checked first, each problem said as it is (vsperf.remote.credentials).
    problem = known_hosts_problem(known, host.label, f"ssh-keyscan -p {host.port} {host.address}")
    if problem:
        raise HostKeyError(problem)
    problem = key_file_problem(host.key_file.expanduser(), host.label) if host.key_file else agent_problem(host.label)
    if problem:
        raise HostAuthError(problem)
    client = paramiko.SSHClient()
    try:
        client.load_host_keys(str(known))
    except (OSError, paramiko.SSHException, ValueError) as exc:
        raise HostKeyError(f"host {host.label}: cannot read known_hosts file {known}: {exc}") from exc
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    try:
        client.connect(
            host.address,
            port=host.port,
            username=host.user,
            key_filename=str(host.key_file.expanduser()) if host.key_file else None,
            allow_agent=host.key_file is None,
            look_for_keys=False,
            timeout=host.connect_timeout_s,
            banner_timeout=host.connect_timeout_s,
            auth_timeout=host.auth_timeout_s,
            channel_timeout=host.connect_timeout_s,
        )
    except paramiko.BadHostKeyException as exc:
        client.close()
        raise HostKeyError(
            f"host {host.label}: its key does not match the one in {known} "
            f"(got {exc.key.get_name()}); if the host was reinstalled, verify and replace the entry"
        ) from exc
    except paramiko.AuthenticationException as exc:
        client.close()
        how = f"key {host.key_file}" if host.key_file else "the SSH agent's keys"
        raise HostAuthError(f"host {host.label}: authentication with {how} failed ({exc})") from exc
    except paramiko.SSHException as exc:
        client.close()
        if "not found in known_hosts" in str(exc):
            raise HostKeyError(
                f"host {host.label}: its key is not in {known}; "
                f"add it (ssh-keyscan -p {host.port} {host.address}, then verify it)"
            ) from exc
        raise HostUnreachableError(f"host {host.label}: no SSH service answered ({exc})") from exc
    except OSError as exc:
        client.close()
        raise HostUnreachableError(f"host {host.label}: cannot connect: {_describe_os_error(exc)}") from exc
    transport = client.get_transport()
    assert transport is not None  # connect() succeeded
    transport.set_keepalive(host.keepalive_s)
    # Each command is a few small packets each way: without TCP_NODELAY, Nagle's algorithm
    # and the peer's delayed ACK add ~40 ms to every channel open.
    sock = transport.sock
    if isinstance(sock, socket.socket) and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    log.debug("connected to %s", host.label)
    return client


class Connection:
    """The one connection of a host, opened on first use and reused for every command."""

    def __init__(self, host: SshHost) -> None:
        self.host = host
        self._client: paramiko.SSHClient | None = None
        self._sftp: paramiko.SFTPClient | None = None
        self._lock = threading.Lock()
        self._lost = False

    def client(self) -> paramiko.SSHClient:
        """The connected client; connects on first use. A connection that broke is not silently
        re-made: the host's state may be unknown, so the test fails and says so."""
        with self._lock:
            if self._client is None:
                self._client = connect(self.host)
            transport = self._client.get_transport()
            if transport is None or not transport.is_active():
                self._lost = True
                raise HostLostError(f"lost the SSH connection to host {self.host.label}")
            return self._client

    def open_channel(self) -> paramiko.Channel:
        """A new session channel on the shared connection."""
        transport = self.client().get_transport()
        assert transport is not None
        try:
            return transport.open_session(timeout=self.host.connect_timeout_s)
        except (paramiko.SSHException, OSError, EOFError) as exc:
            raise HostLostError(f"lost the SSH connection to host {self.host.label}: {exc}") from exc

    def sftp(self) -> paramiko.SFTPClient:
        """The host's SFTP session (opened once)."""
        client = self.client()
        with self._lock:
            if self._sftp is None:
                try:
                    self._sftp = client.open_sftp()
                except (paramiko.SSHException, OSError, EOFError) as exc:
                    raise HostLostError(f"host {self.host.label}: cannot open SFTP: {exc}") from exc
            return self._sftp

    @property
    def lost(self) -> bool:
        """True once the connection was found broken."""
        return self._lost

    def close(self) -> None:
        """Close SFTP and the connection (safe to call twice)."""
        with self._lock:
            if self._sftp is not None:
                self._sftp.close()
                self._sftp = None
            if self._client is not None:
                self._client.close()
                self._client = None
