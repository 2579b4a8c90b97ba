"""The SSH files a testbed names, checked before connecting: each problem said as it is."""

from __future__ import annotations

import re
from pathlib import Path

import paramiko
import pytest

from vsperf.remote.connection import HostAuthError, HostKeyError, SshHost, connect
from vsperf.remote.credentials import agent_problem, key_file_problem, known_hosts_problem

LABEL = "dut (root@198.18.0.2:22)"
SCAN = "ssh-keyscan -p 22 198.18.0.2"


@pytest.fixture(scope="module")
def rsa_key() -> paramiko.RSAKey:
    return paramiko.RSAKey.generate(1024)


def test_a_good_known_hosts_file(tmp_path: Path, rsa_key: paramiko.RSAKey) -> None:
    path = tmp_path / "known_hosts"
    skipped = "198.18.0.3 sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29t"  # paramiko skips it
    path.write_text(f"# comment\n\n[198.18.0.2]:22 ssh-rsa {rsa_key.get_base64()}\n{skipped}\n")
    assert known_hosts_problem(path, LABEL, SCAN) is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, r"known_hosts file .*/kh does not exist; add the host's key to it \(ssh-keyscan -p 22 198\.18\.0\.2, "),
        ("dir", r"known_hosts file .*/kh: is a directory, not a regular file; give the path of a file$"),
        (b"\xf9\x01binary", r"known_hosts file .*/kh: not UTF-8 text \(byte 0xf9 on line 1\); save it as UTF-8$"),
        (b"x ssh-ed25519 !!!notbase64\n", r"known_hosts file .*/kh: line 1 is not a known_hosts entry \(.*base64.*\); "
                                          r"fix or remove it$"),
        (b"just-a-host\n", r"line 1 is not a known_hosts entry \(host, key type, key\); fix or remove it$"),
    ],
)
def test_known_hosts_problems(tmp_path: Path, content: bytes | str | None, message: str) -> None:
    path = tmp_path / "kh"
    if content == "dir":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    problem = known_hosts_problem(path, LABEL, SCAN)
    assert problem is not None and problem.startswith(f"host {LABEL}: ")
    assert "\n" not in problem
    assert re.search(message, problem), problem


def test_key_files(tmp_path: Path, rsa_key: paramiko.RSAKey) -> None:
    good, locked, garbage, public, empty = (tmp_path / n for n in ("good", "locked", "garbage", "pub", "empty"))
    rsa_key.write_private_key_file(str(good))
    rsa_key.write_private_key_file(str(locked), password="secret")
    garbage.write_bytes(b"-----BEGIN OPENSSH PRIVATE KEY-----\nnot a key\n")
    public.write_text(f"ssh-rsa {rsa_key.get_base64()} me@host\n")
    empty.write_text("")
    assert key_file_problem(good, LABEL) is None
    assert "is protected by a passphrase, which vsperf never asks for; load it into ssh-agent" in str(
        key_file_problem(locked, LABEL))
    assert f"host {LABEL}: key file {garbage} is not a private key vsperf can read; give an OpenSSH private key" in str(
        key_file_problem(garbage, LABEL))
    assert f"key file {public} is a public key;" in str(key_file_problem(public, LABEL))
    assert f"key file {empty} is empty;" in str(key_file_problem(empty, LABEL))
    assert key_file_problem(tmp_path / "none", LABEL) == f"host {LABEL}: key file {tmp_path / 'none'} does not exist"
    assert "is a directory, not a regular file" in str(key_file_problem(tmp_path, LABEL))


def test_no_key_and_no_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    assert agent_problem(LABEL) == (f"host {LABEL}: no key_file and no SSH agent (SSH_AUTH_SOCK is not set); give "
                                    f"key_file or start ssh-agent and add a key (ssh-add)")


def test_connect_says_what_is_wrong_before_connecting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    (tmp_path / "kh").write_text("")
    with pytest.raises(HostKeyError, match=r"known_hosts file .* is a directory"):
        connect(SshHost("dut", "198.18.0.2", known_hosts_file=tmp_path))
    with pytest.raises(HostAuthError, match="no key_file and no SSH agent"):
        connect(SshHost("dut", "198.18.0.2", known_hosts_file=tmp_path / "kh"))
    (tmp_path / "key").write_text("garbage")
    with pytest.raises(HostAuthError, match="is not a private key vsperf can read"):
        connect(SshHost("dut", "198.18.0.2", known_hosts_file=tmp_path / "kh", key_file=tmp_path / "key"))
