"""Throwaway OpenSSH servers standing in for a testbed's hosts (root only).

Each server gets its own directory with an ed25519 host key, an authorized client key, a
known_hosts file holding the host key, and a config on a private port. A "host" may live in a
network namespace of its own: `make_host_netns` creates the namespace and a veth from this
(the controller's) namespace to it, addressed from 198.18.0.0/15.

What this can and cannot show: the namespaces share this machine's filesystem and process
table, so a test proves that every command and file went over SSH only by checking the command
log and what vsperf did, not by the hosts being separate machines.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

SSHD = "/usr/sbin/sshd"


def sshd_skip_reason() -> str | None:
    """Why the throwaway sshd cannot run here (None: it can)."""
    if os.geteuid() != 0:
        return "needs root (sshd, network namespaces)"
    if not Path(SSHD).is_file():
        return "sshd missing: apt-get install openssh-server"
    if shutil.which("ssh-keygen") is None:
        return "ssh-keygen missing: apt-get install openssh-client"
    return None


def free_port() -> int:
    """A TCP port nobody listens on right now (on 127.0.0.1)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def keygen(path: Path) -> None:
    """A passphrase-less ed25519 key pair at `path` and `path`.pub."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "vsperf-test", "-f", str(path)],
                   check=True, capture_output=True)


@dataclass
class SshdServer:
    """One running sshd: its address, the client's key and known_hosts file, its PID."""

    name: str
    address: str
    port: int
    directory: Path
    netns: str | None
    pid: int = 0

    @property
    def client_key(self) -> Path:
        return self.directory / "client_key"

    @property
    def known_hosts(self) -> Path:
        return self.directory / "known_hosts"

    @property
    def host_key_pub(self) -> str:
        return (self.directory / "host_key.pub").read_text().split(maxsplit=2)[1]

    def kill(self) -> None:
        """SIGKILL the server and its per-connection processes: the host drops off the net."""
        with contextlib.suppress(psutil.NoSuchProcess):
            proc = psutil.Process(self.pid)
            family = [*proc.children(recursive=True), proc]
            # Commands the sessions run (they are the host's processes) are not sshd: leave them.
            for p in family:
                with contextlib.suppress(psutil.NoSuchProcess):
                    if p.name() == "sshd":
                        p.send_signal(signal.SIGKILL)
            psutil.wait_procs(family, timeout=5)

    def stop(self) -> None:
        """Stop the server and its sessions by PID."""
        self.kill()


def start_sshd(directory: Path, name: str, *, address: str = "127.0.0.1", port: int | None = None,
               netns: str | None = None) -> SshdServer:
    """Start sshd for host `name` on `address`:`port` (inside `netns` when given)."""
    directory.mkdir(parents=True, exist_ok=True)
    Path("/run/sshd").mkdir(parents=True, exist_ok=True)  # sshd's privilege-separation dir
    srv = SshdServer(name, address, port or free_port(), directory, netns)
    keygen(directory / "host_key")
    keygen(srv.client_key)
    shutil.copy(directory / "client_key.pub", directory / "authorized_keys")
    host_pub = (directory / "host_key.pub").read_text().split()
    host_id = address if srv.port == 22 else f"[{address}]:{srv.port}"
    srv.known_hosts.write_text(f"{host_id} {host_pub[0]} {host_pub[1]}\n")
    config = directory / "sshd_config"
    config.write_text(
        f"Port {srv.port}\nListenAddress {address}\nHostKey {directory / 'host_key'}\n"
        f"AuthorizedKeysFile {directory / 'authorized_keys'}\nPidFile {directory / 'sshd.pid'}\n"
        "UsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n"
        "StrictModes no\nSubsystem sftp internal-sftp\nMaxSessions 64\nMaxStartups 64\nLogLevel ERROR\n"
        # bash sources ~/.bashrc for commands from sshd when SHLVL < 2; this machine's root
        # .bashrc runs `pyenv init` (~150 ms per command): the test hosts skip it like a lean host.
        "SetEnv SHLVL=1\n"
    )
    prefix = ["ip", "netns", "exec", netns] if netns else []
    subprocess.run([*prefix, SSHD, "-t", "-f", str(config)], check=True, capture_output=True)
    return run_sshd(srv)


def run_sshd(srv: SshdServer) -> SshdServer:
    """Start (or start again, same keys and config) the sshd of `srv`; wait until it listens."""
    prefix = ["ip", "netns", "exec", srv.netns] if srv.netns else []
    log = (srv.directory / "sshd.log").open("ab")
    proc = subprocess.Popen([*prefix, SSHD, "-D", "-e", "-f", str(srv.directory / "sshd_config")], stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    log.close()
    srv.pid = proc.pid
    deadline = time.monotonic() + 10
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"sshd for {srv.name} exited: {(srv.directory / 'sshd.log').read_text()}")
        if _listening(srv):
            return srv
        if time.monotonic() > deadline:
            srv.stop()
            raise RuntimeError(f"sshd for {srv.name} did not listen on {srv.address}:{srv.port}")
        time.sleep(0.02)


def _listening(srv: SshdServer) -> bool:
    # `ss` inside the host's namespace: the controller may not have a route yet.
    prefix = ["ip", "netns", "exec", srv.netns] if srv.netns else []
    out = subprocess.run([*prefix, "ss", "-Htln", f"sport = :{srv.port}"], capture_output=True, text=True)
    return str(srv.port) in out.stdout


def make_host_netns(netns: str, link: str, controller_addr: str, host_addr: str) -> None:
    """Namespace `netns` reachable from here over veth `link` (`link`h inside), /29 addresses
    (the spare ones of the /29 answer nobody: an unreachable host that stays on this link)."""
    subprocess.run(["ip", "netns", "add", netns], check=True)

    def run(*argv: str) -> None:
        subprocess.run(list(argv), check=True, capture_output=True)

    run("ip", "link", "add", link, "type", "veth", "peer", "name", f"{link}h", "netns", netns)
    run("ip", "addr", "add", f"{controller_addr}/29", "dev", link)
    run("ip", "link", "set", link, "up")
    run("ip", "-n", netns, "addr", "add", f"{host_addr}/29", "dev", f"{link}h")
    run("ip", "-n", netns, "link", "set", f"{link}h", "up")
    run("ip", "-n", netns, "link", "set", "lo", "up")


def remove_netns(netns: str, link: str) -> None:
    """Remove what `make_host_netns` made (by name; missing ones are fine)."""
    subprocess.run(["ip", "link", "del", link], capture_output=True)
    subprocess.run(["ip", "netns", "del", netns], capture_output=True)
