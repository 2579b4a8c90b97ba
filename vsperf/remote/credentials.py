"""The SSH files and keys a testbed host names, checked before connecting, each problem said as it is.

Without these checks paramiko's own errors surfaced: a garbage key_file, or no key file and no
agent, as "no SSH service answered"; a known_hosts_file that is a directory as "does not exist";
one that is binary or holds a broken line as a traceback. The files are read through vsperf.inputs
(regular files only, bounded, UTF-8), like every input file.
"""

from __future__ import annotations

import os
from pathlib import Path

import paramiko
from paramiko.hostkeys import HostKeyEntry, InvalidHostKey

from vsperf.inputs import InputError, read_bytes, read_text_file
from vsperf.inputs.limits import KEY_FILE_MAX_BYTES, KNOWN_HOSTS_MAX_BYTES


def known_hosts_problem(path: Path, host_label: str, keyscan: str) -> str | None:
    """What is wrong with the known_hosts file at `path` (None: a readable known_hosts file).
    `keyscan` is the command that fetches the host's key, for the message of a missing file."""
    what = f"host {host_label}: known_hosts file {path}"
    if not path.exists() and not path.is_symlink():
        return f"{what} does not exist; add the host's key to it ({keyscan}, then verify it)"
    try:
        text = read_text_file(path, what, KNOWN_HOSTS_MAX_BYTES)
    except InputError as exc:
        return str(exc)
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if len(stripped.split()) < 3:
            return f"{what}: line {number} is not a known_hosts entry (host, key type, key); fix or remove it"
        try:
            # None: a key type paramiko does not use (skipped, as paramiko does)
            HostKeyEntry.from_line(stripped, number)
        except (InvalidHostKey, ValueError, TypeError, IndexError) as exc:
            return f"{what}: line {number} is not a known_hosts entry ({_reason(exc)}); fix or remove it"
    return None


def _reason(exc: BaseException) -> str:
    inner = exc.args[1] if isinstance(exc, InvalidHostKey) and len(exc.args) > 1 else exc
    text = " ".join(str(inner).split())
    return text if len(text) <= 80 else text[:77] + "..."


def key_file_problem(path: Path, host_label: str) -> str | None:
    """What is wrong with the private key file at `path` (None: a key paramiko can use)."""
    what = f"host {host_label}: key file {path}"
    if not path.exists() and not path.is_symlink():
        return f"{what} does not exist"
    try:
        data = read_bytes(path, what, KEY_FILE_MAX_BYTES)
    except InputError as exc:
        return str(exc)
    try:
        paramiko.PKey.from_path(path)
    except (paramiko.PasswordRequiredException, TypeError) as exc:
        # paramiko says so for OpenSSH keys, cryptography with a TypeError for PEM ones
        if isinstance(exc, paramiko.PasswordRequiredException) or "encrypted" in str(exc):
            return (f"{what} is protected by a passphrase, which vsperf never asks for; load it into ssh-agent "
                    f"(ssh-add) and leave key_file out")
        return (f"{what} is not a private key vsperf can read; give an OpenSSH private key (ssh-keygen -t ed25519) "
                f"or leave key_file out to use ssh-agent")
    except (paramiko.SSHException, ValueError, UnicodeDecodeError, IndexError):
        # paramiko's and cryptography's own messages (a URL to an FAQ) do not help here
        kind = "is empty" if not data.strip() else "is not a private key vsperf can read"
        if data.strip().startswith(b"ssh-") or b" ssh-" in data[:100]:
            kind = "is a public key"  # the .pub next to the private key, a common slip
        return (f"{what} {kind}; give an OpenSSH private key (ssh-keygen -t ed25519) or leave key_file out to "
                f"use ssh-agent")
    except OSError as exc:
        return f"{what}: cannot read it: {exc.strerror or exc}"
    return None


def agent_problem(host_label: str) -> str | None:
    """Why the SSH agent cannot authenticate a host that names no key_file (None: it has keys)."""
    if not os.environ.get("SSH_AUTH_SOCK"):
        return (f"host {host_label}: no key_file and no SSH agent (SSH_AUTH_SOCK is not set); give key_file or "
                f"start ssh-agent and add a key (ssh-add)")
    try:
        agent = paramiko.Agent()
        try:
            keys = agent.get_keys()
        finally:
            agent.close()
    except (paramiko.SSHException, OSError) as exc:
        return f"host {host_label}: no key_file and the SSH agent does not answer ({_reason(exc)}); give key_file"
    if not keys:
        return f"host {host_label}: no key_file and the SSH agent holds no key; give key_file or add one (ssh-add)"
    return None
