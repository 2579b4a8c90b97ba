"""TRex (Cisco's DPDK traffic generator, stateless mode) as a traffic generator.

vsperf drives a TRex server through TRex's own Python client, which runs in a worker process of
its own (vsperf.trafficgen.trex.protocol says why; vsperf.trafficgen.trex.client is vsperf's end
of it). The server is one of:

- started by vsperf (vsperf.trafficgen.trex.server) from TRAFFICGEN_TREX_BASE_DIR: on the local
  lab in the generator ports' namespace, on vdevs attached to the lab's veths; on a testbed's
  generator host on the cable ends (kernel interfaces as vdevs, PCI port locations as they are);
  stopped at the end, on errors and on Ctrl-C, and after a SIGKILL by the next run;
- already running (TRAFFICGEN_TREX_HOST_IP_ADDR, or a testbed's generator host with
  TRAFFICGEN_TREX_START_SERVER false): vsperf reaches its RPC ports through an SSH connection.

A trial is a set of streams (vsperf.trafficgen.trex.streams: the test's headers, VLAN,
multistream, both directions, latency streams), each an exact number of frames; its result
(vsperf.trafficgen.trex.results) counts TRex's per-stream counters read after the residual
wait, and flags a trial whose ports did not reach their rate.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import shutil
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from vsperf.context import RunContext
from vsperf.deployment import GenPort
from vsperf.errors import ConfigError, PrerequisiteError, TrafficGenError
from vsperf.executor import LocalExecutor
from vsperf.lab.streams import Direction, directions
from vsperf.remote.connection import SshHost
from vsperf.remote.ssh import SshExecutor
from vsperf.search.measurer import (
    AddressTrialResult,
    DutAction,
    RecoveryTrialResult,
    ResetTrialResult,
    TrialResult,
)
from vsperf.search.throughput import LEARNING_RATE_PERCENT
from vsperf.traffic import Traffic
from vsperf.trafficgen.base import HostProcesses, TrafficGenerator, burst_shares, check_burst, check_rate_trial
from vsperf.trafficgen.trex.client import TrexWorker, WorkerFailure
from vsperf.trafficgen.trex.forward import Forwarder
from vsperf.trafficgen.trex.hosts import LabHost, TestbedHost, is_loopback, running_server_forwards, ssh_forward
from vsperf.trafficgen.trex.protocol import Connect, Connected, RunTrial, Started, TrialCounts
from vsperf.trafficgen.trex.results import trial_result
from vsperf.trafficgen.trex.rfc import address_plans, address_result, recovery_plan, recovery_result, reset_result
from vsperf.trafficgen.trex.server import BINARY, LAUNCHER, ServerConfig, TrexServer, vdev
from vsperf.trafficgen.trex.streams import TrialPlan, burst_plan, rate_plan

log = logging.getLogger(__name__)

TREX_PORTS = (0, 1)  # the TRex ports of generator ports 0 and 1
_CONNECT_RETRY_S = 0.5
MAX_LOGGED_STREAMS = 8  # a trial's log line names each stream's counts up to this many
STOP_SLACK = 0.2  # a rate trial is stopped this fraction after its planned time (+1 s)
BURST_FLOOR_FPS = 10_000.0  # a burst may take as long as sending its frames at this rate (+10 s)
INSTALL_HINT = ("build TRex v3.0.7 from its source (docs/trafficgens.rst) and set TRAFFICGEN_TREX_BASE_DIR to its "
                "scripts directory, or put its t-rex-64 on PATH")


def base_dir(settings: Mapping[str, Any]) -> str:
    """TRAFFICGEN_TREX_BASE_DIR, or the directory of `t-rex-64` on this machine's PATH ("" when
    neither names one)."""
    configured = str(settings["TRAFFICGEN_TREX_BASE_DIR"]).strip()
    if configured:
        return configured
    found = shutil.which(LAUNCHER)
    return str(Path(found).resolve().parent) if found else ""


class TrexTrafficGenerator(TrafficGenerator):
    """Cisco TRex (stateless) via its Python client (needs TRex built from source, vsperf[trex]; root)."""

    NAME: ClassVar[str] = "trex"
    ALIASES: ClassVar[tuple[str, ...]] = ("Trex",)
    PORTS_IN_ONE_NAMESPACE: ClassVar[bool] = True  # one server owns both ports

    def __init__(self, settings: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(settings, ctx)
        self._host_processes: tuple[HostProcesses, str] | None = None
        self._server: TrexServer | None = None
        self._worker: TrexWorker | None = None
        self._forwards: list[Forwarder] = []
        self._ssh: SshExecutor | None = None
        self._ports: tuple[GenPort, ...] = ()
        self._connected: Connected | None = None
        self._learned: set[int] = set()  # frame sizes TRex's learning traffic was sent at
        self._address_trials = 0  # RFC 2889 trials so far: each takes fresh addresses

    # --- prerequisites and life cycle ----------------------------------------------------------

    @property
    def _running_host(self) -> str:
        return str(self.settings["TRAFFICGEN_TREX_HOST_IP_ADDR"]).strip()

    def use_host_processes(self, processes: HostProcesses, host: str) -> None:
        self._host_processes = (processes, host)

    def check_prerequisites(self) -> None:
        if self._running_host:
            self._check_running_server()
        elif not self.settings["TESTBED"]:
            # vsperf starts the server on the local lab (a testbed's preflight checks its generator host)
            directory = base_dir(self.settings)
            if not directory or not os.access(os.path.join(directory, BINARY), os.X_OK):
                where = f" ({os.path.join(directory, BINARY)} missing)" if directory else ""
                raise PrerequisiteError(f"TRex is not installed{where}: {INSTALL_HINT}")
            if os.geteuid() != 0:
                raise PrerequisiteError("the trex generator needs root to start TRex's server: run as root, "
                                        "or set TRAFFICGEN_TREX_HOST_IP_ADDR to a server you started")
        client_path = str(self.settings["TRAFFICGEN_TREX_CLIENT_PATH"]).strip()
        if client_path:
            if not os.path.isdir(os.path.join(client_path, "trex")):
                raise PrerequisiteError(f"TRAFFICGEN_TREX_CLIENT_PATH {client_path} holds no TRex client (no trex/): "
                                        f"give a TRex tree's automation/trex_control_plane/interactive")
        elif not str(self.settings["TRAFFICGEN_TREX_PYTHON"]).strip() and importlib.util.find_spec(
                "lbr_trex_client") is None:
            raise PrerequisiteError("TRex's Python client is not installed: pip install 'vsperf[trex]' "
                                    "(lbr-trex-client), or set TRAFFICGEN_TREX_CLIENT_PATH to a TRex tree's client")

    def _check_running_server(self) -> None:
        """PrerequisiteError unless TRAFFICGEN_TREX_HOST_IP_ADDR's RPC port answers (through SSH for
        another host: the connection's own errors name the host and the fix)."""
        host, port = self._running_host, int(self.settings["TRAFFICGEN_TREX_SYNC_PORT"])
        ssh: SshExecutor | None = None
        try:
            if is_loopback(host):
                socket.create_connection((host, port), timeout=5.0).close()
            else:
                user = str(self.settings["TRAFFICGEN_TREX_USER"]).strip() or "root"
                ssh = SshExecutor(SshHost(host, host, user=user))
                ssh.connect()
                forward = ssh_forward(ssh, port)
                try:
                    forward.probe(5.0)
                finally:
                    forward.close()
        except OSError as exc:
            raise PrerequisiteError(f"no TRex server answers on port {port} of {host} ({exc}): start it there "
                                    f"(./t-rex-64 -i), or leave TRAFFICGEN_TREX_HOST_IP_ADDR empty to let vsperf "
                                    f"start one") from exc
        finally:
            if ssh is not None:
                ssh.close()

    def version(self) -> str:
        if self._connected is None:
            return "unknown (not started)"
        return self._connected.server_version

    def start(self, ports: Sequence[GenPort]) -> None:
        self._ports = tuple(ports)
        timeout_s = float(self.settings["TRAFFICGEN_TREX_TIMEOUT_S"])
        try:
            work = self.ctx.work_dir / "trex"
            work.mkdir(parents=True, exist_ok=True)
            # The worker always runs here, whichever host the server runs on.
            self._worker = TrexWorker(LocalExecutor(self.ctx.executor.command_log), work / "worker.log",
                                      python=str(self.settings["TRAFFICGEN_TREX_PYTHON"]).strip(),
                                      client_path=str(self.settings["TRAFFICGEN_TREX_CLIENT_PATH"]).strip())
            self._worker.spawn()  # it imports the client (~1-2 s) while the server starts
            sync_port, async_port = self._server_ports(work, timeout_s)
            self._worker.ready(timeout_s)
            self._connected = self._connect(sync_port, async_port, timeout_s)
            self._check_ports(self._connected)
            log.info("TRex %s (client %s), ports %s", self._connected.server_version, self._connected.client_version,
                     ", ".join(f"{p.index}: {p.driver} {p.hw_mac}" for p in self._connected.ports))
        except BaseException:
            self.stop()
            raise

    def _server_ports(self, work: Path, timeout_s: float) -> tuple[int, int]:
        """Start the server (or reach a running one); the local ports reaching its RPC and events."""
        sync_port, async_port = int(self.settings["TRAFFICGEN_TREX_SYNC_PORT"]), int(
            self.settings["TRAFFICGEN_TREX_ASYNC_PORT"])
        if self._running_host:
            if not is_loopback(self._running_host):
                user = str(self.settings["TRAFFICGEN_TREX_USER"]).strip() or "root"
                self._ssh = SshExecutor(SshHost(self._running_host, self._running_host, user=user),
                                        self.ctx.executor.command_log)
                self._ssh.connect()
            local_sync, local_async, self._forwards = running_server_forwards(self._ssh, sync_port, async_port)
            return local_sync, local_async
        if self._host_processes is not None and not self.settings["TRAFFICGEN_TREX_START_SERVER"]:
            local_sync, local_async, self._forwards = running_server_forwards(self.ctx.executor, sync_port, async_port)
            return local_sync, local_async
        if len(self._ports) < 2:
            raise TrafficGenError(f"TRex needs two generator ports to start its server on, the deployment gave "
                                  f"{len(self._ports)} (for --mode trafficgen set TRAFFICGEN_TREX_HOST_IP_ADDR to a "
                                  f"running server)")
        if self._host_processes is not None:
            processes, host_name = self._host_processes
            bed_host = TestbedHost(self.ctx.executor, processes, host_name, self.ctx.run_id, work / "server.log")
            host: LabHost | TestbedHost = bed_host
            directory = str(self.settings["TRAFFICGEN_TREX_BASE_DIR"]).strip() or self._remote_base_dir(bed_host)
        else:
            netns = {p.netns for p in self._ports[:2]}
            if len(netns) != 1:
                raise TrafficGenError(f"TRex owns both generator ports in one process: they must share a network "
                                      f"namespace, they are in {sorted(str(n) for n in netns)}")
            host = LabHost(self.ctx.executor, next(iter(netns)), work, self.ctx.run_id)
            directory = base_dir(self.settings)
        self._server = TrexServer(host, directory, self._server_config(host.file_prefix),
                                  config_file=str(self.settings["TRAFFICGEN_TREX_CONFIG_FILE"]).strip())
        return self._server.start(timeout_s)

    def _remote_base_dir(self, host: TestbedHost) -> str:
        """The directory of `t-rex-64` on the host's PATH (its link resolved, as TRex's script runs from there)."""
        # A fixed script: the program's name is its argument.
        found = host.run(["sh", "-c", 'p=$(command -v "$1") && readlink -f "$p"', "sh", LAUNCHER])
        if found.returncode != 0 or not found.stdout.strip():
            raise PrerequisiteError(f"host {host.name}: TRex is not installed there: {INSTALL_HINT}")
        return os.path.dirname(found.stdout.strip())

    def _server_config(self, prefix: str) -> ServerConfig:
        options = str(self.settings["TRAFFICGEN_TREX_VDEV_ARGS"]).strip()
        ports = self._ports[:2]
        cores = tuple(int(c) for c in str(self.settings["TRAFFICGEN_TREX_CORES"]).replace(" ", "").split(",") if c)
        return ServerConfig(
            interfaces=tuple(p.location or vdev(i, p.ifname, options) for i, p in enumerate(ports)),
            src_macs=tuple(p.mac for p in ports), dest_macs=tuple(p.peer_mac for p in ports), prefix=prefix,
            sync_port=int(self.settings["TRAFFICGEN_TREX_SYNC_PORT"]),
            async_port=int(self.settings["TRAFFICGEN_TREX_ASYNC_PORT"]),
            low_end=bool(self.settings["TRAFFICGEN_TREX_LOW_END"]), cores=cores,
        )

    def _connect(self, sync_port: int, async_port: int, timeout_s: float) -> Connected:
        """Connect the worker's client; a server that is still initialising gets until `timeout_s`."""
        assert self._worker is not None
        request = Connect(server="127.0.0.1", sync_port=sync_port, async_port=async_port, ports=TREX_PORTS,
                          promiscuous=bool(self.settings["TRAFFICGEN_TREX_PROMISCUOUS"]), timeout_s=min(timeout_s, 5.0))
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return self._worker.call(request, Connected, timeout_s + 10, alive=self._alive)
            except WorkerFailure as exc:
                where = self._running_host or (self._host_processes[1] if self._host_processes else "local")
                if exc.kind == "version":
                    raise TrafficGenError(f"TRex on host {where} refused vsperf's TRex client: {exc}; install the "
                                          f"client of that TRex version (TRAFFICGEN_TREX_CLIENT_PATH)") from exc
                if exc.kind != "connect" or time.monotonic() > deadline:
                    raise TrafficGenError(f"cannot connect to TRex on host {where}: {exc}") from exc
                time.sleep(_CONNECT_RETRY_S)

    def _check_ports(self, connected: Connected) -> None:
        """The server's ports: up, and (a running server) the MACs VSPERF's settings name."""
        for setting, info in zip(("TRAFFICGEN_TREX_PORT1", "TRAFFICGEN_TREX_PORT2"), connected.ports, strict=False):
            expected = str(self.settings[setting]).strip().lower()
            if expected and info.hw_mac.lower() != expected:
                raise ConfigError(f"{setting} is {expected}, TRex's port {info.index} is {info.hw_mac}: fix {setting} "
                                  f"or the server's port order")
            if not info.link_up:
                raise TrafficGenError(f"TRex's port {info.index} ({info.driver} {info.hw_mac}) has no link")

    def _alive(self) -> None:
        if self._server is not None:
            self._server.check_alive()

    def stop(self) -> None:
        worker, self._worker = self._worker, None
        server, self._server = self._server, None
        try:
            if worker is not None:
                worker.stop()
        finally:
            try:
                if server is not None:
                    server.stop()
            finally:
                for forwarder in self._forwards:
                    forwarder.close()
                self._forwards = []
                if self._ssh is not None:
                    self._ssh.close()
                    self._ssh = None

    # --- trials --------------------------------------------------------------------------------

    def trial(self, traffic: Traffic, rate_fps: float, duration_s: float) -> TrialResult:
        check_rate_trial(rate_fps, duration_s)
        self._learn(traffic)
        plan = rate_plan(traffic, self._directions(traffic), TREX_PORTS, rate_fps, duration_s,
                         int(self.settings["TRAFFICGEN_TREX_LATENCY_PPS"]))
        return trial_result("rate", traffic, plan, self._run(plan), rate_fps, duration_s)

    def burst(self, traffic: Traffic, frames: int) -> TrialResult:
        check_burst(frames)
        self._learn(traffic)
        dirs = self._directions(traffic)
        plan = burst_plan(traffic, dirs, TREX_PORTS, burst_shares(frames, len(dirs)))
        return trial_result("burst", traffic, plan, self._run(plan), traffic.line_rate_fps, 0.0)

    # --- RFC 2544 recovery and reset, RFC 2889 addresses (see vsperf.trafficgen.trex.rfc) ---------

    def recovery_trial(self, traffic: Traffic, overload_fps: float, overload_s: float, recovery_fps: float,
                       recovery_s: float) -> RecoveryTrialResult:
        """Overload, then the lower rate cut into counted slices; see `RecoveryMeasurer`."""
        if min(overload_fps, overload_s, recovery_fps, recovery_s) <= 0:
            raise TrafficGenError(f"trex: a recovery trial needs positive rates and durations, got {overload_fps} fps "
                                  f"for {overload_s} s, then {recovery_fps} fps for {recovery_s} s")
        self._learn(traffic)
        rp = recovery_plan(traffic, self._directions(traffic), TREX_PORTS, overload_fps, overload_s, recovery_fps,
                           recovery_s)
        return recovery_result(traffic, rp, self._run(rp.plan), overload_fps, overload_s, recovery_fps, recovery_s)

    def reset_trial(self, traffic: Traffic, rate_fps: float, duration_s: float, reset_at_s: float,
                    reset: DutAction | None) -> ResetTrialResult:
        """Stream, restart the DUT `reset_at_s` in, date the silence at the receivers; see `ResetMeasurer`."""
        if reset is None:
            raise TrafficGenError("trex: a reset trial needs the DUT's restart; this deployment gives none")
        if rate_fps <= 0 or not 0 <= reset_at_s < duration_s:
            raise TrafficGenError(f"trex: a reset trial needs a positive rate and a reset inside the stream, got "
                                  f"{rate_fps} fps, reset at {reset_at_s} s of {duration_s} s")
        self._learn(traffic)
        plan = rate_plan(traffic, self._directions(traffic), TREX_PORTS, rate_fps, duration_s, latency_pps=0)
        reset_at: list[float] = []

        def restart(started: float) -> None:
            time.sleep(max(0.0, reset_at_s - (time.monotonic() - started)))
            reset_at.append(time.monotonic() - started)
            reset()
            log.info("trex: DUT reset took %.3f s", time.monotonic() - started - reset_at[0])

        counts = self._run(plan, restart)
        return reset_result(trial_result("rate", traffic, plan, counts, rate_fps, duration_s), counts, reset_at[0])

    def address_trial(self, traffic: Traffic, addresses: int, learning_rate_fps: float, test_rate_fps: float,
                      forget: DutAction | None) -> AddressTrialResult:
        """RFC 2889 learning, flood-check and test phases on two ports; see `AddressMeasurer`."""
        if addresses < 1 or learning_rate_fps <= 0 or test_rate_fps <= 0:
            raise TrafficGenError(f"trex: an address trial needs >= 1 address and positive rates, got {addresses}, "
                                  f"{learning_rate_fps} fps, {test_rate_fps} fps")
        if len(self._ports) < 2:
            raise TrafficGenError("trex: an address trial needs the deployment's two generator ports")
        self._address_trials += 1
        try:
            plans = address_plans(traffic, (self._ports[0], self._ports[1]), TREX_PORTS, addresses,
                                  self._address_trials, learning_rate_fps, test_rate_fps)
        except ValueError as exc:
            raise TrafficGenError(f"trex: {exc}") from exc
        if forget is not None:
            forget()
        learning, flood, test = (self._run(plan) for plan in plans)
        return address_result(traffic, addresses, plans, (learning, flood, test), learning_rate_fps, test_rate_fps)

    def _learn(self, traffic: Traffic) -> None:
        """VSPERF's TRex learning traffic before the first trial of a frame size (see
        TRAFFICGEN_TREX_LEARNING_MODE); its counters are not part of any result."""
        if not self.settings["TRAFFICGEN_TREX_LEARNING_MODE"] or traffic.frame_size_bytes in self._learned:
            return
        self._learned.add(traffic.frame_size_bytes)
        duration_s = float(self.settings["TRAFFICGEN_TREX_LEARNING_DURATION"])
        rate_fps = traffic.line_rate_fps * LEARNING_RATE_PERCENT / 100.0
        log.info("TRex learning traffic: %g s at %g %% of line rate (%.0f frames/s)", duration_s, LEARNING_RATE_PERCENT,
                 rate_fps)
        self._run(rate_plan(traffic, self._directions(traffic), TREX_PORTS, rate_fps, duration_s, 0))

    def _directions(self, traffic: Traffic) -> list[Direction]:
        if self._worker is None or self._connected is None:
            raise TrafficGenError("trex: trial before start(ports)")
        if not (traffic.l3.enabled and traffic.l4.enabled and traffic.l3.proto.lower() == "udp"):
            raise ConfigError("the trex generator sends IPv4/UDP frames only (TRAFFIC l3 and l4 enabled, proto udp)")
        ports = self._ports or tuple(
            GenPort(None, f"trex{p.index}", p.hw_mac, "") for p in self._connected.ports)
        return directions(traffic, ports)

    def _run(self, plan: TrialPlan, during: Callable[[float], None] | None = None) -> TrialCounts:
        """Run `plan`'s streams; `during(started)` (the monotonic time the ports started) runs
        while they send, with the receive counters sampled (a reset trial's restart)."""
        worker = self._worker
        assert worker is not None
        self._alive()
        residual_s = float(self.settings["TRAFFICGEN_RESIDUAL_WAIT_S"])
        # TRex stretches what it cannot send in time: a rate trial may overrun its plan a little (it is
        # flagged from the rate it reached), then it is stopped and its counts taken as they are (as
        # pktgen's trials are); a burst must send all its frames (at TRex's own pace) or fail.
        stop_after_s = plan.planned_s * (1 + STOP_SLACK) + 1.0 if plan.timed else 0.0
        send_limit_s = max(stop_after_s, plan.planned_s * 2 + 10.0, plan.frames / BURST_FLOOR_FPS + 10.0)
        request = RunTrial(streams=plan.streams, residual_s=residual_s, timeout_s=send_limit_s,
                           stop_after_s=stop_after_s, announce_start=during is not None, sample_rx=during is not None)
        wait_s = send_limit_s + residual_s + float(self.settings["TRAFFICGEN_TREX_TIMEOUT_S"])
        try:
            worker.send(request)
            if during is not None:
                worker.answer(request.op, Started, wait_s, alive=self._alive)
                started = time.monotonic()
                try:
                    during(started)
                except BaseException:
                    with contextlib.suppress(TrafficGenError):  # the trial's counts: not the next request's answer
                        worker.answer(request.op, TrialCounts, wait_s, alive=self._alive)
                    raise
            counts = worker.answer(request.op, TrialCounts, wait_s, alive=self._alive)
        except WorkerFailure as exc:
            raise TrafficGenError(f"TRex: {exc}") from exc
        streams = ", ".join(f"stream {s.pg_id} sent {s.tx_frames} received {s.rx_frames}" for s in counts.streams)
        if len(counts.streams) > MAX_LOGGED_STREAMS:  # a recovery trial's slices: their sum
            streams = (f"{len(counts.streams)} streams sent {sum(s.tx_frames for s in counts.streams)} received "
                       f"{sum(s.rx_frames for s in counts.streams)}")
        log.info("TRex trial: %s; ports %s; %.3f s", streams, ", ".join(
            f"{p.port} sent {p.tx_frames} received {p.rx_frames}" for p in counts.ports), counts.wall_s)
        return counts
