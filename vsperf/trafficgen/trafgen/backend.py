"""Traffic generator backend on netsniff-ng's trafgen, for the local lab's namespaced ports and a
testbed's generator host (over SSH: `vsperf.trafficgen.trafgen.remote`).

One trafgen process per transmitting port, inside the port's namespace, sends an exact number
of frames at a rate (`trafgen --dev IF --conf FILE -n COUNT -b RATEpps`); the aggregate rate
of a trial is split evenly over the transmitting ports. Frames sent are trafgen's own count
(frames the kernel accepted from it); the transmit time is trafgen's own measurement, so the
achieved rate is exact and under-delivery is flagged. Frames received are counted by a tc
program at each receiving port (vsperf.trafficgen.trafgen.rxcount) that sees only this test's IPv4/UDP
frames to 198.18.0.0/15 (and checks their VLAN tag), read after the residual wait.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from vsperf.context import RunContext
from vsperf.deployment import GenPort
from vsperf.errors import CommandError, DeploymentError, PrerequisiteError, TrafficGenError
from vsperf.lab.cpus import sender_cpus
from vsperf.lab.streams import Direction, directions
from vsperf.search.measurer import TrialResult
from vsperf.traffic import Traffic
from vsperf.trafficgen.base import (
    HostProcesses,
    TrafficGenerator,
    burst_shares,
    check_burst,
    check_rate_trial,
    rate_shares,
)
from vsperf.trafficgen.trafgen import bpf
from vsperf.trafficgen.trafgen.config import FCS_BYTES, packet_config, parse_version
from vsperf.trafficgen.trafgen.remote import RemoteGenHost, RemoteRxCounter
from vsperf.trafficgen.trafgen.rxcount import NO_VLAN, RxCounter, RxCounts
from vsperf.trafficgen.trafgen.sender import LocalSenderHost, PortSender, SenderHost, run_senders
from vsperf.trafficgen.vsgen.remote import host_cpus

log = logging.getLogger(__name__)

TRAFGEN = "trafgen"
FLAG_RX_UNTAGGED = "rx_untagged_frames"  # frames arrived without the VLAN tag they should carry
FLAG_RX_WRONG_VLAN = "rx_wrong_vlan"  # frames arrived tagged with another VLAN id


class TrafgenTrafficGenerator(TrafficGenerator):
    """netsniff-ng trafgen on the local lab's veth ports, or on a testbed's generator host over
    SSH (`vsperf.trafficgen.trafgen.remote`); rate- and count-controlled."""

    NAME: ClassVar[str] = "trafgen"

    def __init__(self, settings: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(settings, ctx)
        self._ports: tuple[GenPort, ...] = ()
        self._counters: dict[int, RxCounter | RemoteRxCounter] = {}
        self._senders: dict[int, PortSender] = {}
        self._version: str | None = None
        self._conf_dir: Path | None = None
        self._host_processes: tuple[HostProcesses, str] | None = None  # on a testbed: (session, host)
        self._host: SenderHost | None = None
        self._remote: RemoteGenHost | None = None
        self._host_cpus: list[int] = []  # the generator host's CPUs, when it is another host

    def use_host_processes(self, processes: HostProcesses, host: str) -> None:
        self._host_processes = (processes, host)

    def check_prerequisites(self) -> None:
        if self.settings["TESTBED"]:
            return  # it runs on the testbed's generator host: the testbed's preflight checks that host
        if os.geteuid() != 0:
            raise PrerequisiteError(
                "the trafgen generator needs root: run as root, or use --trafficgen dummy"
            )
        if shutil.which(TRAFGEN) is None:
            raise PrerequisiteError("trafgen is missing: apt-get install netsniff-ng")
        try:
            bpf.ArrayMap(1).close()
        except OSError as exc:
            raise PrerequisiteError(f"the kernel refuses BPF maps ({exc}); frames cannot be counted") from exc

    def version(self) -> str:
        if self._version is None:
            try:
                # trafgen -v exits with 1 after printing its version.
                proc = self.ctx.executor.run([TRAFGEN, "-v"], timeout_s=10, check=False)
            except CommandError as exc:
                return f"unknown ({exc})"
            self._version = parse_version(proc.stdout + proc.stderr)
        return self._version

    def start(self, ports: Sequence[GenPort]) -> None:
        if len(ports) < 2:
            raise TrafficGenError(f"trafgen needs two generator ports, the deployment gave {len(ports)}")
        self._ports = tuple(ports)
        self._conf_dir = self.ctx.work_dir / "trafgen"
        self._conf_dir.mkdir(parents=True, exist_ok=True)
        if self._host_processes is None:
            self._host = LocalSenderHost(self.ctx.executor, self._conf_dir)
            return
        processes, host = self._host_processes
        self._remote = RemoteGenHost(self.ctx.executor, processes, host, self.ctx.run_id, self._conf_dir)
        self._remote.open()
        self._host = self._remote
        self._host_cpus = host_cpus(self.ctx.executor)

    def stop(self) -> None:
        for sender in self._senders.values():
            sender.stop()
        self._senders.clear()
        for counter in self._counters.values():
            counter.detach()
        self._counters.clear()
        remote, self._remote = self._remote, None
        if remote is not None:
            remote.close()
        self._host = None
        self._ports = ()

    # --- trials ----------------------------------------------------------------------------

    def trial(self, traffic: Traffic, rate_fps: float, duration_s: float) -> TrialResult:
        check_rate_trial(rate_fps, duration_s)
        dirs = self._directions(traffic)
        per_port, frames = rate_shares(rate_fps, duration_s, len(dirs))
        tx, rx, actual, _counts, flags = self._run(traffic, dirs, frames, per_port)
        return TrialResult.measured("rate", traffic, rate_fps, duration_s, tx, rx, actual, flags=flags)

    def burst(self, traffic: Traffic, frames: int) -> TrialResult:
        check_burst(frames)
        dirs = self._directions(traffic)
        tx, rx, actual, _counts, flags = self._run(traffic, dirs, burst_shares(frames, len(dirs)), None)
        duration = tx / actual if actual > 0 else 0.0
        return TrialResult.measured("burst", traffic, traffic.line_rate_fps, duration, tx, rx, actual, flags=flags)

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

    def _counter(self, port_index: int, expected_vlan: int) -> RxCounter | RemoteRxCounter:
        counter = self._counters.get(port_index)
        if counter is None or counter.expected_vlan_id != expected_vlan:
            if counter is not None:
                counter.detach()
            port = self._ports[port_index]
            counter = (RxCounter(port.netns, port.ifname, expected_vlan) if self._remote is None
                       else RemoteRxCounter(self._remote, port.ifname, expected_vlan))
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
        frame_bytes = traffic.frame_size_bytes - FCS_BYTES
        senders = [self._sender(d.tx_port) for d in dirs]
        for sender in senders:
            sender.pace(per_port_rate, frame_bytes)
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

    def _sender(self, port_index: int) -> PortSender:
        sender = self._senders.get(port_index)
        if sender is None:
            assert self._conf_dir is not None and self._host is not None
            sender = PortSender(self.ctx.executor, self._host, self._ports[port_index], port_index, self._conf_dir,
                                self._cpu_for(port_index))
            self._senders[port_index] = sender
        return sender

    def _cpu_for(self, port_index: int) -> int | None:
        """CPU for the sender of port `port_index`.

        TRAFGEN_CPUS when set; else port i on the i-th CPU (round robin) of those not
        busy-polled by the switch's PMD threads (VSWITCH_PMD_CPU_MASK, any switch but the
        kernel bridge, which forwards in the sender's context and wants every CPU) when the
        switch runs on the generator's host. The CPUs are the generator host's.
        """
        cpus = self._host_cpus if self._remote is not None else sorted(os.sched_getaffinity(0))
        available = sender_cpus(self.settings, "TRAFGEN_CPUS", cpus, switch_on_host=self.switch_on_host)
        return available[port_index % len(available)] if available else None
