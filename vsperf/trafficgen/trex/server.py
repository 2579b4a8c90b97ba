"""TRex's server when vsperf starts it: its config, its command line, its start, its stop.

Everything that starts, stops or stages the server is here, through the `Host` it runs on (the
local lab, in the namespace of the generator ports, or a testbed's generator host): its config in
the run's work directory there (`Host.work_dir`), its DPDK file prefix from the run's names
(`Host.dpdk_file_prefix`, its runtime directory journaled), the server itself started with
`Host.spawn` (journaled by PID: teardown, and the next run after a SIGKILL, stop it) and its RPC
ports reached with the host executor's `open_tcp` (a socket in the namespace, or a direct-tcpip
channel of the SSH connection vsperf already has), behind a port of this machine's loopback.

The server is TRex's binary itself (`_t-rex-64` in TRAFFICGEN_TREX_BASE_DIR, run from that
directory as TRex's `t-rex-64` script runs it, without the script's NIC binding and process
clean-up), interactive (`-i`), no scapy server, with a config vsperf writes for the generator
ports (`config_text`): DPDK vdevs (net_af_packet) on kernel interfaces (TRex then adds --no-pci
--no-huge itself), PCI addresses as they are, a DPDK file prefix carrying the run id (parallel
servers stay apart in /var/run/dpdk), the RPC and event ports, `low_end` on a small machine.
It is ready when its RPC port answers (about 1.3 s here), and stopped with SIGINT (TRex's own
shutdown, ~1.4 s), then by PID if it did not exit.

TRex listens on every address of its host (it has no option for one): vsperf reaches it through
its host's loopback (SSH forward) and never over the network.
"""

from __future__ import annotations

import contextlib
import logging
import re
import socket
import time
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import yaml

from vsperf.errors import CommandError, PrerequisiteError, TrafficGenError, VsperfError
from vsperf.executor import Executor
from vsperf.host.host import Host
from vsperf.host.names import DPDK_RUNTIME_ROOT
from vsperf.host.process import HostProcess
from vsperf.trafficgen.trex.forward import Forwarder, Stream

log = logging.getLogger(__name__)

BINARY = "_t-rex-64"  # TRex's server; `t-rex-64` is its launcher script
LAUNCHER = "t-rex-64"
# A fixed script: cd to TRex's directory (its libraries are found relative to it, as its
# launcher does), then exec the server with its arguments: the PID is the server's.
LAUNCH_SCRIPT = 'cd "$1" && shift && LD_LIBRARY_PATH="$PWD" && export LD_LIBRARY_PATH && exec "$@"'
_STOP_TIMEOUT_S = 5.0
_BIND_ERROR = re.compile(r"can't bind to ZMQ socket at tcp://\*:(\d+)")


@dataclass(frozen=True)
class ServerConfig:
    """The trex_cfg.yaml vsperf writes for the server it starts."""

    interfaces: tuple[str, ...]  # one per TRex port: a DPDK vdev argument or a PCI address
    src_macs: tuple[str, ...]  # each port's source MAC
    dest_macs: tuple[str, ...]  # each port's default destination MAC
    prefix: str  # DPDK file prefix: /var/run/dpdk/<prefix>
    sync_port: int = 4501
    async_port: int = 4500
    low_end: bool = True
    cores: tuple[int, ...] = field(default=())  # master, latency, workers... (not low end)

    def __post_init__(self) -> None:
        if len(self.interfaces) % 2 or not self.interfaces:
            raise ValueError(f"TRex takes its ports in pairs, got {len(self.interfaces)}")
        if not len(self.src_macs) == len(self.dest_macs) == len(self.interfaces):
            raise ValueError("one source and one destination MAC per port")
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", self.prefix):
            raise ValueError(f"bad DPDK file prefix {self.prefix!r}")
        if not self.low_end and 0 < len(self.cores) < 3:
            raise ValueError("TRex's cores: a master, a latency and at least one worker core")


def vdev(index: int, interface: str, options: str) -> str:
    """TRex's interface entry attaching kernel interface `interface` through net_af_packet."""
    extra = f",{options}" if options else ""
    return f"--vdev=net_af_packet{index},iface={interface}{extra}"


def config_text(cfg: ServerConfig) -> str:
    """trex_cfg.yaml (TRex's format, version 2) for `cfg`."""
    entry: dict[str, object] = {
        "version": 2,
        "interfaces": list(cfg.interfaces),
        "prefix": cfg.prefix,
        "zmq_rpc_port": cfg.sync_port,
        "zmq_pub_port": cfg.async_port,
        "port_info": [{"src_mac": s, "dest_mac": d} for s, d in zip(cfg.src_macs, cfg.dest_macs, strict=True)],
    }
    if cfg.low_end:
        entry["low_end"] = True
    elif cfg.cores:
        master, latency, *workers = cfg.cores
        entry["platform"] = {"master_thread_id": master, "latency_thread_id": latency,
                             "dual_if": [{"socket": 0, "threads": list(workers)}] * (len(cfg.interfaces) // 2)}
    return "# written by vsperf for the server it starts\n" + yaml.safe_dump([entry], sort_keys=False)


def server_argv(base_dir: str, cfg_path: str) -> list[str]:
    """The server's command line (through LAUNCH_SCRIPT)."""
    return ["sh", "-c", LAUNCH_SCRIPT, "sh", base_dir, f"./{BINARY}", "-i", "--iom", "0", "--no-scapy-server",
            "--cfg", cfg_path]


def _listening(local_port: int) -> bool:
    """Whether the forwarded port reaches a listening server: a refused far end closes the local
    connection at once; TRex's ZeroMQ greets a connection (or stays silent while open)."""
    try:
        with socket.create_connection(("127.0.0.1", local_port), timeout=1.0) as sock:
            sock.settimeout(0.5)
            try:
                return sock.recv(1) != b""
            except TimeoutError:
                return True
    except OSError:
        return False


def forward(executor: Executor, port: int, netns: str | None, label: str) -> Forwarder:
    """A port of this machine's loopback reaching TCP port `port` of `executor`'s host (inside
    `netns`), through `Executor.open_tcp`."""

    def opener(timeout_s: float) -> Stream:
        stream = executor.open_tcp(port, netns=netns, timeout_s=timeout_s)
        stream.settimeout(None)  # the forwarder's selector waits for it
        return stream

    return Forwarder(opener, label)


class TrexServer:
    """One TRex server on `host`, in namespace `netns` of it (the generator ports' one)."""

    def __init__(self, host: Host, netns: str | None, base_dir: str, cfg: ServerConfig, *,
                 config_file: str = "") -> None:
        self.host = host
        self.netns = netns
        self.base_dir = base_dir.rstrip("/") or "/"
        self.cfg = cfg
        self.config_file = config_file  # the user's trex_cfg.yaml on the host ("": vsperf writes one)
        self.proc: HostProcess | None = None
        self.forwards: list[Forwarder] = []
        self.ports: tuple[int, int] = (0, 0)  # local forwards of the RPC and event ports

    @property
    def label(self) -> str:
        return f"TRex server on host {self.host.name}"

    def _check(self, argv: list[str]) -> tuple[int, str]:
        """Run a check on the host in the server's namespace: its exit code and stdout (never raises)."""
        try:
            done = self.host.executor.run(argv, netns=self.netns, check=False, timeout_s=30.0)
        except VsperfError as exc:  # missing program, timeout: a failed check
            return 127, str(exc)
        return done.returncode, done.stdout

    def start(self, timeout_s: float) -> tuple[int, int]:
        """Check, stage and start the server; wait until its RPC port answers. Returns the local
        ports that reach its RPC and event ports."""
        binary = f"{self.base_dir}/{BINARY}"
        if self._check(["test", "-x", binary])[0] != 0:
            raise PrerequisiteError(f"host {self.host.name}: no TRex server {binary}: build TRex "
                                    f"(docs/trafficgens.rst) and set TRAFFICGEN_TREX_BASE_DIR to its scripts directory")
        self._check_ports_free()
        cfg_path = self.config_file
        if not cfg_path:
            path = self.host.work_dir("trex") / "trex_cfg.yaml"
            self.host.write_file(path, config_text(self.cfg))
            cfg_path = str(path)
        self.proc = self.host.spawn("TRex server", server_argv(self.base_dir, cfg_path), netns=self.netns,
                                    log_path=self.host.log_path("trex-server.log"))
        log.info("%s started (pid %d) on %s", self.label, self.proc.pid, ", ".join(self.cfg.interfaces))
        where = f" in {self.netns}" if self.netns else f" on {self.host.name}"
        self.forwards = [forward(self.host.executor, port, self.netns, f"TRex port {port}{where}")
                         for port in (self.cfg.sync_port, self.cfg.async_port)]
        self.ports = (self.forwards[0].port, self.forwards[1].port)
        deadline = time.monotonic() + timeout_s
        while not _listening(self.ports[0]):
            self.check_alive()
            if time.monotonic() > deadline:
                raise TrafficGenError(f"{self.label} did not open its RPC port {self.cfg.sync_port} within "
                                      f"{timeout_s:g} s: {self.log_tail()}")
            time.sleep(0.2)
        return self.ports

    def _check_ports_free(self) -> None:
        """PrerequisiteError when another program listens on the RPC or event port there (TRex
        would fail to start, and vsperf must not talk to the other one)."""
        for port, setting in ((self.cfg.sync_port, "TRAFFICGEN_TREX_SYNC_PORT"),
                              (self.cfg.async_port, "TRAFFICGEN_TREX_ASYNC_PORT")):
            code, out = self._check(["ss", "-H", "-l", "-t", "-n", f"sport = :{port}"])
            if code == 0 and out.strip():
                raise PrerequisiteError(f"host {self.host.name}: TCP port {port} ({setting}) is in use by another "
                                        f"program (another TRex?): stop it, or set {setting} to a free port")

    def check_alive(self) -> None:
        """TrafficGenError naming the end of its log when the server has exited."""
        if self.proc is None or self.proc.alive():
            return
        code = self.proc.returncode()
        tail = self.log_tail()
        bound = _BIND_ERROR.search(tail)
        if bound:
            raise TrafficGenError(f"host {self.host.name}: TRex could not listen on TCP port {bound.group(1)} (in use "
                                  f"there): stop what uses it, or set TRAFFICGEN_TREX_SYNC_PORT/_ASYNC_PORT")
        raise TrafficGenError(f"{self.label} (pid {self.proc.pid}) exited (code {code}): {tail}")

    def stop(self) -> None:
        """SIGINT (TRex shuts down), then stop by PID if it still runs; remove its DPDK runtime
        directory (its config goes with the run's work directory). Safe to call twice and before
        `start`."""
        proc, self.proc = self.proc, None
        try:
            if proc is not None:
                if proc.alive():
                    proc.interrupt()
                    proc.wait(_STOP_TIMEOUT_S)
                self.host.stop_process(proc, timeout_s=_STOP_TIMEOUT_S)
                log.info("%s stopped (pid %d)", self.label, proc.pid)
        finally:
            for forwarder in self.forwards:
                forwarder.close()
            self.forwards = []
            with contextlib.suppress(CommandError, OSError):
                self.host.remove_dir(PurePosixPath(DPDK_RUNTIME_ROOT) / self.cfg.prefix)

    def log_tail(self, lines: int = 3) -> str:
        return self.proc.log_tail(lines) if self.proc is not None else ""
