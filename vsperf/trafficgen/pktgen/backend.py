"""Pktgen-DPDK as a traffic generator, driven through its Lua socket.

vsperf either starts pktgen itself on the generator host's ports (one process per namespace
of the ports, see vsperf.trafficgen.pktgen.process) or connects to one the user started
(TRAFFICGEN_PKTGEN_HOST, TRAFFICGEN_PKTGEN_PORT; generator port i is pktgen port
TRAFFICGEN_PKTGEN_PORT_MAP[i]). A trial configures each transmitting port (size, addresses,
UDP ports, range mode for multistream, `rate` = percent of the link speed pktgen reads, and
`count` = the exact number of frames), zeroes the counters, starts the ports and waits inside
pktgen until they have sent their count. The transmit time is the wall time of that request;
if a port is still sending well after the planned time, it is stopped and the trial flagged
as under-delivered. Counters (portStats: what each port sent and received) are read after
the residual wait. pktgen counts every frame a port receives: frames the ports' own stacks send
are taken off (see `_stack_frames`).

The generator host is this machine (the local lab, or a testbed's `local` host) or an SSH host:
pktgen, its Lua connection and the transmit clock's counters run through that host the same way.

Latency (TRAFFICGEN_PKTGEN_LATENCY) comes from pktgen's latency probes: one timestamped
frame per probe interval on top of the test frames, so it is a sample; every result that
carries it is flagged `latency_sampled`.

A frame mix of at most 16 frames in a group, one stream, untagged, is sent as pktgen's sequence
packets (each frame of the pattern one sequence packet, sent in turn; pktgen's rate from the mix's
mean size); others are refused when the run is planned. What pktgen cannot do is said in each
trial's notes: no latency distribution (probes are a sample), no frame sizes counted at the
receivers, a warm start sent as a separate trial (the residual wait between them).
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from vsperf.dpdk.eal import check_veth_queues, require_port_driver
from vsperf.errors import ConfigError, PrerequisiteError, TrafficGenError
from vsperf.host.host import Host
from vsperf.search.measurer import LatencyStats, TrialResult
from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort
from vsperf.traffic.streams import Direction, directions
from vsperf.trafficgen.base import (
    TrafficGenerator,
    burst_shares,
    check_burst,
    check_rate_trial,
    lead_in_note,
    limits_notes,
    rate_shares,
)
from vsperf.trafficgen.pktgen import lua, replies
from vsperf.trafficgen.pktgen.client import LuaClient
from vsperf.trafficgen.pktgen.counters import HostCounters
from vsperf.trafficgen.pktgen.launch import Endpoint, Launched, check_binary, launch
from vsperf.trafficgen.pktgen.process import PktgenProcess
from vsperf.trafficgen.pktgen.sending import send_and_wait, send_primed

log = logging.getLogger(__name__)

FLAG_LATENCY_SAMPLED = "latency_sampled"
SETTLE_TIMEOUT_S = 5.0  # how long counters may keep changing after the residual wait
_CUT_SLACK = 0.2  # a rate trial is stopped this fraction after its planned time (+1 s)


def _notes(traffic: Traffic) -> tuple[str, ...]:
    return limits_notes(
        traffic, latency="pktgen's latency probes are a sample (min, avg, max): no latency distribution",
        sizes="pktgen counts the frames received, not their sizes: frames received per size not measured",
        warm=lead_in_note(traffic, "pktgen", "a residual wait (TRAFFICGEN_RESIDUAL_WAIT_S)"))


class PktgenTrafficGenerator(TrafficGenerator):
    """Pktgen-DPDK >= 23.06 via its Lua socket (needs pktgen built with Lua, docs/trafficgens.rst; root)."""

    NAME: ClassVar[str] = "pktgen"
    FRAME_MIX: ClassVar[bool] = True
    ALIASES: ClassVar[tuple[str, ...]] = ("Pktgen",)

    def __init__(self, settings: Mapping[str, Any], host: Host) -> None:
        super().__init__(settings, host)
        self._processes: list[PktgenProcess] = []
        self._clients: list[LuaClient] = []
        self._counters: HostCounters | None = None
        self._endpoints: list[Endpoint] = []
        self._link_mbps: list[int] = []
        self._ports: tuple[GenPort, ...] = ()
        self._version: str | None = None
        self._sequenced: set[int] = set()  # generator ports that sent a frame mix (sequence packets)

    # --- prerequisites and life cycle ------------------------------------------------------

    @property
    def _external(self) -> bool:
        """True for a pktgen the user started (TRAFFICGEN_PKTGEN_HOST): vsperf only connects."""
        return bool(str(self.settings["TRAFFICGEN_PKTGEN_HOST"]))

    def check_prerequisites(self) -> None:
        if self._external:
            address, port = str(self.settings["TRAFFICGEN_PKTGEN_HOST"]), int(self.settings["TRAFFICGEN_PKTGEN_PORT"])
            try:
                socket.create_connection((address, port), timeout=5.0).close()
            except OSError as exc:
                raise PrerequisiteError(
                    f"no pktgen Lua socket at {address}:{port} ({exc}): start pktgen with -G (or -g host:port) "
                    "there, or leave TRAFFICGEN_PKTGEN_HOST empty to let vsperf start it"
                ) from exc
            return
        host = self.host
        check_binary(host, str(self.settings["TRAFFICGEN_PKTGEN_BINARY"]))
        for program, package in (("python3", "python3"), ("taskset", "util-linux"), ("renice", "bsdutils")):
            host.require(program, f"apt-get install {package}")  # the pty launcher; lowering its housekeeping
        if host.executor.run(["id", "-u"], check=False, timeout_s=10).stdout.strip() != "0":
            where = host.prefix
            raise PrerequisiteError(f"{where}the pktgen generator needs root to start pktgen: run as root, "
                                    "or set TRAFFICGEN_PKTGEN_HOST to a pktgen you started")
        if host.local:  # this machine's DPDK PMDs and veths (a testbed host's: found when pktgen starts)
            require_port_driver(self.settings["TRAFFICGEN_PKTGEN_PORT_DRIVER"])
            # pktgen opens one queue per port: frames the lab's veth steers to another queue would be lost
            queues = int(self.settings["LAB_PORT_QUEUES"])
            check_veth_queues(self.settings["TRAFFICGEN_PKTGEN_PORT_DRIVER"], queues,
                              f"generator pktgen: LAB_PORT_QUEUES={queues}", "TRAFFICGEN_PKTGEN_PORT_DRIVER")

    def version(self) -> str:
        if self._version is None:
            if not self._clients:
                return "unknown (not started)"
            self._version = replies.version(self._clients[0].call(lua.info()))
        return self._version

    def start(self, ports: Sequence[GenPort]) -> None:
        if len(ports) < 2:
            raise TrafficGenError(f"pktgen needs two generator ports, the deployment gave {len(ports)}")
        self._ports = tuple(ports)
        try:
            if self._external:
                self._connect_external(len(ports))
            else:
                launched = Launched(self._processes, self._clients)  # filled as they start: stop() sees them
                launch(self.settings, self.host, ports, into=launched)
                self._endpoints = launched.endpoints
                self._counters = HostCounters(self.host, [(p.netns, p.ifname) for p in ports])
            self._read_links()
        except BaseException:
            self.stop()
            raise

    def _connect_external(self, count: int) -> None:
        host, port = str(self.settings["TRAFFICGEN_PKTGEN_HOST"]), int(self.settings["TRAFFICGEN_PKTGEN_PORT"])
        port_map = [int(p) for p in self.settings["TRAFFICGEN_PKTGEN_PORT_MAP"]]
        if len(port_map) < count:
            raise ConfigError(
                f"TRAFFICGEN_PKTGEN_PORT_MAP names {len(port_map)} pktgen ports, the test needs {count}"
            )
        client = LuaClient(host, port, label=f"pktgen at {host}:{port}")
        client.connect(float(self.settings["TRAFFICGEN_PKTGEN_TIMEOUT_S"]))
        self._clients = [client]
        self._endpoints = [Endpoint(0, port_map[i]) for i in range(count)]

    def _read_links(self) -> None:
        links = [replies.link_states(c.call(lua.port_info())) for c in self._clients]
        self._link_mbps = []
        for i, ep in enumerate(self._endpoints):
            state = links[ep.instance].get(ep.port)
            if state is None:
                raise TrafficGenError(f"pktgen has no port {ep.port} (generator port {i})")
            if not state.up or state.speed_mbps <= 0:
                raise TrafficGenError(f"pktgen port {ep.port} (generator port {i}) is down: {state}")
            self._link_mbps.append(state.speed_mbps)
        log.info("pktgen ports %s, link speeds %s Mbit/s", self._endpoints, self._link_mbps)

    def stop(self) -> None:
        if self._counters is not None:
            self._counters.close()
            self._counters = None
        for proc in self._processes:
            proc.stop()
        for client in self._clients:
            client.close()
        self._processes, self._clients, self._endpoints = [], [], []

    # --- trials ------------------------------------------------------------------------------

    @classmethod
    def frame_mix_problem(cls, traffic: Traffic) -> str:
        mix = traffic.mix
        if mix is None:
            return ""
        if mix.group_frames > lua.MAX_SEQUENCES or traffic.streams > 1 or traffic.vlan.enabled:
            return (f"pktgen sends a frame mix as its {lua.MAX_SEQUENCES} sequence packets, one stream, untagged: "
                    f"{mix.name} has {mix.group_frames} frames in a group"
                    + (f", {traffic.streams} streams" if traffic.streams > 1 else "")
                    + (", a VLAN tag" if traffic.vlan.enabled else ""))
        return ""

    def trial(self, traffic: Traffic, rate_fps: float, duration_s: float) -> TrialResult:
        check_rate_trial(rate_fps, duration_s)
        dirs = self._directions(traffic)
        per_port, counts = rate_shares(rate_fps, duration_s, len(dirs))
        warm = self._warm_up(traffic, dirs, per_port)
        trial = self._run("rate", traffic, dirs, counts, per_port, rate_fps, duration_s)
        return replace(trial, warm_frames=warm, notes=_notes(traffic))

    def burst(self, traffic: Traffic, frames: int) -> TrialResult:
        check_burst(frames)
        dirs = self._directions(traffic)
        warm = self._warm_up(traffic, dirs, traffic.line_rate_fps / len(dirs))
        trial = self._run("burst", traffic, dirs, burst_shares(frames, len(dirs)), None, traffic.line_rate_fps, 0.0)
        return replace(trial, warm_frames=warm, notes=_notes(traffic))

    def _warm_up(self, traffic: Traffic, dirs: list[Direction], per_port_fps: float) -> int:
        """The warm start as a trial of its own before the counted one (a ramp at its mean rate);
        the frames it sent (0 without one)."""
        if traffic.mix is not None:
            self._sequenced.update(d.tx_port for d in dirs)
        warm = traffic.warm_start
        if warm is None:
            return 0
        count = max(1, warm.frames(per_port_fps))
        lead = self._run("rate", replace(traffic, warm_start=None), dirs, [count] * len(dirs),
                         count / warm.duration_s, count * len(dirs) / warm.duration_s, warm.duration_s)
        return lead.tx_frames

    def _directions(self, traffic: Traffic) -> list[Direction]:
        if not self._clients:
            raise TrafficGenError("pktgen: trial before start(ports)")
        try:
            return directions(traffic, self._ports)
        except ConfigError:
            raise
        except Exception as exc:
            raise TrafficGenError(f"pktgen: {exc}") from exc

    def _setup(self, traffic: Traffic, d: Direction, count: int, port_fps: float | None) -> lua.PortSetup:
        ep = self._endpoints[d.tx_port]
        link = self._link_mbps[d.tx_port]
        rate = 100.0 if port_fps is None else lua.rate_percent(port_fps, traffic.frame_size_bytes, link)
        burst = lua.tx_burst_for(lua.pktgen_pps(rate, traffic.frame_size_bytes, link))
        return lua.PortSetup(
            port=ep.port, frame_size_bytes=traffic.frame_size_bytes, rate=rate, count=count,
            src_mac=d.src_mac, dst_mac=d.dst_mac, src_ip=d.src_ip, dst_ip=d.dst_ip,
            src_udp=d.src_udp, dst_udp=d.dst_udp, vary=d.vary, streams=d.streams,
            vlan_id=traffic.vlan.id if traffic.vlan.enabled else None, tx_burst=burst,
            mix_sizes=traffic.mix.pattern if traffic.mix is not None else (),
            sequences_off=traffic.mix is None and d.tx_port in self._sequenced,
        )

    def _run(
        self, kind: str, traffic: Traffic, dirs: list[Direction], counts: list[int], port_fps: float | None,
        requested_fps: float, duration_s: float,
    ) -> TrialResult:
        for proc in self._processes:
            proc.check_alive()
        latency_on = bool(self.settings["TRAFFICGEN_PKTGEN_LATENCY"])
        senders: dict[int, list[int]] = {}  # instance -> its transmitting pktgen ports
        planned_s = 0.0
        primed = bool(self._processes)  # vsperf's pktgens: their interfaces' counters time the trial
        targets: dict[int, float] = {}  # generator port -> rate (percent) it sends at
        for d, count in zip(dirs, counts, strict=True):
            setup = self._setup(traffic, d, count, port_fps)
            targets[d.tx_port] = setup.rate
            ep = self._endpoints[d.tx_port]
            client = self._clients[ep.instance]
            pps = lua.pktgen_pps(setup.rate, traffic.frame_size_bytes, self._link_mbps[d.tx_port])
            planned_s = max(planned_s, count / max(1, pps))
            if primed:
                prime = lua.prime_rate(traffic.frame_size_bytes, self._link_mbps[d.tx_port], setup.tx_burst)
                setup = replace(setup, rate=prime)
            client.call(lua.setup_port(setup))
            senders.setdefault(ep.instance, []).append(ep.port)
        # Probes are stamped by the sending port and measured by the receiving one (its pktgen
        # reads the same TSC: same machine): both need latency on.
        for gen_port in sorted({p for d in dirs for p in (d.tx_port, d.rx_port)}):
            ep = self._endpoints[gen_port]
            self._clients[ep.instance].call(lua.latency([ep.port], latency_on))
        rx_ports = sorted({d.rx_port for d in dirs})
        stack_before = self._kernel_tx(rx_ports)
        counters = self._counters
        for client in self._clients:
            client.call(lua.clear_stats())
        # A rate trial may overrun its plan a little before it counts as under-delivered (it is
        # flagged from the measured rate anyway); a burst may take what the ports need.
        if port_fps is not None:
            limit_s = planned_s * (1 + _CUT_SLACK) + 1.0
        else:
            limit_s = max(10.0, 3 * sum(counts) / 20_000 + 10.0)
        tx_ports = list(dict.fromkeys(d.tx_port for d in dirs))
        elapsed: dict[int, float] = {}
        if primed and counters is not None:
            interfaces = [(self._ports[p].netns, self._ports[p].ifname) for p in tx_ports]
            starts = [(self._clients[self._endpoints[p].instance], self._endpoints[p].port) for p in tx_ports]
            windows = send_primed(self._clients, senders, interfaces, starts, [targets[p] for p in tx_ports],
                                  limit_s, SETTLE_TIMEOUT_S, counters=counters)
        else:
            elapsed = send_and_wait(self._clients, senders, limit_s, start_first=True)
            windows = [None] * len(tx_ports)
        time.sleep(float(self.settings["TRAFFICGEN_RESIDUAL_WAIT_S"]))
        stats = self._settled_counters(dirs)
        stack_after = self._kernel_tx(rx_ports)
        stack_sent = {
            p: max(0, stack_after[p] - stack_before[p] - self._port_counters(stats, p).tx_frames) for p in stack_before
        }
        stack_sent.update(self._foreign([p for p in rx_ports if p not in stack_before]))
        if any(stack_sent.values()):
            log.debug("frames the hosts' own stacks sent to the receiving ports: %s", stack_sent)
        tx = rx = 0
        actual = measured_s = 0.0
        for d in dirs:
            tx_ep, rx_ep = self._endpoints[d.tx_port], self._endpoints[d.rx_port]
            sent = stats[tx_ep.instance][tx_ep.port].tx_frames
            tx += sent
            rx += max(0, stats[rx_ep.instance][rx_ep.port].rx_frames - stack_sent.get(d.rx_port, 0))
            window = windows[tx_ports.index(d.tx_port)]
            if window is not None:
                port_rate = window.rate_fps
            else:  # a pktgen the user started: timed by its start request (packet setup included)
                seconds = elapsed.get(tx_ep.instance, 0.0)
                port_rate = sent / seconds if seconds > 0 else 0.0
            actual += port_rate
            measured_s = max(measured_s, sent / port_rate if port_rate > 0 else 0.0)
        latency = self._latency(dirs) if latency_on else None
        return TrialResult.measured(
            kind, traffic, requested_fps, duration_s if kind == "rate" else measured_s, tx, rx, actual,
            latency=latency, flags=(FLAG_LATENCY_SAMPLED,) if latency is not None else (),
        )

    def _port_counters(self, stats: list[dict[int, replies.PortCounters]], gen_port: int) -> replies.PortCounters:
        ep = self._endpoints[gen_port]
        return stats[ep.instance][ep.port]

    def _kernel_tx(self, gen_ports: list[int]) -> dict[int, int]:
        """Kernel transmit counters of the receiving ports in namespaces the run made (the local
        lab's), when vsperf started pktgen.

        A packet socket also sees the frames its interface sends: when the namespace's own
        stack answers a test frame (ICMP port unreachable: nothing listens on the test's UDP
        port), pktgen's receiving port counts that answer as received. The interface's
        transmit counter minus what pktgen sent on it is exactly those frames; they are taken
        off the received count. A host's own interfaces are the user's: see `_foreign`.
        """
        if self._counters is None:
            return {}
        ports = [p for p in gen_ports if self._ports[p].netns]
        if not ports:
            return {}
        counts = self._counters.tx_packets()
        return {p: counts[(self._ports[p].netns, self._ports[p].ifname)] for p in ports}

    def _foreign(self, gen_ports: list[int]) -> dict[int, int]:
        """Frames of the receiving ports that were not test frames (ARP, IPv6), on a host's own
        interfaces (a testbed's; an empty list: nothing to ask).

        The generator host's cable ends and the DUT host's switch are the user's, IPv6 on:
        their stacks send router solicitations, neighbour and MLD frames when a port or bridge
        comes up (measured here: a few per trial), and the switch floods them to the generator's
        ports, where pktgen counts them as received. pktgen classifies each received frame; the
        test's are IPv4."""
        if not gen_ports or self._counters is None:
            return {}
        counts = [replies.foreign_frames(c.call(lua.pkt_stats())) for c in self._clients]
        return {p: counts[self._endpoints[p].instance].get(self._endpoints[p].port, 0) for p in gen_ports}

    def _settled_counters(self, dirs: list[Direction]) -> list[dict[int, replies.PortCounters]]:
        """Counters of every pktgen once a refresh has seen the test's ports quiet (pktgen
        updates them once a second, in its timer thread)."""
        involved: dict[int, list[int]] = {}
        for d in dirs:
            for gen_port in (d.tx_port, d.rx_port):
                ep = self._endpoints[gen_port]
                involved.setdefault(ep.instance, []).append(ep.port)
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while True:
            snaps = [replies.stats_snapshot(c.call(lua.port_stats())) for c in self._clients]
            quiet = all(snaps[i].settled(ports) for i, ports in involved.items())
            if quiet or time.monotonic() > deadline:
                if not quiet:
                    log.warning("pktgen ports still counting frames %.0f s after the trial: counters read anyway",
                                SETTLE_TIMEOUT_S)
                return [s.counters for s in snaps]
            time.sleep(0.2)

    def _latency(self, dirs: list[Direction]) -> LatencyStats | None:
        probes: list[replies.LatencyProbe] = []
        for d in dirs:
            ep = self._endpoints[d.rx_port]
            probe = replies.latency_probes(self._clients[ep.instance].call(lua.pkt_stats())).get(ep.port)
            if probe is not None and probe.samples > 0:
                probes.append(probe)
        if not probes:
            return None
        samples = sum(p.samples for p in probes)
        return LatencyStats(
            min_ns=min(p.min_us for p in probes) * 1000.0,
            avg_ns=sum(p.avg_us * p.samples for p in probes) / samples * 1000.0,
            max_ns=max(p.max_us for p in probes) * 1000.0,
            samples=samples,
        )

