"""vsgen's OTG server, the generator side: a configuration, its flows on the vsgen engine, metrics.

One engine process owns the configured ports (it is restarted when the set of ports changes);
each flow is one engine direction, defined again on every set_config. Starting traffic runs
the started flows as one engine run in a worker thread; its ticks feed the metrics while it
runs, its result (read after the residual wait) replaces them when it ends. A flow reports
`transmit: stopped` only then: its counters are final when a client sees it stopped.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from vsperf.config.schema_vsgen import Path as TxPath
from vsperf.errors import DeploymentError, TrafficGenError
from vsperf.host.host import Host
from vsperf.trafficgen.otg.errors import Unsupported
from vsperf.trafficgen.otg.translate import FlowDef, PortLocation, flow_defs, resolve_location
from vsperf.trafficgen.vsgen.engine import Engine
from vsperf.trafficgen.vsgen.protocol import RunRequest, RunResult, Tick, dir_command, port_command

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServerOptions:
    """How the server runs the engine: its binary, ports, transmit path, CPUs, residual wait."""

    binary: Path  # the engine, on this machine (the server's host)
    ports: Mapping[str, PortLocation]  # declared with --port NAME=IFNAME[@NETNS]
    netns_prefixes: tuple[str, ...] = ()  # IFNAME@NETNS locations allowed in these namespaces
    path: TxPath = "auto"
    cpus: tuple[int, ...] = ()
    residual_s: float = 2.0  # frames arriving later than this after the last one sent are lost


@dataclass
class _Run:
    """One engine run (the flows started together) and what it reported so far."""

    names: tuple[str, ...]
    request: RunRequest
    ticks: list[Tick] = field(default_factory=list)
    result: RunResult | None = None
    error: str = ""
    thread: threading.Thread | None = None


# How often a running engine reports its counters: what the OTG metrics show while traffic runs.
_TICK_S = 0.5


class ServerSession:
    """The state behind the OTG API: thread-safe, one configuration at a time."""

    def __init__(self, host: Host, options: ServerOptions) -> None:
        self.host = host
        self.executor = host.executor
        self.options = options
        # Control calls (config, start, stop) are serialised by `_control`; `_lock` guards the
        # data the run thread updates, and is never held while waiting for that thread.
        self._control = threading.Lock()
        self._lock = threading.RLock()
        self._engine: Engine | None = None
        self._engine_ports: tuple[PortLocation, ...] = ()
        self._engine_links: tuple[str, ...] = ()  # the interfaces the engine opened (`_links`)
        self._config: dict[str, Any] = {}
        self._flows: dict[str, tuple[int, FlowDef]] = {}  # name -> (direction, definition)
        self._port_index: dict[str, int] = {}
        self._runs: dict[str, _Run] = {}  # flow name -> its latest run
        self._current: _Run | None = None
        self._version = ""

    # --- configuration ------------------------------------------------------------------------

    def set_config(self, config: Any) -> None:
        """Replace the configuration (stops running traffic first); Unsupported says why not."""
        with self._control:
            self._stop_current()
            with self._lock:  # OTG: a failed set_config leaves no configuration behind
                self._flows, self._port_index, self._runs, self._current, self._config = {}, {}, {}, None, {}
            locations = [resolve_location(p.location, self.options.ports, self.options.netns_prefixes)
                         for p in config.ports]
            engine = self._engine_for(tuple(locations))
            defs = flow_defs(config, int(engine.hello["run_tag"]))
            port_index = {p.name: i for i, p in enumerate(config.ports)}
            try:
                for direction, flow in enumerate(defs):
                    engine.command(dir_command(direction, port_index[flow.tx_port], port_index[flow.rx_port],
                                               flow.streams, flow.vary, flow.base, flow.l3_offset, flow.frame,
                                               flow.mix))
            except TrafficGenError:
                self._close_engine()  # a dead or confused engine: the next set_config starts a new one
                raise
            with self._lock:
                self._flows = {f.name: (i, f) for i, f in enumerate(defs)}
                self._port_index = port_index
                self._config = config.serialize(encoding="dict")

    def config(self) -> dict[str, Any]:
        with self._lock:
            return dict(self._config)

    def _engine_for(self, locations: tuple[PortLocation, ...]) -> Engine:
        # The engine dies with the thread that started it (PR_SET_PDEATHSIG): the request thread of
        # one client's connection. The next client, or a reconnect, gets a new engine.
        links = self._links(locations)
        if (self._engine is not None and self._engine.alive and self._engine_ports == locations
                and self._engine_links == links):
            return self._engine
        self._close_engine()
        engine = Engine(self.host, PurePosixPath(self.options.binary))
        engine.start()
        self._engine = engine
        try:
            for index, location in enumerate(locations):
                engine.command(port_command(index, location.netns, location.ifname))
        except TrafficGenError as exc:
            self._close_engine()
            raise Unsupported(f"cannot open the ports: {exc}") from exc
        except ValueError as exc:
            self._close_engine()
            raise Unsupported(str(exc)) from exc
        self._engine_ports, self._engine_links = locations, links
        return engine

    def _links(self, locations: tuple[PortLocation, ...]) -> tuple[str, ...]:
        """Each location's interface as "ifindex/MAC" ("" when it is missing). The local lab deletes
        its ports after a test and makes them again under the same names for the next one: another
        interface, which an engine that opened the old one would never see a frame of."""
        found = []
        for location in locations:
            try:
                link = self.host.net.link(location.ifname, location.netns)
            except DeploymentError:
                found.append("")
                continue
            found.append(f"{link.get('ifindex', '')}/{link.get('address', '')}")
        return tuple(found)

    def version(self) -> str:
        """The generator behind the API: vsgen's engine version and the kernel it runs on (the same
        answer whether or not the engine runs)."""
        if not self._version:
            proc = self.executor.run([str(self.options.binary), "--version"], timeout_s=10, check=False)
            engine = proc.stdout.strip().replace("vsgen-engine", "vsgen") or "vsgen"
            self._version = f"{engine} (kernel {os.uname().release})"
        return self._version

    # --- traffic ------------------------------------------------------------------------------

    def _names(self, names: Sequence[str]) -> tuple[str, ...]:
        unknown = [n for n in names if n not in self._flows]
        if unknown:
            raise Unsupported(f"no flow named {', '.join(unknown)} in the configuration")
        return tuple(names) if names else tuple(self._flows)

    def start(self, names: Sequence[str]) -> None:
        """Start the flows `names` (all when empty) as one engine run."""
        with self._control, self._lock:
            chosen = self._names(names)
            if not chosen:
                raise Unsupported("the configuration has no flows to start")
            if self._current is not None and self._current.result is None and not self._current.error:
                raise Unsupported("traffic is already running: stop it first")
            flows = [self._flows[n] for n in chosen]
            modes = {(f.mode, f.rate_pps) for _, f in flows}
            if len(modes) != 1:
                raise Unsupported("vsgen runs flows started together at one rate and mode; "
                                  f"these have {sorted(modes)}")
            mode, rate = modes.pop()
            try:
                request = RunRequest(
                    mode=mode, dirs=tuple(d for d, _ in flows), rate_fps=rate,
                    frames=tuple(f.frames for _, f in flows) if mode != "cont" else (), path=self.options.path,
                    residual_s=self.options.residual_s, cpus=self.options.cpus, tick_s=_TICK_S,
                )
            except ValueError as exc:
                raise Unsupported(str(exc)) from exc
            run = _Run(chosen, request)
            assert self._engine is not None
            self._engine.begin(request)
            run.thread = threading.Thread(target=self._finish, args=(self._engine, run), name="otg-run",
                                          daemon=True)
            self._current = run
            for name in chosen:
                self._runs[name] = run
            run.thread.start()

    def _finish(self, engine: Engine, run: _Run) -> None:
        def on_tick(tick: Tick) -> None:
            with self._lock:
                run.ticks.append(tick)

        try:
            result, _ticks = engine.finish(run.request, on_tick)
        except TrafficGenError as exc:
            log.error("vsgen run failed: %s", exc)
            with self._lock:
                run.error = str(exc)
            return
        with self._lock:
            run.result = result

    def stop(self, names: Sequence[str]) -> None:
        """Stop the running flows (a run stops as a whole); wait for its final counters."""
        with self._control:
            with self._lock:
                self._names(names)
            self._stop_current()

    def _stop_current(self) -> None:
        with self._lock:
            run, engine = self._current, self._engine
        if run is None or engine is None or run.thread is None:
            return
        if run.result is None and not run.error:
            with contextlib.suppress(TrafficGenError):
                engine.stop_run()
        run.thread.join()

    # --- metrics ------------------------------------------------------------------------------

    def flow_metrics(self, names: Sequence[str]) -> list[dict[str, Any]]:
        """Flow metrics as OTG FlowMetric dicts (final once a flow is stopped)."""
        with self._lock:
            chosen = self._names(names)
            return [self._metric(name) for name in chosen]

    def _metric(self, name: str) -> dict[str, Any]:
        direction, flow = self._flows[name]
        rx_port = self._port_index[flow.rx_port]
        metric: dict[str, Any] = {"name": name, "port_tx": flow.tx_port, "port_rx": flow.rx_port,
                                  "transmit": "stopped", "frames_tx": 0, "frames_rx": 0}
        run = self._runs.get(name)
        if run is None:
            return metric
        if run.error:
            raise TrafficGenError(f"the run of flow {name} failed: {run.error}")
        size = flow.frame_size_bytes
        if run.result is None:
            metric["transmit"] = "started"
            if run.ticks:
                last = run.ticks[-1]
                prev = run.ticks[-2] if len(run.ticks) > 1 else None
                tx, rx = last.tx.get(direction, 0), last.rx.get(rx_port, 0)
                dt = last.t_s - (prev.t_s if prev else 0.0)
                before = prev.tx.get(direction, 0) if prev else 0
                metric.update(frames_tx=tx, frames_rx=rx, bytes_tx=tx * size, bytes_rx=rx * size,
                              frames_tx_rate=(tx - before) / dt if dt > 0 else 0.0)
            return metric
        d = next(x for x in run.result.dirs if x.direction == direction)
        rx = d.unique_rx_frames
        metric.update(
            frames_tx=d.tx_frames, frames_rx=rx, bytes_tx=d.tx_frames * size, bytes_rx=rx * size,
            # The mean rate of the whole transmission: what a client needs to judge delivery.
            frames_tx_rate=d.achieved_fps, frames_rx_rate=rx / d.tx_time_s if d.tx_time_s > 0 else 0.0,
            loss=100.0 * max(0, d.tx_frames - rx) / d.tx_frames if d.tx_frames else 0.0,
        )
        port = next((p for p in run.result.ports if p.port == rx_port), None)
        if port is not None and flow.latency and port.latency.samples > 0:
            lat = port.latency
            metric["latency"] = {"minimum_ns": float(lat.min_ns), "maximum_ns": float(lat.max_ns),
                                 "average_ns": lat.sum_ns / lat.samples}
        if port is not None and flow.timestamps and port.first_rx_ns:
            metric["timestamps"] = {"first_timestamp_ns": float(port.first_rx_ns),
                                    "last_timestamp_ns": float(port.last_rx_ns)}
        return metric

    # --- shutdown -----------------------------------------------------------------------------

    def _close_engine(self) -> None:
        engine, self._engine = self._engine, None
        self._engine_ports, self._engine_links = (), ()
        if engine is not None:
            engine.close()

    def close(self) -> None:
        """Stop traffic and the engine (it detaches its XDP programs)."""
        with self._control:
            self._stop_current()
            with self._lock:
                self._close_engine()
                self._flows, self._runs, self._current = {}, {}, None
