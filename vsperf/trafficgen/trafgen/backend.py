"""Traffic generator backend on netsniff-ng's trafgen, on the generator host's ports: the local
lab's namespaced veths, or a testbed's generator host (this machine or SSH, the same way).

One trafgen process per transmitting port, inside the port's namespace, sends an exact number
of frames at a rate (`trafgen --dev IF --conf FILE -n COUNT -b RATEpps`); the aggregate rate
of a trial is split evenly over the transmitting ports (a frame mix: its packets in turn, paced at
the mix's mean size). Frames sent are trafgen's own count
(frames the kernel accepted from it); the transmit time is trafgen's own measurement, so the
achieved rate is exact and under-delivery is flagged. Frames received are counted by a tc
program at each receiving port (vsperf.trafficgen.trafgen.rxcount) that sees only this test's IPv4/UDP
frames to 198.18.0.0/15 (and checks their VLAN tag), read after the residual wait, held by the
receive agent of the port's namespace (vsperf.trafficgen.trafgen.agent_client).

What it cannot do is said in each trial's notes: it measures no latency (no histogram), counts
no frame sizes at the receivers, and sends a warm start as a separate trafgen run just before
the counted one (the pause of a process start between them).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from vsperf.errors import CommandError, DeploymentError, PrerequisiteError, TrafficGenError
from vsperf.host.cpus import sender_cpus
from vsperf.host.host import Host
from vsperf.search.measurer import TrialResult
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
from vsperf.trafficgen.trafgen import bpf
from vsperf.trafficgen.trafgen.agent_client import AgentClient, RxCounter
from vsperf.trafficgen.trafgen.config import FCS_BYTES, packet_config, parse_version
from vsperf.trafficgen.trafgen.rxcount import NO_VLAN, RxCounts
from vsperf.trafficgen.trafgen.sender import PortSender, run_senders

log = logging.getLogger(__name__)

TRAFGEN = "trafgen"
_BPF_PROBE = Path(bpf.__file__).read_text(encoding="utf-8") + "\nArrayMap(1).close()\n"
FLAG_RX_UNTAGGED = "rx_untagged_frames"  # frames arrived without the VLAN tag they should carry
FLAG_RX_WRONG_VLAN = "rx_wrong_vlan"  # frames arrived tagged with another VLAN id
_WARM_DRAIN_S = 0.02  # after a warm start, before the counted frames: its last frames arrive


def _notes(traffic: Traffic) -> tuple[str, ...]:
    return limits_notes(
        traffic, latency="trafgen measures no latency: no latency distribution",
        sizes="trafgen counts the frames received, not their sizes: frames received per size not measured",
        warm=lead_in_note(traffic, "trafgen", "a trafgen process start"))


class TrafgenTrafficGenerator(TrafficGenerator):
    """netsniff-ng trafgen on the generator host's ports; rate- and count-controlled."""

    NAME: ClassVar[str] = "trafgen"
    # program -> Debian package, on the generator host; the receive agent runs with python3.
    FRAME_MIX: ClassVar[bool] = True
    PROGRAMS: ClassVar[Mapping[str, str]] = {"trafgen": "netsniff-ng", "tc": "iproute2", "python3": "python3",
                                             "taskset": "util-linux"}

    def __init__(self, settings: Mapping[str, Any], host: Host) -> None:
        super().__init__(settings, host)
        self._ports: tuple[GenPort, ...] = ()
        self._agents: dict[str | None, AgentClient] = {}  # one per namespace of the ports
        self._counters: dict[int, RxCounter] = {}
        self._senders: dict[int, PortSender] = {}
        self._version: str | None = None
        self._warm_frames = 0  # of the last trial's warm start

    def check_prerequisites(self) -> None:
        where = self.host.prefix
        if self.host.executor.run(["id", "-u"], check=False, timeout_s=10).stdout.strip() != "0":
            raise PrerequisiteError(f"{where}the trafgen generator needs root: run as root, or use --trafficgen dummy")
        for program, package in self.PROGRAMS.items():
            self.host.require(program, f"apt-get install {package}")
        # The receive agent counts frames in BPF maps: a kernel (or a container) that refuses them
        # is said now, by the host's python3 with the agent's bpf module on its stdin (nothing is
        # staged for a check), rather than by the first trial.
        probe = self.host.executor.run(["python3", "-"], input_text=_BPF_PROBE, check=False, timeout_s=20)
        if probe.returncode != 0:
            tail = (probe.stderr.strip().splitlines() or ["no message"])[-1]
            raise PrerequisiteError(f"{where}the kernel refuses BPF maps ({tail}); frames cannot be counted")

    def version(self) -> str:
        if self._version is None:
            try:
                # trafgen -v exits with 1 after printing its version.
                proc = self.host.executor.run([TRAFGEN, "-v"], timeout_s=10, check=False)
            except CommandError as exc:
                return f"unknown ({exc})"
            self._version = parse_version(proc.stdout + proc.stderr)
        return self._version

    def start(self, ports: Sequence[GenPort]) -> None:
        if len(ports) < 2:
            raise TrafficGenError(f"trafgen needs two generator ports, the deployment gave {len(ports)}")
        self._ports = tuple(ports)
        try:
            for netns in dict.fromkeys(p.netns for p in ports):
                agent = self._agents[netns] = AgentClient(self.host, netns)
                agent.open()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        for sender in self._senders.values():
            sender.stop()
        self._senders.clear()
        for counter in self._counters.values():
            counter.detach()
        self._counters.clear()
        for agent in self._agents.values():
            agent.close()
        self._agents.clear()
        self._ports = ()

    # --- trials ----------------------------------------------------------------------------

    def trial(self, traffic: Traffic, rate_fps: float, duration_s: float) -> TrialResult:
        check_rate_trial(rate_fps, duration_s)
        dirs = self._directions(traffic)
        per_port, frames = rate_shares(rate_fps, duration_s, len(dirs))
        tx, rx, actual, _counts, flags = self._run(traffic, dirs, frames, per_port)
        return TrialResult.measured("rate", traffic, rate_fps, duration_s, tx, rx, actual, flags=flags,
                                    warm_frames=self._warm_frames, notes=_notes(traffic))

    def burst(self, traffic: Traffic, frames: int) -> TrialResult:
        check_burst(frames)
        dirs = self._directions(traffic)
        tx, rx, actual, _counts, flags = self._run(traffic, dirs, burst_shares(frames, len(dirs)), None)
        duration = tx / actual if actual > 0 else 0.0
        return TrialResult.measured("burst", traffic, traffic.line_rate_fps, duration, tx, rx, actual, flags=flags,
                                    warm_frames=self._warm_frames, notes=_notes(traffic))

    def _directions(self, traffic: Traffic) -> list[Direction]:
        if not self._ports:
            raise TrafficGenError("trafgen: trial before start(ports)")
        try:
            return directions(traffic, self._ports)
        except Exception as exc:
            raise TrafficGenError(f"trafgen: {exc}") from exc

    def _expected_vlan(self, traffic: Traffic, port: GenPort) -> int:
        pushed = port.rx_vlan_id
        if pushed is not None:
            return int(pushed)
        return traffic.vlan.id if traffic.vlan.enabled else NO_VLAN

    def _counter(self, port_index: int, expected_vlan: int) -> RxCounter:
        counter = self._counters.get(port_index)
        if counter is None or counter.expected_vlan_id != expected_vlan:
            if counter is not None:
                counter.detach()
            port = self._ports[port_index]
            counter = RxCounter(self._agents[port.netns], port.ifname, expected_vlan)
            try:
                counter.attach()
            except DeploymentError as exc:
                raise TrafficGenError(str(exc)) from exc
            self._counters[port_index] = counter
        return counter

    def _run(
        self, traffic: Traffic, dirs: list[Direction], frames: list[int], per_port_rate: float | None
    ) -> tuple[int, int, float, list[RxCounts], tuple[str, ...]]:
        counters = [
            self._counter(d.rx_port, self._expected_vlan(traffic, self._ports[d.rx_port])) for d in dirs
        ]
        frame_bytes = traffic.largest_frame_bytes - FCS_BYTES  # trafgen's jumbo frames
        mean_bytes = round(traffic.mean_frame_bytes) - FCS_BYTES  # the pacer's rate in bits
        senders = [self._sender(d.tx_port) for d in dirs]
        self._warm_frames = self._warm_up(traffic, dirs, senders, per_port_rate, frame_bytes, mean_bytes)
        for sender in senders:
            sender.pace(per_port_rate, mean_bytes)
        before = [c.read() for c in counters]
        # A rate trial is cut off shortly after its planned time; a burst may take as long as
        # the generator needs (up to the hard limit below).
        planned_s = max(frames) / per_port_rate if per_port_rate else max(frames) / 20_000
        try:
            for sender, direction, count in zip(senders, dirs, frames, strict=True):
                sender.start(packet_config(traffic, direction), count, per_port_rate, frame_bytes)
            results = run_senders(senders, planned_s, 3 * planned_s + 10, time_bound=per_port_rate is not None)
        except BaseException:
            for sender in senders:
                sender.stop()
            raise
        time.sleep(float(self.settings["TRAFFICGEN_RESIDUAL_WAIT_S"]))
        deltas = [c.read() - b for c, b in zip(counters, before, strict=True)]
        tx = sum(r.wire_frames for r in results)
        rx = sum(d.test_frames(c.expected_vlan_id) for d, c in zip(deltas, counters, strict=True))
        actual = sum(r.rate_fps for r in results)
        flags: list[str] = []
        for result in results:
            if result.wire_frames != result.trafgen_frames:
                log.warning("port %d: trafgen sent %d frames, %d left the port", result.port_index,
                            result.trafgen_frames, result.wire_frames)
        for delta, counter in zip(deltas, counters, strict=True):
            if delta.other:
                log.debug("%s received %d frames that are not test frames", counter.ifname, delta.other)
            if counter.expected_vlan_id != NO_VLAN and delta.untagged:
                flags.append(FLAG_RX_UNTAGGED)
            if delta.tagged_other or (counter.expected_vlan_id == NO_VLAN and delta.tagged_expected):
                flags.append(FLAG_RX_WRONG_VLAN)
        return tx, rx, actual, deltas, tuple(dict.fromkeys(flags))

    def _warm_up(self, traffic: Traffic, dirs: list[Direction], senders: list[PortSender],
                 per_port_rate: float | None, frame_bytes: int, mean_bytes: int) -> int:
        """The warm start as a separate run of every sender (a ramp at its mean rate) before the
        counted one; the frames it sent (0 without a warm start)."""
        warm = traffic.warm_start
        if warm is None:
            return 0
        base = per_port_rate or traffic.line_rate_fps / len(dirs)
        count = max(1, warm.frames(base))
        rate = count / warm.duration_s
        for sender in senders:
            sender.pace(rate, mean_bytes)
        try:
            for sender, direction in zip(senders, dirs, strict=True):
                sender.start(packet_config(traffic, direction), count, rate, frame_bytes)
            sent = run_senders(senders, warm.duration_s, 3 * warm.duration_s + 10)
        except BaseException:
            for sender in senders:
                sender.stop()
            raise
        time.sleep(_WARM_DRAIN_S)  # its last frames arrive before the counters are read
        return sum(r.wire_frames for r in sent)

    def _sender(self, port_index: int) -> PortSender:
        sender = self._senders.get(port_index)
        if sender is None:
            port = self._ports[port_index]
            sender = PortSender(self.host, self._agents[port.netns], port, port_index, self._cpu_for(port_index))
            self._senders[port_index] = sender
        return sender

    def _cpu_for(self, port_index: int) -> int | None:
        """CPU for the sender of port `port_index`.

        TRAFGEN_CPUS when set; else port i on the i-th CPU (round robin) of those not
        busy-polled by the switch's PMD threads (VSWITCH_PMD_CPU_MASK, any switch but the
        kernel bridge, which forwards in the sender's context and wants every CPU) when the
        switch runs on the generator's host. The CPUs are the generator host's.
        """
        available = sender_cpus(self.settings, "TRAFGEN_CPUS", self.host.cpus(), switch_on_host=self.switch_on_host)
        return available[port_index % len(available)] if available else None
