"""vsgen: vsperf's own software traffic generator, on the namespaced ports of the local lab.

One engine process (csrc/, C + BPF) owns every generator port for the whole test: it
attaches an XDP receive program to each port and transmits from one thread per direction,
inside the port's namespace, with XDP live frames (BPF_PROG_RUN, the fastest path) or
AF_PACKET when the port's peer cannot take XDP frames or the frame is too large for them.
Every frame carries a signature (stream, sequence number, transmit time); receive counts
only this trial's frames, per stream, with loss, duplicates, reordering and a latency
histogram, read after the residual wait. See the modules beside this one.

Rates handed to `trial` are aggregate (split evenly over the transmitting directions); frames
sent are the engine's exact count, the achieved rate its own clock's. Received frames
(`rx_frames`) count each frame once: duplicates are reported apart (a flag, and `last_run`).

A frame mix is sent interleaved in its pattern (the engine cuts its largest frame to each
frame's length) and counted per size at the receivers; with TRAFFIC latency_histogram every
frame's latency is kept (the engine's histogram as an HDR histogram); a warm start is sent by the
engine right before each trial's frames, tagged apart, never counted.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import PurePosixPath
from typing import Any, ClassVar

from vsperf.errors import CommandError, ConfigError, PrerequisiteError, TrafficGenError
from vsperf.executor import LocalExecutor
from vsperf.host.host import Host
from vsperf.search.measurer import (
    AddressTrialResult,
    DutAction,
    RecoveryTrialResult,
    ResetTrialResult,
    TrialResult,
)
from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort
from vsperf.traffic.streams import directions
from vsperf.trafficgen.base import TrafficGenerator
from vsperf.trafficgen.vsgen.addresses import FLOOD_DIR, LEARN_DIR, TEST_DIR, address_phases, range_base
from vsperf.trafficgen.vsgen.build import ENGINE_NAME, EngineBinary, locate_engine
from vsperf.trafficgen.vsgen.encap import into_tunnel
from vsperf.trafficgen.vsgen.engine import Engine
from vsperf.trafficgen.vsgen.events import last_loss_after_drop_s, phase_trial, phases, reset_gap
from vsperf.trafficgen.vsgen.frames import build_frame, frame_spec, mix_lengths, vary_of
from vsperf.trafficgen.vsgen.protocol import Mode, RunRequest, RunResult, Tick, dir_command, port_command
from vsperf.trafficgen.vsgen.results import per_second_rows, second_row, trial_result
from vsperf.trafficgen.vsgen.settings import MIN_KERNEL, kernel_version, path_setting, transmit_cpus

log = logging.getLogger(__name__)

class VsgenTrafficGenerator(TrafficGenerator):
    """vsperf's own generator: XDP live frames / AF_PACKET, per-stream loss and latency."""

    NAME: ClassVar[str] = "vsgen"
    FRAME_MIX: ClassVar[bool] = True
    TUNNEL_FRAMES: ClassVar[bool] = True  # builds frames inside VXLAN, GENEVE and GRE (op2p decapsulation)

    def __init__(self, settings: Mapping[str, Any], host: Host) -> None:
        super().__init__(settings, host)
        self._binary: EngineBinary | None = None
        self._engine: Engine | None = None
        self._ports: tuple[GenPort, ...] = ()
        self._defined: dict[int, str] = {}  # direction id -> its dir command (redefined on change)
        self._tx_ports: dict[int, int] = {}  # direction id -> its transmitting port
        self._continuous: tuple[Traffic, RunRequest, float] | None = None
        self._last_tick: Tick | None = None
        self._notes_logged: set[str] = set()
        self._address_trials = 0  # each RFC 2889 address trial takes a fresh range of addresses
        self.last_run: RunResult | None = None  # the engine's full answer to the last trial
        # Called with each per-second row while traffic runs (a live display can set it).
        self.on_second: Callable[[dict[str, float]], None] | None = None
        self.raw_latencies = 0  # tests: latencies each port keeps one by one (behind a histogram)
        self.keep_histogram = True  # the bench: False sends without the receivers' latency histogram
        self.pass_count = 0  # test frames each receive queue hands to the kernel (vsperf.capture)

    # --- lifecycle ----------------------------------------------------------------------------

    def check_prerequisites(self) -> None:
        host = self.host
        where = host.prefix
        facts = host.executor.run(["sh", "-c", "uname -s; id -u; uname -r"], check=False, timeout_s=10).stdout.split()
        system, uid, release = [*facts, "?", "?", "?"][:3]
        if system != "Linux":
            raise PrerequisiteError(f"{where}the vsgen generator needs Linux (XDP, network namespaces)")
        if uid != "0":
            raise PrerequisiteError(f"{where}the vsgen generator needs root: run as root, or use --trafficgen dummy")
        if kernel_version(release) < MIN_KERNEL:
            raise PrerequisiteError(
                f"{where}the vsgen generator needs Linux >= {MIN_KERNEL[0]}.{MIN_KERNEL[1]} (XDP live frames); "
                f"this kernel is {release}"
            )
        path_setting(self.settings)
        self._locate()

    def _locate(self) -> EngineBinary:
        """The engine, found or built on this machine (a testbed's generator host gets a copy)."""
        if self._binary is None:
            builder = LocalExecutor(self.host.executor.command_log)
            self._binary = locate_engine(builder, str(self.settings["VSGEN_ENGINE"]))
        return self._binary

    def version(self) -> str:
        engine = self._engine
        if engine is not None and engine.hello:
            return f"vsgen {engine.hello.get('version', '?')} (kernel {engine.hello.get('kernel', '?')})"
        try:
            binary = self._locate()
            proc = LocalExecutor(self.host.executor.command_log).run([str(binary.path), "--version"],
                                                                     timeout_s=10, check=False)
        except (PrerequisiteError, TrafficGenError) as exc:
            return f"unknown ({exc})"
        return proc.stdout.strip().replace("vsgen-engine", "vsgen") or "unknown"

    def start(self, ports: Sequence[GenPort]) -> None:
        if len(ports) < 2:
            raise TrafficGenError(f"vsgen needs two generator ports, the deployment gave {len(ports)}")
        self.stop()
        binary = self._locate()
        engine = Engine(self.host, self._stage(binary))
        engine.start()
        self._engine = engine
        try:
            for index, port in enumerate(ports):
                engine.command(port_command(index, port.netns, port.ifname, raw=self.raw_latencies))
        except BaseException:
            self.stop()
            raise
        self._ports = tuple(ports)
        log.debug("vsgen engine %s (pid %s, %s) on %d ports", engine.hello.get("version"), engine.pid,
                  binary.origin, len(ports))

    def stop(self) -> None:
        engine, self._engine = self._engine, None
        if engine is not None:
            engine.close()
        self._ports = ()
        self._defined.clear()
        self._tx_ports.clear()
        self._continuous = None

    def _stage(self, binary: EngineBinary) -> PurePosixPath:
        """The engine where its host runs it: this machine's build, or a copy in the run's
        directory on a testbed's generator host, checked to run there (architecture, libbpf)
        before any port is touched."""
        path = self.host.stage_file(binary.path, ENGINE_NAME)
        if not self.host.local:
            try:
                self.host.executor.run([str(path), "--version"], timeout_s=10)
            except CommandError as exc:
                raise PrerequisiteError(f"host {self.host.name}: cannot run the vsgen engine copied from this "
                                        f"machine ({exc}); install libbpf1 there, or use a generator host of the "
                                        f"same architecture and distribution") from exc
        return path

    # --- trials -------------------------------------------------------------------------------

    def trial(self, traffic: Traffic, rate_fps: float, duration_s: float) -> TrialResult:
        if rate_fps <= 0 or duration_s <= 0:
            raise TrafficGenError(
                f"a trial needs a positive rate and duration, got {rate_fps} fps, {duration_s} s"
            )
        ids = self._prepare(traffic)
        per_dir = rate_fps / len(ids)
        frames = max(1, round(per_dir * duration_s))
        request = self._request("rate", ids, per_dir, (frames,), traffic)
        result, ticks = self._run(request, traffic)
        return self._result("rate", traffic, rate_fps, duration_s, result, ticks)

    def burst(self, traffic: Traffic, frames: int) -> TrialResult:
        if frames <= 0:
            raise TrafficGenError(f"a burst needs at least one frame, got {frames}")
        ids = self._prepare(traffic)[:frames]  # fewer frames than directions: not every one sends
        share = [frames // len(ids)] * len(ids)
        share[0] += frames - sum(share)
        request = self._request("burst", ids, 0.0, tuple(share), traffic)
        result, ticks = self._run(request, traffic)
        duration = max((d.tx_time_s for d in result.dirs), default=0.0)
        return self._result("burst", traffic, traffic.line_rate_fps, duration, result, ticks)

    def start_continuous(self, traffic: Traffic, rate_fps: float) -> None:
        """Send `traffic` at the aggregate `rate_fps` until `stop_continuous`."""
        if rate_fps <= 0:
            raise TrafficGenError(f"continuous traffic needs a positive rate, got {rate_fps} fps")
        ids = self._prepare(traffic)
        request = self._request("cont", ids, rate_fps / len(ids), (), traffic)
        self._require_engine().begin(request)
        self._continuous = (traffic, request, rate_fps)
        self._last_tick = None

    def live_seconds(self) -> list[dict[str, float]]:
        """Per-second rows of the running continuous traffic that arrived since the last call."""
        if self._continuous is None:
            return []
        traffic, _request, _rate = self._continuous
        ticks = self._require_engine().poll_ticks()
        rows = per_second_rows(ticks, self._tx_ports, traffic.mean_frame_bytes, self._last_tick)
        if ticks:
            self._last_tick = ticks[-1]
        return rows

    def stop_continuous(self) -> TrialResult:
        """Stop the continuous traffic; its counters are read after the residual wait."""
        if self._continuous is None:
            raise TrafficGenError("vsgen: no continuous traffic is running")
        traffic, request, rate = self._continuous
        self._continuous = None
        engine = self._require_engine()
        engine.stop_run()
        result, ticks = engine.finish(request, self._tick_callback(traffic))
        self.last_run = result
        duration = max((d.tx_time_s for d in result.dirs), default=0.0)
        return self._result("rate", traffic, rate, duration, result, ticks)

    # --- optional capabilities (vsperf.search.measurer): reset and recovery --------------------

    def reset_trial(
        self, traffic: Traffic, rate_fps: float, duration_s: float, reset_at_s: float, reset: DutAction | None
    ) -> ResetTrialResult:
        """Stream, call `reset` `reset_at_s` seconds in, date the silence at the receivers
        (see `vsperf.trafficgen.vsgen.events`)."""
        if reset is None:
            raise TrafficGenError("vsgen: a reset trial needs the DUT's restart; this deployment gives none")
        if rate_fps <= 0 or not 0 <= reset_at_s < duration_s:
            raise TrafficGenError(f"vsgen: a reset trial needs a positive rate and a reset inside the stream, got "
                                  f"{rate_fps} fps, reset at {reset_at_s} s of {duration_s} s")
        ids = self._prepare(traffic)
        per_dir = rate_fps / len(ids)
        request = self._request("rate", ids, per_dir, (max(1, round(per_dir * duration_s)),), traffic)
        engine = self._require_engine()
        engine.begin(request)
        start_ns = time.monotonic_ns()
        try:
            time.sleep(max(0.0, reset_at_s - (time.monotonic_ns() - start_ns) / 1e9))
            reset_start_ns = time.monotonic_ns()  # CLOCK_MONOTONIC, the engine's clock
            reset()
            log.info("vsgen: DUT reset took %.3f s", (time.monotonic_ns() - reset_start_ns) / 1e9)
        except BaseException:
            engine.stop_run()
            engine.finish(request)
            raise
        result, ticks = engine.finish(request, self._tick_callback(traffic))
        self.last_run = result
        gap = reset_gap(result, reset_start_ns)
        return ResetTrialResult(
            trial=self._result("rate", traffic, rate_fps, duration_s, result, ticks),
            reset_at_s=gap.reset_at_s, gap_s=gap.gap_s, recovered=gap.recovered, resolution_s=1.0 / per_dir,
        )

    def recovery_trial(
        self, traffic: Traffic, overload_fps: float, overload_s: float, recovery_fps: float, recovery_s: float
    ) -> RecoveryTrialResult:
        """Overload, then without a pause the lower rate (one engine run with a rate change);
        the last lost frame is found by its index (see `vsperf.trafficgen.vsgen.events`)."""
        if min(overload_fps, overload_s, recovery_fps, recovery_s) <= 0:
            raise TrafficGenError(f"vsgen: a recovery trial needs positive rates and durations, got {overload_fps} "
                                  f"fps for {overload_s} s, then {recovery_fps} fps for {recovery_s} s")
        ids = self._prepare(traffic)
        rate1, rate2 = overload_fps / len(ids), recovery_fps / len(ids)
        # One thread per direction: the receiver splits a direction's frames at one index.
        request = replace(self._request("rate", ids, rate1, (max(1, round(rate1 * overload_s)),), traffic),
                          rate2_fps=rate2, frames2=max(1, round(rate2 * recovery_s)), threads=1)
        result, _ticks = self._run(request, traffic)
        before = [phases(d)[0] for d in result.dirs]
        after = [phases(d)[1] for d in result.dirs]
        return RecoveryTrialResult(
            overload=phase_trial(traffic, overload_fps, overload_s, before),
            recovery=phase_trial(traffic, recovery_fps, recovery_s, after),
            last_loss_after_drop_s=max(last_loss_after_drop_s(d) for d in result.dirs),
            resolution_s=1.0 / rate2,
        )

    def address_trial(
        self, traffic: Traffic, addresses: int, learning_rate_fps: float, test_rate_fps: float, forget: DutAction | None
    ) -> AddressTrialResult:
        """RFC 2889 learning, flood-check and test phases on two ports (see `vsperf.trafficgen.vsgen.addresses`)."""
        if addresses < 1 or learning_rate_fps <= 0 or test_rate_fps <= 0:
            raise TrafficGenError(f"vsgen: an address trial needs >= 1 address and positive rates, got "
                                  f"{addresses}, {learning_rate_fps} fps, {test_rate_fps} fps")
        engine = self._require_engine()
        if self._continuous is not None:
            raise TrafficGenError("vsgen: continuous traffic is running; stop it first")
        self._address_trials += 1
        try:
            phases_ = address_phases(traffic, (self._ports[0], self._ports[1]), int(engine.hello["run_tag"]),
                                     addresses, range_base(self._address_trials))
        except ValueError as exc:
            raise TrafficGenError(f"vsgen: {exc}") from exc
        if forget is not None:
            forget()
        results: list[TrialResult] = []
        for direction, command, rate in ((LEARN_DIR, phases_.learning, learning_rate_fps),
                                         (FLOOD_DIR, phases_.flood_check, test_rate_fps),
                                         (TEST_DIR, phases_.test, test_rate_fps)):
            engine.command(command)
            self._defined[direction] = command
            self._tx_ports[direction] = 1 if direction != TEST_DIR else 0
            result, ticks = self._run(self._request("rate", (direction,), rate, (addresses,)), traffic)
            results.append(self._result("rate", traffic, rate, addresses / rate, result, ticks))
        learning, flood, test = results
        return AddressTrialResult(addresses=addresses, learning=learning, test=test, flooded_frames=flood.rx_frames)

    # --- internals ----------------------------------------------------------------------------

    def _require_engine(self) -> Engine:
        if self._engine is None or not self._ports:
            raise TrafficGenError("vsgen: trial before start(ports)")
        return self._engine

    def _prepare(self, traffic: Traffic) -> tuple[int, ...]:
        """Define the traffic's directions in the engine (again only when they changed)."""
        engine = self._require_engine()
        if self._continuous is not None:
            raise TrafficGenError("vsgen: continuous traffic is running; stop it first")
        try:
            dirs = directions(traffic, self._ports)
            run_tag = int(engine.hello["run_tag"])
            commands = []
            for index, direction in enumerate(dirs):
                vary, base = vary_of(direction)
                spec = frame_spec(traffic, direction, run_tag)
                frame, l3, sizes = build_frame(spec), spec.l3_offset, mix_lengths(traffic)
                encap = self._ports[direction.tx_port].encap
                if encap is not None:  # op2p decapsulation: the frames go into the switch's tunnel
                    frame, l3, sizes = into_tunnel(frame, l3, sizes, encap, vary)
                commands.append(dir_command(index, direction.tx_port, direction.rx_port, direction.streams,
                                            vary, base, l3, frame, sizes))
        except (ConfigError, ValueError) as exc:
            raise TrafficGenError(f"vsgen: {exc}") from exc
        for index, command in enumerate(commands):
            if self._defined.get(index) != command:
                self._defined.pop(index, None)
                engine.command(command)
                self._defined[index] = command
            self._tx_ports[index] = dirs[index].tx_port
        return tuple(range(len(commands)))

    def _request(self, mode: Mode, ids: tuple[int, ...], rate: float, frames: tuple[int, ...],
                 traffic: Traffic | None = None) -> RunRequest:
        """One run; `traffic` (not for address trials) brings its warm start, its frame mix's
        per-size counts and whether latencies are kept raw."""
        cpus = transmit_cpus(self.settings, self.host.cpus(), switch_on_host=self.switch_on_host)
        threads = int(self.settings["VSGEN_TX_THREADS"])
        warm = traffic.warm_start if traffic is not None else None
        base = rate if rate > 0 else (traffic.line_rate_fps / len(ids) if traffic is not None else 0.0)
        try:
            return RunRequest(
                mode=mode, dirs=ids, rate_fps=rate, frames=frames, path=path_setting(self.settings),
                residual_s=float(self.settings["TRAFFICGEN_RESIDUAL_WAIT_S"]),
                detail_streams=int(self.settings["VSGEN_STREAM_DETAIL"]),
                cpus=tuple(cpus[j % len(cpus)] for j in range(len(ids) * threads)) if cpus else (),
                threads=threads,
                warm_frames=warm.frames(base) if warm else 0,
                warm_rate_fps=warm.start_rate_fps(base) if warm else 0.0,
                warm_rate2_fps=base if warm and warm.mode == "ramp" else 0.0,
                histogram=self.keep_histogram,
                count_sizes=traffic is not None and traffic.mix is not None,
                raw=self.raw_latencies > 0,
                pass_frames=self.pass_count,
            )
        except ValueError as exc:
            raise TrafficGenError(f"vsgen: {exc}") from exc

    def _tick_callback(self, traffic: Traffic) -> Callable[[Tick], None] | None:
        """Turns the engine's ticks into per-second rows for `on_second`, as they arrive."""
        callback = self.on_second
        if callback is None:
            return None
        last: list[Tick] = []

        def on_tick(tick: Tick) -> None:
            row = second_row(last[-1] if last else None, tick, self._tx_ports, traffic.mean_frame_bytes)
            last[:] = [tick]
            if row is not None:
                callback(row)

        return on_tick

    def _run(self, request: RunRequest, traffic: Traffic) -> tuple[RunResult, list[Tick]]:
        engine = self._require_engine()
        result, ticks = engine.run(request, self._tick_callback(traffic))
        self.last_run = result
        for d in result.dirs:
            if d.path_note and d.path_note not in self._notes_logged:
                self._notes_logged.add(d.path_note)
                log.info("vsgen sends from port %d with %s: %s", d.tx_port, d.path, d.path_note)
            log.debug("vsgen direction %d: %s, %d thread(s), %d of %d frames, requested %.1f fps, achieved "
                      "%.1f fps, transmit CPU %.3f s, lost %d, duplicated %d, reordered %d", d.direction, d.path,
                      d.threads, d.tx_frames, d.frames_requested, d.requested_fps, d.achieved_fps, d.cpu_s, d.lost,
                      d.dup, d.reorder)
        return result, ticks

    def _result(self, kind: str, traffic: Traffic, rate: float, duration: float, result: RunResult,
                ticks: list[Tick]) -> TrialResult:
        return trial_result(kind, traffic, rate, duration, result, ticks, self._ports)
