"""SshExecutor.open_tcp: a TCP connection to a port of the host's loopback as a `direct-tcpip`
channel of the SSH connection vsperf has (nothing listens on the host's network), logged as the
OpenSSH command that opens the same forward; refusals are OSErrors naming the host (pktgen's Lua
client retries them while pktgen starts, then reports the last one). Against a faked transport:
the real thing runs in tests/integration/test_testbed_pktgen.py."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import paramiko
import pytest

from vsperf.executor import CommandLog
from vsperf.remote.connection import SshHost
from vsperf.remote.ssh import SshExecutor

CHANNEL = object()  # what the transport opened


class FakeTransport:
    def __init__(self, error: Exception | None) -> None:
        self.error = error
        self.opened: list[tuple[str, tuple[str, int], tuple[str, int], float]] = []

    def open_channel(self, kind: str, dest: tuple[str, int], src: tuple[str, int], timeout: float) -> object:
        self.opened.append((kind, dest, src, timeout))
        if self.error is not None:
            raise self.error
        return CHANNEL


def _executor(tmp_path: Path, transport: FakeTransport, monkeypatch: pytest.MonkeyPatch) -> SshExecutor:
    executor = SshExecutor(SshHost("gen", "198.18.0.10", port=2222, key_file=Path("/keys/id"),
                                   known_hosts_file=Path("/keys/known_hosts")),
                           CommandLog(tmp_path / "commands.log"))
    client = SimpleNamespace(get_transport=lambda: transport)
    monkeypatch.setattr(executor.connection, "client", lambda: client)
    return executor


def test_the_connection_is_a_direct_tcpip_channel_to_the_hosts_loopback(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    transport = FakeTransport(None)
    assert _executor(tmp_path, transport, monkeypatch).open_tcp(22022, timeout_s=2.0) is CHANNEL
    assert transport.opened == [("direct-tcpip", ("127.0.0.1", 22022), ("127.0.0.1", 0), 2.0)]


def test_the_forward_is_logged_as_the_openssh_command_that_opens_it(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    _executor(tmp_path, FakeTransport(None), monkeypatch).open_tcp(22022)
    (line,) = (tmp_path / "commands.log").read_text().splitlines()
    assert line.endswith(" [gen] [forward] ssh -p 2222 -o UserKnownHostsFile=/keys/known_hosts -i /keys/id "
                         "-N -L 22022:127.0.0.1:22022 root@198.18.0.10")


@pytest.mark.parametrize(("error", "kind", "message"), [
    (paramiko.ChannelException(2, "Connect failed"), ConnectionRefusedError,
     "host gen: SSH forward to 127.0.0.1:22022 refused (Connect failed; sshd needs AllowTcpForwarding)"),
    (paramiko.SSHException("Unable to open channel."), ConnectionError, "host gen: Unable to open channel."),
])
def test_a_refused_or_broken_forward_is_an_os_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    error: Exception, kind: type[Exception], message: str) -> None:
    with pytest.raises(kind) as raised:
        _executor(tmp_path, FakeTransport(error), monkeypatch).open_tcp(22022)
    assert str(raised.value) == message and isinstance(raised.value, OSError)


def test_a_connection_into_a_namespace_of_the_host_is_refused(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    transport = FakeTransport(None)
    with pytest.raises(ConnectionRefusedError, match=r"^host gen: a TCP connection into namespace ns0 cannot be "
                                                     r"forwarded over SSH$"):
        _executor(tmp_path, transport, monkeypatch).open_tcp(22022, netns="ns0")
    assert transport.opened == []
