"""SshExecutor.open_tcp: a direct-tcpip channel to the host's loopback over the connection vsperf
has, logged as the `ssh -N -L` a user would type; refusals are one-line connection errors naming
the host. (Against a real sshd: tests/integration/test_remote_ssh.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import paramiko
import pytest

from vsperf.executor import CommandLog
from vsperf.remote.connection import HostLostError, SshHost
from vsperf.remote.ssh import SshExecutor

HOST = SshHost("tgen", "198.18.0.3", port=2222, user="vsperf", key_file=Path("/k/id"), known_hosts_file=Path("/k/kh"))


class Transport:
    """What `open_tcp` asks of paramiko's transport: a channel, or the host's refusal."""

    def __init__(self, refuse: bool = False) -> None:
        self.refuse = refuse
        self.opened: list[tuple[Any, ...]] = []

    def open_channel(self, kind: str, dest: tuple[str, int], src: tuple[str, int], timeout: float) -> object:
        self.opened.append((kind, dest, src, timeout))
        if self.refuse:
            raise paramiko.ChannelException(1, "Administratively prohibited")
        return "channel"


class Client:
    def __init__(self, transport: Transport | None) -> None:
        self.transport = transport

    def get_transport(self) -> Transport | None:
        return self.transport


def _executor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, transport: Transport | None) -> SshExecutor:
    ssh = SshExecutor(HOST, CommandLog(tmp_path / "commands.log"))
    monkeypatch.setattr(ssh.connection, "client", lambda: Client(transport))
    return ssh


def test_a_forward_is_a_channel_of_the_connection_logged_as_ssh_l(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    transport = Transport()
    assert _executor(tmp_path, monkeypatch, transport).open_tcp(22022, timeout_s=3.0) == "channel"
    assert transport.opened == [("direct-tcpip", ("127.0.0.1", 22022), ("127.0.0.1", 0), 3.0)]
    line = (tmp_path / "commands.log").read_text().strip().split(" ", 2)[2]
    assert line == ("[tgen] [forward] ssh -p 2222 -o UserKnownHostsFile=/k/kh -i /k/id -N -L 22022:127.0.0.1:22022 "
                    "vsperf@198.18.0.3")


def test_refusals_are_connection_errors_naming_the_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    refused = r"^host tgen: SSH forward to 127\.0\.0\.1:22022 refused \(Administratively prohibited; sshd needs "
    with pytest.raises(ConnectionRefusedError, match=refused + r"AllowTcpForwarding\)$"):
        _executor(tmp_path, monkeypatch, Transport(refuse=True)).open_tcp(22022)
    with pytest.raises(ConnectionError, match=r"^no SSH connection to host tgen$"):
        _executor(tmp_path, monkeypatch, None).open_tcp(22022)

    def lost() -> Client:
        raise HostLostError("lost the SSH connection to host tgen (vsperf@198.18.0.3:2222)")

    ssh = SshExecutor(HOST, CommandLog(None))
    monkeypatch.setattr(ssh.connection, "client", lost)
    with pytest.raises(ConnectionError, match=r"^lost the SSH connection to host tgen"):
        ssh.open_tcp(22022)


def test_a_namespace_cannot_be_reached_over_ssh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    transport = Transport()
    with pytest.raises(ConnectionRefusedError, match=r"^host tgen: a TCP connection into namespace vspab12g0 cannot "
                                                     r"be forwarded over SSH$"):
        _executor(tmp_path, monkeypatch, transport).open_tcp(22022, netns="vspab12g0")
    # nothing forwarded, nothing logged (the command log exists from the start, empty: vsperf.executor.CommandLog)
    assert transport.opened == [] and (tmp_path / "commands.log").read_text() == ""
