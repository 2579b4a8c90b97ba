"""Software traffic generators side by side on one veth pair between two namespaces (needs root).

    PYTHONPATH=. .venv/bin/python bench/bench_generators.py [--seconds S] [--skip NAME ...]

Measures the maximum rate of 64-byte frames delivered to the receiver, one transmit core each
(CPU 0): vsgen (burst at full speed), trafgen (netsniff-ng, no rate limit), `tcpreplay
--topspeed` (pcap preloaded, looped), iperf3 UDP with the smallest datagram (18 bytes: a
64-byte frame) and dpdk-testpmd txonly on an af_xdp vdev. Then vsgen's rate accuracy at 10, 50
and 90 % of its maximum. Prints every number, the ratios and the targets:
vsgen >= 2x the best of trafgen / tcpreplay / iperf3, >= 1x testpmd, rate error <= 0.5 %.

Then vsgen through `vsperf` on the lab's deployments with one and two transmit threads:
bench_vsgen_switches.py --threads (the wire, linux-bridge and ovs side by side, and the wire's
2-thread target, judged only when the threads got their CPUs). A rate-accuracy point where vsgen
under-delivered (the trial's generator_under_delivery flag: on a busy machine the thread did not
get the CPU) is printed as such with the thread's CPU seconds and not judged; only a point sent
too fast, or a failed one, fails the accuracy check.

"Delivered": frames counted at the receiving interface. vsgen counts its own frames (its XDP
receive program); the others are counted by the lab's tc receive counter (vsperf.trafficgen.trafgen.rxcount),
which also drops them before the receiving stack, over a steady window after a warm-up.
The machine's load average is printed: numbers taken under load from other work say so.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import bench_vsgen_switches as switches  # the sibling benchmark (bench/ is the script's directory)
from bench_host import bench_host

from vsperf.config import load_settings
from vsperf.dpdk.eal import remove_runtime_dir
from vsperf.errors import TrafficGenError
from vsperf.executor import CommandLog, LocalExecutor, Process
from vsperf.host import netlink as netdev
from vsperf.host.host import Host
from vsperf.traffic import L3, Traffic
from vsperf.traffic.ports import GenPort
from vsperf.traffic.streams import directions
from vsperf.trafficgen.trafgen.agent_client import AgentClient, RxCounter
from vsperf.trafficgen.trafgen.config import packet_config
from vsperf.trafficgen.vsgen.backend import VsgenTrafficGenerator
from vsperf.trafficgen.vsgen.frames import FrameSpec, build_frame

TX_CPU = 0
WARMUP_S = 1.0
ACCURACY_POINTS = (0.10, 0.50, 0.90)
TARGET_VS_SOCKET_GENERATORS = 2.0
TARGET_VS_TESTPMD = 1.0
TARGET_RATE_ERROR = 0.005
IPERF_PAYLOAD_BYTES = 18  # 14 + 20 + 8 + 18 + 4 (FCS) = 64
DEPLOYMENTS = ("wire", "linux-bridge", "ovs")


@dataclass
class Env:
    """The veth pair (tx namespace -> rx namespace) and where the run keeps its files."""

    rid: str
    work: Path
    executor: LocalExecutor
    host: Host  # this machine, journaled: the generators' processes and files
    ns_tx: str = ""
    ns_rx: str = ""
    if_tx: str = ""
    if_rx: str = ""
    mac_tx: str = ""
    mac_rx: str = ""


def _ip(*argv: str, ns: str | None = None) -> None:
    full = ["ip", "netns", "exec", ns, "ip", *argv] if ns else ["ip", *argv]
    subprocess.run(full, check=True, capture_output=True)


def setup(env: Env) -> None:
    env.ns_tx, env.ns_rx = f"vsg{env.rid}t", f"vsg{env.rid}r"
    env.if_tx, env.if_rx = f"vsg{env.rid}0", f"vsg{env.rid}1"
    for ns in (env.ns_tx, env.ns_rx):
        _ip("netns", "add", ns)
        _ip("link", "set", "lo", "up", ns=ns)
    _ip("link", "add", env.if_tx, "netns", env.ns_tx, "type", "veth", "peer", "name", env.if_rx, "netns", env.ns_rx)
    _ip("addr", "add", "198.18.0.1/24", "dev", env.if_tx, ns=env.ns_tx)
    _ip("addr", "add", "198.18.0.2/24", "dev", env.if_rx, ns=env.ns_rx)
    _ip("link", "set", env.if_tx, "up", ns=env.ns_tx)
    _ip("link", "set", env.if_rx, "up", ns=env.ns_rx)
    env.mac_tx = netdev.link_mac(env.if_tx, env.ns_tx)
    env.mac_rx = netdev.link_mac(env.if_rx, env.ns_rx)


def teardown(env: Env) -> None:
    for ns in (env.ns_tx, env.ns_rx):
        if ns:
            subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True)


def _spawn(env: Env, argv: list[str], ns: str, name: str) -> Process:
    log = (env.work / f"{name}.log").open("ab")
    return env.executor.spawn(argv, netns=ns, stdout=log, stderr=subprocess.STDOUT)


def _stop(proc: Process) -> None:
    """SIGINT (the tools print their summary), then SIGTERM/SIGKILL, by PID only."""
    for sig, wait in ((signal.SIGINT, 3.0), (signal.SIGTERM, 2.0), (signal.SIGKILL, 2.0)):
        if proc.poll() is not None:
            return
        proc.send_signal(sig)
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def steady_rate(env: Env, seconds: float, start: Callable[[], Process],
                counter_delay_s: float = 0.0) -> float:
    """Frames/s counted at the receiver over `seconds` of steady traffic from `start()`."""
    proc = start()
    agent = AgentClient(env.host, env.ns_rx)
    agent.open()
    counter = RxCounter(agent, env.if_rx)
    try:
        time.sleep(counter_delay_s)
        counter.attach()
        time.sleep(WARMUP_S)
        c1, t1 = counter.read().test_frames(), time.monotonic()
        time.sleep(seconds)
        c2, t2 = counter.read().test_frames(), time.monotonic()
        if proc.poll() is not None:
            raise RuntimeError(f"pid {proc.pid} exited early ({proc.returncode}); see {env.work}")
        return (c2 - c1) / (t2 - t1)
    finally:
        _stop(proc)
        counter.detach()
        agent.close()


def bench_trafgen(env: Env, seconds: float) -> float:
    traffic = Traffic(bidir=False)
    direction = directions(traffic, _ports(env))[0]
    conf = env.work / "trafgen.cfg"
    conf.write_text(packet_config(traffic, direction))
    argv = ["taskset", "-c", str(TX_CPU), "trafgen", "--dev", env.if_tx, "--conf", str(conf), "-P", "1",
            "--no-sock-mem", "--notouch-irq"]
    return steady_rate(env, seconds, lambda: _spawn(env, argv, env.ns_tx, "trafgen"))


def _write_pcap(path: Path, frame: bytes, count: int) -> None:
    with path.open("wb") as out:
        out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i in range(count):
            out.write(struct.pack("<IIII", i // 1_000_000, i % 1_000_000, len(frame), len(frame)) + frame)


def _frame(env: Env) -> bytes:
    spec = FrameSpec(env.mac_tx, env.mac_rx, "198.18.0.1", "198.18.0.2", 3000, 3001, 64, run_tag=1)
    return build_frame(spec)


def bench_tcpreplay(env: Env, seconds: float) -> float:
    pcap = env.work / "frames.pcap"
    _write_pcap(pcap, _frame(env), 10_000)
    argv = ["taskset", "-c", str(TX_CPU), "tcpreplay", "-i", env.if_tx, "--topspeed", "--preload-pcap",
            "--loop", "0", "-q", str(pcap)]
    return steady_rate(env, seconds, lambda: _spawn(env, argv, env.ns_tx, "tcpreplay"))


def bench_iperf3(env: Env, seconds: float) -> float:
    server = _spawn(env, ["iperf3", "-s", "-1", "-B", "198.18.0.2"], env.ns_rx, "iperf3-server")
    time.sleep(0.3)
    argv = ["iperf3", "-c", "198.18.0.2", "-u", "-b", "0", "-l", str(IPERF_PAYLOAD_BYTES), "-A", str(TX_CPU),
            "-t", str(int(seconds + WARMUP_S + 3))]
    try:
        # The counter drops what it counts: it starts once the UDP test is set up.
        return steady_rate(env, seconds, lambda: _spawn(env, argv, env.ns_tx, "iperf3-client"), counter_delay_s=1.0)
    finally:
        _stop(server)


def bench_testpmd(env: Env, seconds: float) -> float:
    other = 1 - TX_CPU if (os.cpu_count() or 1) > 1 else TX_CPU  # testpmd's main lcore
    argv = ["dpdk-testpmd", "--no-huge", "-m", "1024", "--legacy-mem", "--no-pci", f"--file-prefix=vsg{env.rid}",
            "--vdev", f"net_af_xdp0,iface={env.if_tx}", "-l", f"{TX_CPU},{other}", "--main-lcore", str(other),
            "--", "--forward-mode=txonly", "--txpkts=60", "--auto-start", "--stats-period", "1",
            "--total-num-mbufs=16384", f"--eth-peer=0,{env.mac_rx}", "--nb-cores=1",
            "--tx-ip=198.18.0.1,198.18.0.2"]
    try:
        return steady_rate(env, seconds, lambda: _spawn(env, argv, env.ns_tx, "testpmd"), counter_delay_s=2.0)
    finally:
        remove_runtime_dir(f"vsg{env.rid}")  # DPDK leaves /var/run/dpdk/<prefix> behind on exit


def _ports(env: Env) -> tuple[GenPort, GenPort]:
    return (GenPort(env.ns_tx, env.if_tx, env.mac_tx, "198.18.0.1", env.mac_rx, "198.18.0.2"),
            GenPort(env.ns_rx, env.if_rx, env.mac_rx, "198.18.0.2", env.mac_tx, "198.18.0.1"))


def _vsgen(env: Env) -> VsgenTrafficGenerator:
    settings = load_settings(env={}).merged({"VSGEN_CPUS": [TX_CPU], "TRAFFICGEN_RESIDUAL_WAIT_S": 0.5}, "bench")
    gen = VsgenTrafficGenerator(settings, env.host)
    gen.check_prerequisites()
    gen.start(_ports(env))
    return gen


@dataclass(frozen=True)
class AccuracyPoint:
    """One paced vsgen trial of the rate-accuracy check."""

    requested_fps: float
    achieved_fps: float
    lossless: bool
    under_delivered: bool  # the trial's generator_under_delivery flag: the sender fell short
    cpu_s: float  # the transmit thread's CPU seconds in the trial
    error: str = ""  # the trial failed: why (the other points still run)

    @property
    def rate_error(self) -> float:
        return self.achieved_fps / self.requested_fps - 1

    def verdict(self) -> str:
        """'ok', 'over' (sent faster than asked: always a failure), 'under' (fell short: on a
        shared machine the thread may not have got the CPU; reported, not judged), 'failed'."""
        if self.error:
            return "failed"
        if self.rate_error > TARGET_RATE_ERROR:
            return "over"
        if self.under_delivered or self.rate_error < -TARGET_RATE_ERROR:
            return "under"
        return "ok"


def bench_vsgen(env: Env, seconds: float) -> tuple[float, list[AccuracyPoint]]:
    """vsgen's delivered maximum, then one paced trial at each of ACCURACY_POINTS of it."""
    traffic = Traffic(bidir=False, l3=L3(dstip="198.18.0.2"))
    gen = _vsgen(env)
    try:
        gen.burst(traffic, 100_000)  # warm-up (and the first run's XDP probe)
        probe = gen.burst(traffic, 1_000_000)
        frames = max(1_000_000, int(probe.tx_frames / probe.duration_s * seconds))
        burst = gen.burst(traffic, frames)
        delivered = burst.rx_frames / burst.duration_s
        assert gen.last_run is not None
        print(f"  vsgen path {gen.last_run.dirs[0].path}, tx thread CPU {gen.last_run.dirs[0].cpu_s:.2f} s "
              f"for {burst.duration_s:.2f} s")
        points = []
        for share in ACCURACY_POINTS:
            rate = share * delivered
            try:
                trial = gen.trial(traffic, rate, seconds)
            except TrafficGenError as exc:  # one point failing does not hide the others
                points.append(AccuracyPoint(rate, 0.0, False, True, 0.0, str(exc)[:200]))
                continue
            cpu_s = gen.last_run.dirs[0].cpu_s if gen.last_run is not None else 0.0
            points.append(AccuracyPoint(rate, trial.actual_tx_rate_fps, trial.rx_frames == trial.tx_frames,
                                        trial.under_delivered, cpu_s))
        return delivered, points
    finally:
        gen.stop()


def print_accuracy(points: list[AccuracyPoint], seconds: float) -> bool | None:
    """Prints each rate-accuracy point; True: all within the target, False: one sent too fast
    or failed, None: not judged (a point under-delivered: the thread did not get the CPU)."""
    if not points:
        print("rate accuracy: not measured (vsgen failed)")
        return False
    for point, share in zip(points, ACCURACY_POINTS, strict=True):
        head = f"vsgen at {share:.0%} of its maximum: requested {point.requested_fps:,.0f} fps, "
        verdict = point.verdict()
        if verdict == "failed":
            print(head + f"failed: {point.error}")
            continue
        note = {"ok": "", "over": " OVER the target",
                "under": f" UNDER-DELIVERED (transmit CPU {point.cpu_s:.2f} s of {seconds:g} s; not judged)"}
        print(head + f"achieved {point.achieved_fps:,.0f} fps, error {100 * point.rate_error:+.3f} % "
              f"(target within {100 * TARGET_RATE_ERROR:.1f} %){note[verdict]}"
              + ("" if point.lossless else ", frames lost"))
    verdicts = {p.verdict() for p in points}
    if verdicts & {"over", "failed"}:
        return False
    if "under" in verdicts:
        print("rate accuracy: not judged (under-delivered points: the machine was busy; rerun when quiet)")
        return None
    print("rate accuracy: every point within the target")
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="measurement window per generator")
    parser.add_argument("--skip", nargs="*", default=[],
                        help="generators or deployments to skip (trafgen, tcpreplay, ..., wire, linux-bridge, ovs)")
    parser.add_argument("--deployments-only", action="store_true",
                        help="only vsgen on the lab's deployments (1 and 2 transmit threads)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench_generators: needs root", file=sys.stderr)
        return 2
    if args.deployments_only:
        load = os.getloadavg()
        print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
        threads_ok = switches.bench_deployments([c for c in DEPLOYMENTS if c not in args.skip], args.seconds)
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        return 1 if threads_ok is False else 0
    work = Path(tempfile.mkdtemp(prefix="vsgen-bench-"))
    with bench_host(work) as host:
        return _main(args, Env(host.run_id, work, LocalExecutor(CommandLog(work / "commands.log")), host))


def _main(args: argparse.Namespace, env: Env) -> int:
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs"
          + ("  (the machine is busy: numbers taken under contention)" if load[0] > 0.5 else ""))
    others: dict[str, Callable[[Env, float], float]] = {
        "trafgen": bench_trafgen, "tcpreplay": bench_tcpreplay, "iperf3": bench_iperf3, "testpmd": bench_testpmd,
    }
    tools = {"trafgen": "trafgen", "tcpreplay": "tcpreplay", "iperf3": "iperf3", "testpmd": "dpdk-testpmd"}
    rates: dict[str, float] = {}
    try:
        setup(env)
        for name, run in others.items():
            if name in args.skip or shutil.which(tools[name]) is None:
                print(f"{name:>10}: skipped")
                continue
            try:
                rates[name] = run(env, args.seconds)
            except Exception as exc:  # one tool failing does not hide the others' numbers
                print(f"{name:>10}: failed: {exc}")
                continue
            print(f"{name:>10}: {rates[name] / 1e6:8.3f} Mfps delivered")
        try:
            vsgen, points = bench_vsgen(env, args.seconds)
            print(f"{'vsgen':>10}: {vsgen / 1e6:8.3f} Mfps delivered")
        except TrafficGenError as exc:  # the deployments below still run
            print(f"{'vsgen':>10}: failed: {exc}")
            vsgen, points = 0.0, []
    finally:
        teardown(env)
    cases = [c for c in DEPLOYMENTS if c not in args.skip]
    threads_ok = switches.bench_deployments(cases, args.seconds) if cases else True
    socket_best = max((rates[n] for n in ("trafgen", "tcpreplay", "iperf3") if n in rates), default=0.0)
    ok = True
    if socket_best:
        ratio = vsgen / socket_best
        ok &= ratio >= TARGET_VS_SOCKET_GENERATORS
        print(f"vsgen / best of trafgen, tcpreplay, iperf3: {ratio:.2f}x (target >= {TARGET_VS_SOCKET_GENERATORS}x)")
    if "testpmd" in rates and rates["testpmd"] > 0:
        ratio = vsgen / rates["testpmd"]
        ok &= ratio >= TARGET_VS_TESTPMD
        print(f"vsgen / testpmd txonly (af_xdp): {ratio:.2f}x (target >= {TARGET_VS_TESTPMD}x)")
    accuracy_ok = print_accuracy(points, args.seconds)
    ok &= accuracy_ok is not False
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f}; command log and tool logs in {env.work}")
    return 0 if ok and threads_ok is not False else 1


if __name__ == "__main__":
    sys.exit(main())
