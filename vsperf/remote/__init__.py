"""Remote hosts: the SSH executor (paramiko) and its connection handling."""

from vsperf.remote.connection import HostAuthError, HostKeyError, HostLostError, HostUnreachableError, SshHost
from vsperf.remote.ssh import RemoteProcess, SshExecutor

__all__ = [
    "HostAuthError",
    "HostKeyError",
    "HostLostError",
    "HostUnreachableError",
    "RemoteProcess",
    "SshExecutor",
    "SshHost",
]
