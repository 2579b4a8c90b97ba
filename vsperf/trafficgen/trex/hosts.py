"""Where TRex's server runs, as `vsperf.trafficgen.trex.server.ServerHost`: today's adapters.

- `LabHost`: the local lab. The server runs in the namespace of the generator ports (the lab
  puts both in one for TRex, `TrafficGenerator.PORTS_IN_ONE_NAMESPACE`), through the run's
  executor; the lab records that namespace, and deleting it (at the end, or the next run after
  a SIGKILL) stops whatever still runs there. Its config lives in the run's work directory.
- `TestbedHost`: a testbed's generator host, over SSH or `local`. The server is started through
  the run's testbed session (`HostProcesses`: journaled by PID and start time, stopped by the
  next run after a SIGKILL); its config goes to /tmp/vsperf-RUNID-trex there and its DPDK prefix
  is vsperf-RUNID-trex (both swept by the next run after a kill). Its RPC ports are reached
  through `direct-tcpip` channels of the SSH connection vsperf already has to the host.
- `ssh_forwards`: a server already running on a host (TRAFFICGEN_TREX_HOST_IP_ADDR, or a
  testbed's generator host with TRAFFICGEN_TREX_START_SERVER false): its RPC ports only.

When vsperf's Host (one object per machine: journaled spawn and stop, staging, forwarding)
replaces the testbed session and the lab's executor, these adapters go: the server module
takes the Host as it is.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import paramiko

from vsperf.errors import CommandError
from vsperf.executor import Executor, LocalExecutor, Process
from vsperf.lab.netdev import in_netns
from vsperf.remote.ssh import SshExecutor
from vsperf.trafficgen.base import HostProcesses
from vsperf.trafficgen.trex.forward import LOOPBACK, Forwarder, Stream

log = logging.getLogger(__name__)


def _tail(path: Path, lines: int) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:] if line.strip())


def _completed(executor: Executor, argv: Sequence[str], netns: str | None,
               timeout_s: float) -> subprocess.CompletedProcess[str]:
    try:
        return executor.run(argv, netns=netns, check=False, timeout_s=timeout_s)
    except CommandError as exc:  # missing program, timeout: a failed check
        return subprocess.CompletedProcess(list(argv), exc.returncode, "", str(exc))


class LabHost:
    """The local lab's namespace `netns` of this machine."""

    name = "local"

    def __init__(self, executor: Executor, netns: str | None, work_dir: Path, run_id: str) -> None:
        self.executor = executor
        self.netns = netns
        self.work_dir = work_dir
        self.run_id = run_id
        self.log_path = work_dir / "server.log"
        self._forwards: list[Forwarder] = []

    @property
    def run_dir(self) -> str:
        return str(self.work_dir / "run")

    @property
    def file_prefix(self) -> str:
        return f"vsp{self.run_id}t"  # the lab's tag (vsperf.lab.names)

    def run(self, argv: Sequence[str], *, timeout_s: float = 30.0) -> subprocess.CompletedProcess[str]:
        return _completed(self.executor, argv, self.netns, timeout_s)

    def put(self, text: str, path: str) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text, encoding="utf-8")

    def spawn(self, label: str, argv: Sequence[str]) -> Process:
        with self.log_path.open("ab") as out:
            return self.executor.spawn(argv, netns=self.netns, stdout=out, stderr=subprocess.STDOUT)

    def log_tail(self, lines: int) -> str:
        return _tail(self.log_path, lines)

    def stop(self, proc: Process, *, timeout_s: float) -> int | None:
        if proc.poll() is None:
            proc.terminate()
            try:
                return proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            return proc.wait(timeout_s)
        return None

    def forward(self, port: int) -> int:
        netns = self.netns

        def opener(timeout_s: float) -> Stream:
            def connect() -> socket.socket:
                return socket.create_connection((LOOPBACK, port), timeout=timeout_s)

            sock = in_netns(netns, connect) if netns else connect()
            sock.settimeout(None)
            return sock

        forwarder = Forwarder(opener, f"TRex port {port}" + (f" in {netns}" if netns else ""))
        self._forwards.append(forwarder)
        return forwarder.port

    def remove(self, paths: Sequence[str]) -> None:
        for path in paths:
            target = Path(path)
            if target.is_dir():
                shutil.rmtree(target, ignore_errors=True)
            else:
                target.unlink(missing_ok=True)

    def close(self) -> None:
        for forwarder in self._forwards:
            forwarder.close()
        self._forwards = []


def ssh_forward(executor: SshExecutor, port: int) -> Forwarder:
    """A forward of 127.0.0.1:`port` of the executor's host through its SSH connection (the
    command log gets the OpenSSH command doing the same, `ssh -N -L LOCAL:127.0.0.1:PORT`)."""

    def opener(timeout_s: float) -> Stream:
        transport = executor.connection.client().get_transport()
        if transport is None:
            raise ConnectionError(f"no SSH connection to host {executor.host}")
        try:
            chan: Stream = transport.open_channel("direct-tcpip", (LOOPBACK, port), (LOOPBACK, 0), timeout=timeout_s)
            return chan
        except paramiko.ChannelException as exc:  # refused there, or forwarding forbidden by its sshd
            raise ConnectionRefusedError(f"host {executor.host}: SSH forward to {LOOPBACK}:{port} refused "
                                         f"({exc.text or exc.code}; sshd needs AllowTcpForwarding)") from exc
        except (paramiko.SSHException, EOFError) as exc:
            raise ConnectionError(f"host {executor.host}: {exc}") from exc

    forwarder = Forwarder(opener, f"TRex port {port} on {executor.host}")
    argv = executor.replay.argv("")[:-2]  # without "-- COMMAND"
    executor.command_log.record([*argv[:-1], "-N", "-L", f"{forwarder.port}:{LOOPBACK}:{port}", argv[-1]], None,
                                note=f"[{executor.host}] [TRex port] ")
    return forwarder


class TestbedHost:
    """A testbed's generator host `host`, its commands through `executor` (SSH, or this machine
    for `local`), its background processes through the run's session `processes`."""

    __test__ = False

    def __init__(self, executor: Executor, processes: HostProcesses, host: str, run_id: str, log_path: Path) -> None:
        self.executor = executor
        self.processes = processes
        self.host = host
        self.run_id = run_id
        self.log_path = log_path  # on this machine: the server's output comes back over SSH
        self._forwards: list[Forwarder] = []

    @property
    def name(self) -> str:
        return self.host

    @property
    def run_dir(self) -> str:
        return f"/tmp/{self.file_prefix}"

    @property
    def file_prefix(self) -> str:
        """vsperf-RUNID-trex: swept by the next run after a kill (/tmp/vsperf-RUNID-* and
        /var/run/dpdk/vsperf-RUNID-*, `vsperf.testbed.session.host_run_dirs_removal`)."""
        return f"vsperf-{self.run_id}-trex"

    def run(self, argv: Sequence[str], *, timeout_s: float = 30.0) -> subprocess.CompletedProcess[str]:
        return _completed(self.executor, argv, None, timeout_s)

    def put(self, text: str, path: str) -> None:
        directory = str(Path(path).parent)
        self.executor.run(["mkdir", "-p", "-m", "700", directory], timeout_s=30)
        with tempfile.TemporaryDirectory() as tmp:
            local = Path(tmp) / Path(path).name
            local.write_text(text, encoding="utf-8")
            self.executor.put(local, path, mode=0o600)

    def spawn(self, label: str, argv: Sequence[str]) -> Process:
        with self.log_path.open("ab") as out:
            return self.processes.spawn(self.host, label, argv, stdout=out, stderr=subprocess.STDOUT)

    def log_tail(self, lines: int) -> str:
        return _tail(self.log_path, lines)

    def stop(self, proc: Process, *, timeout_s: float) -> int | None:
        return self.processes.stop_process(self.host, proc, timeout_s=timeout_s)

    def forward(self, port: int) -> int:
        if not isinstance(self.executor, SshExecutor):
            return port  # `local`: this machine's loopback already
        forwarder = ssh_forward(self.executor, port)
        self._forwards.append(forwarder)
        return forwarder.port

    def remove(self, paths: Sequence[str]) -> None:
        try:
            self.executor.run(["rm", "-rf", "--", *paths], check=False, timeout_s=30)
        except CommandError as exc:
            log.warning("host %s: could not remove %s: %s", self.host, " ".join(paths), exc)

    def close(self) -> None:
        for forwarder in self._forwards:
            forwarder.close()
        self._forwards = []


def is_loopback(address: str) -> bool:
    """Whether `address` names this machine's loopback (a server reached without SSH)."""
    return address in ("localhost", "::1") or address.startswith("127.")


def running_server_forwards(executor: Executor | None, sync_port: int,
                            async_port: int) -> tuple[int, int, list[Forwarder]]:
    """Local ports reaching a running server's RPC and event ports on the executor's host
    (None or a local executor: this machine's own ports)."""
    if executor is None or isinstance(executor, LocalExecutor) or not isinstance(executor, SshExecutor):
        return sync_port, async_port, []
    forwards = [ssh_forward(executor, sync_port), ssh_forward(executor, async_port)]
    return forwards[0].port, forwards[1].port, forwards
