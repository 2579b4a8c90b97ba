"""Sending an exact number of frames at an exact rate from one generator port, with trafgen.

trafgen's own rate limit (`-b`) sends each second's quota in one burst at the start of the
second, and its gap mode (`-t`) adds a sleep per frame on top of the send time: neither
paces evenly. So the kernel paces: a TBF qdisc on the port releases frames at exactly the
requested rate (with a burst allowance of 0.5 ms), and trafgen fills it through the qdisc
path (`-q`) as fast as it can; a full socket buffer blocks it, so nothing is dropped.

Frames sent are counted on the wire (the port's tx_packets + tx_dropped: dropped there means
the switch side did not take it, which is the device's loss). The transmit time is measured on
the wire too, from the first frame to the last (the port's counter is polled closely around
both), so the achieved rate is right whether trafgen or the pacer was the bottleneck; trafgen's
own clock starts late and stops while frames are still queued.
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass

from vsperf.errors import CommandError, DeploymentError, TrafficGenError
from vsperf.host.host import Host
from vsperf.host.process import HostProcess
from vsperf.traffic.ports import GenPort
from vsperf.trafficgen.trafgen.agent_client import AgentClient
from vsperf.trafficgen.trafgen.config import parse_report

TRAFGEN = "trafgen"
# trafgen uses its per-packet send path when a rate is given; a rate it can never reach keeps
# its once-a-second quota from ever triggering, leaving the pacing to the qdisc.
_UNREACHABLE_RATE = "1000000000pps"
_PACER_BURST_S = 0.0005
_PACER_MIN_BURST_FRAMES = 4
_PACER_LIMIT_BYTES = 16 * 1024 * 1024  # larger than any socket buffer: the qdisc never drops
# trafgen forks its worker after it starts: wait for it (up to 1 s), then move it to the CPU.
# A fixed script: the PID and the CPU are its arguments.
PIN_SCRIPT = ('i=0; while [ $i -lt 100 ]; do k=$(cat /proc/$1/task/*/children 2>/dev/null); '
              'if [ -n "$k" ]; then for c in $k; do taskset -a -p -c "$2" "$c" >/dev/null; done; exit 0; fi; '
              'i=$((i+1)); sleep 0.01; done')
_TRAFGEN_DEFAULT_MAX_FRAME_BYTES = 2048  # larger frames need --jumbo-support
_DRAIN_IDLE_S = 0.05  # no frame left for this long after trafgen exited: nothing more will
_FAST_POLL_S = 0.001
_SLOW_POLL_S = 0.1
_WAKE_EARLY_S = 0.05  # start polling closely this long before the planned end
# A rate trial lasts its duration: a sender still running this long after the planned end
# (it could not keep the rate) is stopped, and what it did send counts (under-delivery).
_OVERRUN_GRACE_S = 0.25
_OVERRUN_GRACE_RATIO = 0.05
# trafgen's exit after SIGINT: 0 when it caught the signal, -SIGINT/130 when it died of it.
_INTERRUPTED_EXIT_CODES = (0, -2, 130)


@dataclass(frozen=True)
class SendResult:
    """What one port sent in one trial."""

    port_index: int
    trafgen_frames: int  # frames trafgen handed to the kernel
    wire_frames: int  # frames that left the port
    wire_time_s: float  # time from the first to the last frame on the wire

    @property
    def rate_fps(self) -> float:
        return self.wire_frames / self.wire_time_s if self.wire_time_s > 0 else 0.0


def pacer_argv(ifname: str, rate_fps: float, frame_bytes: int) -> list[str]:
    """tc command pacing `ifname` at `rate_fps` frames of `frame_bytes` (without FCS)."""
    bits = max(8, round(rate_fps * frame_bytes * 8))
    burst = frame_bytes * max(_PACER_MIN_BURST_FRAMES, math.ceil(rate_fps * _PACER_BURST_S))
    return ["tc", "qdisc", "replace", "dev", ifname, "root", "tbf", "rate", f"{bits}bit",
            "burst", str(burst), "limit", str(_PACER_LIMIT_BYTES)]


class PortSender:
    """trafgen on one port of the generator host: pacing, launch, and the wire-side timing of
    what it sent (the port's transmit counter, read by the agent of its namespace)."""

    def __init__(self, host: Host, agent: AgentClient, port: GenPort, port_index: int, cpu: int | None) -> None:
        self.host = host
        self.agent = agent
        self.port = port
        self.port_index = port_index
        self.cpu = cpu
        self._paced_at: tuple[float, int] | None = None
        self._proc: HostProcess | None = None
        self._frames = 0
        self._wire_before = 0
        self._last_count = 0
        self._last_poll = 0.0
        self._first_time: float | None = None
        self._last_change: float | None = None
        self._last_change_seen: float | None = None
        self._drain_idle_s = _DRAIN_IDLE_S
        self._paced = False
        self._exit_code: int | None = None
        self._done = False
        self._interrupted = False

    def _tc(self, argv: list[str], *, check: bool = True) -> None:
        self.host.executor.run(argv, netns=self.port.netns, check=check, timeout_s=10)

    def _wire(self) -> int:
        return self.agent.tx_frames(self.port.ifname)

    def pace(self, rate_fps: float | None, frame_bytes: int) -> None:
        """Pace the port at `rate_fps` (None: no pacing, trafgen's fastest)."""
        wanted = (rate_fps, frame_bytes) if rate_fps else None
        if wanted == self._paced_at:
            return
        try:
            if rate_fps:
                self.agent.paced(self.port.ifname)  # journaled before it exists
                self._tc(pacer_argv(self.port.ifname, rate_fps, frame_bytes))
            else:
                self._tc(["tc", "qdisc", "del", "dev", self.port.ifname, "root"], check=False)
        except CommandError as exc:
            raise TrafficGenError(f"cannot pace {self.port.ifname}: {exc}") from exc
        self._paced_at = wanted

    def start(self, conf_text: str, frames: int, rate_fps: float | None, frame_bytes: int) -> None:
        """Launch trafgen for `frames` frames of `frame_bytes` (without FCS), paced by `pace`
        (which must be called first)."""
        directory = self.host.work_dir("trafgen")
        conf = directory / f"port{self.port_index}.cfg"
        self.host.write_file(conf, conf_text)
        log_path = directory / f"port{self.port_index}.log"
        self.host.remove_files([log_path])
        argv = [TRAFGEN, "--dev", self.port.ifname, "--conf", str(conf), "-n", str(frames), "-P", "1",
                "--no-sock-mem", "--notouch-irq"]
        if rate_fps:
            argv += ["--qdisc-path", "-b", _UNREACHABLE_RATE]
        if frame_bytes > _TRAFGEN_DEFAULT_MAX_FRAME_BYTES:
            argv.append("--jumbo-support")
        self._frames = frames
        self._paced = bool(rate_fps)
        self._first_time = self._last_change = self._last_change_seen = self._exit_code = None
        self._done = False
        self._interrupted = False
        # After trafgen exits, frames still queued in the pacer leave one per 1/rate seconds.
        self._drain_idle_s = max(_DRAIN_IDLE_S, 5.0 / rate_fps) if rate_fps else _DRAIN_IDLE_S
        self._wire_before = self._last_count = self._wire()
        self._last_poll = time.monotonic()
        try:
            self._proc = self.host.spawn(f"trafgen port{self.port_index}", argv, netns=self.port.netns,
                                         log_path=log_path)
        except DeploymentError as exc:
            raise TrafficGenError(f"cannot start trafgen: {exc}") from exc
        if self.cpu is not None:
            # trafgen pins its worker to CPU 0 (always, when rate-limited): spread ports over CPUs.
            self.host.executor.run(["sh", "-c", PIN_SCRIPT, "sh", str(self._proc.pid), str(self.cpu)], check=False,
                                   timeout_s=10)

    def interrupt(self) -> None:
        """Stop sending now (the trial's time is up); what was sent so far is the result.

        Once: `run_senders` calls it at every poll until trafgen has exited, and on a testbed
        host each signal is a command over SSH (trafgen stops at the first)."""
        if self._proc is not None and not self._done and self._exit_code is None and not self._interrupted:
            self._interrupted = True
            self._proc.interrupt()

    @property
    def interrupted(self) -> bool:
        return self._interrupted

    @property
    def started(self) -> bool:
        """True once the first frame has left the port (or trafgen has exited)."""
        return self._first_time is not None or self._exit_code is not None

    @property
    def done(self) -> bool:
        return self._done

    @property
    def first_frame_time(self) -> float | None:
        return self._first_time

    def poll(self) -> None:
        """Read the wire counter and trafgen's state; times are the midpoint between two polls."""
        if self._proc is None or self._done:
            return
        if self._exit_code is None:
            self._exit_code = self._proc.returncode()
        count = self._wire()
        now = time.monotonic()
        if count != self._last_count:
            moment = (self._last_poll + now) / 2
            if self._first_time is None:
                self._first_time = moment
            self._last_change, self._last_change_seen = moment, now
            self._last_count = count
        sent = count - self._wire_before
        if self._exit_code is not None:
            idle = now - (self._last_change_seen or now)
            # A trafgen stopped at the end of the trial exits non-zero while frames it queued in
            # the pacer still leave: they are sent too, so wait until the port is idle.
            failed = self._exit_code != 0 and not (self._interrupted and self._exit_code in _INTERRUPTED_EXIT_CODES)
            if sent >= self._frames or failed or idle > self._drain_idle_s:
                self._done = True
        self._last_poll = now

    def result(self) -> SendResult:
        """What was sent, once `done`: TrafficGenError if trafgen failed."""
        proc = self._proc
        if proc is None or not self._done or self._exit_code is None:
            raise TrafficGenError(f"trafgen on {self.port.ifname}: result() before it finished")
        self.host.stop_process(proc, timeout_s=2.0)  # it has exited: this forgets it
        text = proc.read_log()
        self._proc = None
        ok_codes = _INTERRUPTED_EXIT_CODES if self._interrupted else (0,)
        if self._exit_code not in ok_codes:
            tail = " | ".join(text.strip().splitlines()[-3:])
            raise TrafficGenError(f"trafgen on {self.port.ifname} failed (exit {self._exit_code}): {tail}")
        report = parse_report(text)
        sent = self._last_count - self._wire_before
        first, last = self._first_time, self._last_change
        wire_time = (last - first) if first is not None and last is not None else 0.0
        # N frames span N - 1 gaps; trafgen's own time is the fallback for a single frame.
        wire_time = wire_time * sent / (sent - 1) if sent > 1 else report.seconds
        if not self._paced:
            # Unpaced (bursts): trafgen bypasses the qdisc, nothing is queued when it exits, and
            # its own clock is finer than polling the counter.
            wire_time = report.seconds or wire_time
        return SendResult(self.port_index, report.packets, sent, wire_time)

    def stop(self) -> None:
        """Stop a running trafgen, remove the pacer, close the counter socket."""
        if self._proc is not None:
            self.host.stop_process(self._proc, timeout_s=2.0)
            self._proc = None
        if self._paced_at is not None:
            with contextlib.suppress(CommandError):
                self._tc(["tc", "qdisc", "del", "dev", self.port.ifname, "root"], check=False)
            self._paced_at = None

    def running(self) -> bool:
        """True while trafgen has not exited."""
        return self._proc is not None and self._proc.returncode() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None


def run_senders(
    senders: list[PortSender], planned_s: float, timeout_s: float, *, time_bound: bool = True
) -> list[SendResult]:
    """Watch started senders until every frame has left; return what each one sent.

    With `time_bound` (rate trials), senders still running shortly after `planned_s` are
    stopped: a trial lasts its duration, and a generator that could not keep the rate has sent
    fewer frames (flagged as under-delivery by the caller). Bursts send every frame.

    The wire counters are polled closely only around the first and the last frames (the
    middle of a trial is slept through: the polls would take CPU from the device under test).
    """
    deadline = time.monotonic() + timeout_s
    try:
        while not all(s.started for s in senders):
            _check_deadline(deadline, timeout_s)
            for sender in senders:
                sender.poll()
            time.sleep(_FAST_POLL_S)
        firsts = [s.first_frame_time for s in senders if s.first_frame_time is not None]
        wake = (min(firsts) if firsts else time.monotonic()) + planned_s - _WAKE_EARLY_S
        # Sleep through the middle of the trial, but not past a sender that has already exited
        # (an unpaced burst ends as soon as the generator has sent it).
        while time.monotonic() < wake and all(s.running() for s in senders if s.pid is not None):
            time.sleep(min(_SLOW_POLL_S, max(0.0, wake - time.monotonic())))
        cutoff = wake + _WAKE_EARLY_S + _OVERRUN_GRACE_S + _OVERRUN_GRACE_RATIO * planned_s
        while not all(s.done for s in senders):
            _check_deadline(deadline, timeout_s)
            if time_bound and time.monotonic() >= cutoff:
                for sender in senders:
                    sender.interrupt()
            for sender in senders:
                sender.poll()
            time.sleep(_FAST_POLL_S)
        return [s.result() for s in senders]
    except BaseException:
        for sender in senders:
            sender.stop()
        raise


def _check_deadline(deadline: float, timeout_s: float) -> None:
    if time.monotonic() >= deadline:
        raise TrafficGenError(f"trafgen did not finish within {timeout_s:.0f} s")
