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
import logging
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from vsperf.errors import ConfigError, TrafficGenError
from vsperf.executor import LocalExecutor
from vsperf.host.host import Host
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
from vsperf.traffic.ports import GenPort
from vsperf.traffic.streams import Direction, directions
from vsperf.trafficgen.base import TrafficGenerator, burst_shares, check_burst, check_rate_trial
from vsperf.trafficgen.trex import launch
from vsperf.trafficgen.trex.client import TrexWorker, WorkerFailure
from vsperf.trafficgen.trex.forward import Forwarder
from vsperf.trafficgen.trex.protocol import Connect, Connected, RunTrial, Started, TrialCounts
from vsperf.trafficgen.trex.results import trial_result
from vsperf.trafficgen.trex.rfc import address_plans, address_result, recovery_plan, recovery_result, reset_result
from vsperf.trafficgen.trex.server import TrexServer
from vsperf.trafficgen.trex.streams import TrialPlan, burst_plan, rate_plan

log = logging.getLogger(__name__)

TREX_PORTS = (0, 1)  # the TRex ports of generator ports 0 and 1
_CONNECT_RETRY_S = 0.5
MAX_LOGGED_STREAMS = 16  # a trial's log line names each stream's counts up to this many (a mix: 2 per size, direction)
STOP_SLACK = 0.2  # a rate trial is stopped this fraction after its planned time (+1 s)
BURST_FLOOR_FPS = 10_000.0  # a burst may take as long as sending its frames at this rate (+10 s)
DPDK_ROLE = "t"  # the server's DPDK file prefix: vsp<run id>t (Host.dpdk_file_prefix)


class TrexTrafficGenerator(TrafficGenerator):
    """Cisco TRex (stateless) via its Python client (needs TRex built from source, vsperf[trex]; root)."""

    NAME: ClassVar[str] = "trex"
    ALIASES: ClassVar[tuple[str, ...]] = ("Trex",)
    PORTS_IN_ONE_NAMESPACE: ClassVar[bool] = True  # one server owns both ports
    FRAME_MIX: ClassVar[bool] = True  # one stream per size of the mix (vsperf.trafficgen.trex.streams)
    PORT_LOCATIONS: ClassVar[bool] = True  # a testbed cable's location: a PCI address of the generator host

    def __init__(self, settings: Mapping[str, Any], host: Host) -> None:
        super().__init__(settings, host)
        self._server: TrexServer | None = None
        self._worker: TrexWorker | None = None
        self._forwards: list[Forwarder] = []
        self._ssh: SshExecutor | None = None
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        self._ports: tuple[GenPort, ...] = ()
        self._connected: Connected | None = None
        self._learned: set[int] = set()  # frame sizes TRex's learning traffic was sent at
        self._address_trials = 0  # RFC 2889 trials so far: each takes fresh addresses

    # --- prerequisites and life cycle ----------------------------------------------------------

    def check_prerequisites(self) -> None:
        launch.check_prerequisites(self.settings, self.host)

    def version(self) -> str:
        if self._connected is None:
            return "unknown (not started)"
        return self._connected.server_version

    def start(self, ports: Sequence[GenPort]) -> None:
        self._ports = tuple(ports)
        timeout_s = float(self.settings["TRAFFICGEN_TREX_TIMEOUT_S"])
        try:
            # The worker always runs on this machine, whichever host the server runs on.
            self._worker = TrexWorker(LocalExecutor(self.host.executor.command_log), self._worker_log(),
                                      python=str(self.settings["TRAFFICGEN_TREX_PYTHON"]).strip(),
                                      client_path=str(self.settings["TRAFFICGEN_TREX_CLIENT_PATH"]).strip())
            self._worker.spawn()  # it imports the client (~1-2 s) while the server starts
            sync_port, async_port = self._server_ports(timeout_s)
            self._worker.ready(timeout_s)
            self._connected = self._connect(sync_port, async_port, timeout_s)
            self._check_ports(self._connected)
            log.info("TRex %s (client %s), ports %s", self._connected.server_version, self._connected.client_version,
                     ", ".join(f"{p.index}: {p.driver} {p.hw_mac}" for p in self._connected.ports))
        except BaseException:
            self.stop()
            raise

    def _worker_log(self) -> Path:
        """The worker's log on this machine: in the run's results (a scratch directory without one)."""
        if self.host.results_dir is not None:
            return self.host.results_dir / "trex-worker.log"
        self._scratch = tempfile.TemporaryDirectory(prefix="vsperf-trex-")
        return Path(self._scratch.name) / "worker.log"

    def _server_ports(self, timeout_s: float) -> tuple[int, int]:
        """Start the server (or reach a running one); the local ports reaching its RPC and events."""
        address = launch.running_host(self.settings)
        if launch.is_loopback(address):  # a server on this machine's own loopback: its ports as they are
            return int(self.settings["TRAFFICGEN_TREX_SYNC_PORT"]), int(self.settings["TRAFFICGEN_TREX_ASYNC_PORT"])
        if address or not self.settings["TRAFFICGEN_TREX_START_SERVER"]:
            executor = launch.running_executor(self.settings, self.host, self.host.executor.command_log)
            if isinstance(executor, SshExecutor) and executor is not self.host.executor:
                self._ssh = executor
            self._forwards = launch.running_forwards(executor, self.settings)
            return self._forwards[0].port, self._forwards[1].port
        if len(self._ports) < 2:
            raise TrafficGenError(f"TRex needs two generator ports to start its server on, the deployment gave "
                                  f"{len(self._ports)} (for --mode trafficgen set TRAFFICGEN_TREX_HOST_IP_ADDR to a "
                                  f"running server)")
        netns = {p.netns for p in self._ports[:2]}
        if len(netns) != 1:
            raise TrafficGenError(f"TRex owns both generator ports in one process: they must share a network "
                                  f"namespace, they are in {sorted(str(n) for n in netns)}")
        directory = launch.base_dir(self.settings, self.host)
        if not directory:
            raise TrafficGenError(f"host {self.host.name}: TRex is not installed there: {launch.INSTALL_HINT}")
        cfg = launch.server_config(self.settings, self._ports[:2], self.host.dpdk_file_prefix(DPDK_ROLE))
        self._server = TrexServer(self.host, next(iter(netns)), directory, cfg,
                                  config_file=str(self.settings["TRAFFICGEN_TREX_CONFIG_FILE"]).strip())
        return self._server.start(timeout_s)

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
                where = launch.running_host(self.settings) or self.host.name
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
                if self._scratch is not None:
                    self._scratch.cleanup()
                    self._scratch = None

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
