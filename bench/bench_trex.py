"""TRex next to vsgen on the same local lab deployment and frame sizes (needs root and a TRex).

    TREX_BASE_DIR=/path/to/trex/scripts PYTHONPATH=. .venv/bin/python bench/bench_trex.py \
        [--seconds S] [--sizes 64,512,1518] [--deployment wire|p2p] [--vswitch linux-bridge]

One deployment for both (`wire`: the generator's two ports joined back to back, what `vsperf --mode
trafficgen` uses; `p2p`: through the switch), both generator ends in one namespace (TRex's server
owns both ports). Each generator runs through its vsperf backend, one after the other, on the same
ports, unidirectional frames of each size:
- delivered frames/s: a burst at full speed lasting about S seconds, frames received / transmit time;
- CPU seconds per million frames: the CPU time (user + system) of the generator's own processes
  (TRex: its server and vsperf's client worker; vsgen: its engine) during that burst, per million
  frames sent (the kernel's work for the veths is not in it: it is the same for both);
- rate accuracy: a rate trial of S seconds at half the delivered maximum, achieved against requested.
Prints every number and the TRex / vsgen ratios. TRex runs low_end (one core for everything) as on
any 2-CPU machine; the load average is printed: numbers taken under load say so.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import psutil

from vsperf.backends import build_registries
from vsperf.config.loader import load_settings
from vsperf.deploy.build import DeploymentSpec, build_deployment
from vsperf.executor import CommandLog
from vsperf.host.hosts import local_lab
from vsperf.host.workdir import new_run_id
from vsperf.traffic import L3, Traffic
from vsperf.trafficgen.base import TrafficGenerator
from vsperf.trafficgen.trex.backend import TrexTrafficGenerator
from vsperf.trafficgen.vsgen.backend import VsgenTrafficGenerator


@dataclass(frozen=True)
class Point:
    """One generator at one frame size."""

    delivered_fps: float
    cpu_s_per_mframe: float
    accuracy_error_percent: float
    lost_at_half: int


def own_cpu_s(exclude: set[int]) -> float:
    """CPU seconds (user + system) of this process's descendants but `exclude` (the generator's
    processes: TRex's server and client worker, vsgen's engine; vsperf itself is not counted)."""
    total = 0.0
    for child in psutil.Process().children(recursive=True):
        if child.pid in exclude:
            continue
        try:
            times = child.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            continue
    return total


def measure(gen: TrafficGenerator, traffic: Traffic, seconds: float, helpers: set[int]) -> Point:
    gen.burst(traffic, 2000)  # warm-up
    probe = gen.burst(traffic, 50_000)
    frames = max(50_000, int(probe.tx_frames / probe.duration_s * seconds))
    before = own_cpu_s(helpers)
    burst = gen.burst(traffic, frames)
    cpu_s = own_cpu_s(helpers) - before
    delivered = burst.rx_frames / burst.duration_s
    half = gen.trial(traffic, delivered / 2, seconds)
    return Point(delivered, cpu_s / (burst.tx_frames / 1e6),
                 100 * (half.actual_tx_rate_fps / (delivered / 2) - 1), half.loss_frames)


def run(name: str, gen: TrafficGenerator, ports: Any, sizes: list[int], seconds: float) -> dict[int, Point]:
    # Processes that are not the generator's: the switch's daemons, started before it.
    helpers = {p.pid for p in psutil.Process().children(recursive=True)}
    gen.check_prerequisites()
    points: dict[int, Point] = {}
    try:
        gen.start(ports)
        version = gen.version()
        for size in sizes:
            traffic = Traffic(frame_size_bytes=size, bidir=False, l3=L3(dstip="198.18.0.2"))
            points[size] = p = measure(gen, traffic, seconds, helpers)
            print(f"{name:>6} {version} {size:>5} B: {p.delivered_fps:>11,.0f} fps delivered, "
                  f"{p.cpu_s_per_mframe:6.2f} CPU s per million frames, rate error at half "
                  f"{p.accuracy_error_percent:+.3f} %, {p.lost_at_half} lost")
    finally:
        gen.stop()
    return points


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="length of the burst and of the rate trial")
    parser.add_argument("--sizes", default="64,512,1518", help="frame sizes, comma-separated")
    parser.add_argument("--deployment", default="wire", choices=("wire", "p2p"))
    parser.add_argument("--vswitch", default="linux-bridge", help="the switch of --deployment p2p")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench_trex: needs root", file=sys.stderr)
        return 2
    base = os.environ.get("TREX_BASE_DIR") or (
        str(Path(found).resolve().parent) if (found := shutil.which("t-rex-64")) else "")
    if not base:
        print("bench_trex: no TRex (set TREX_BASE_DIR to its scripts directory or put t-rex-64 on PATH)",
              file=sys.stderr)
        return 2
    sizes = [int(s) for s in args.sizes.split(",")]
    run_id = new_run_id()
    work = Path(tempfile.mkdtemp(prefix=f"vsperf-{run_id}-"))
    hosts = local_lab(run_id, CommandLog(work / "commands.log"))
    settings: dict[str, Any] = dict(load_settings(env={}))
    settings.update(TRAFFICGEN="trex", TRAFFICGEN_TREX_BASE_DIR=base, TRAFFICGEN_RESIDUAL_WAIT_S=0.5,
                    TRAFFICGEN_TREX_LATENCY_PPS=0, VSWITCH=args.vswitch)
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs"
          + ("  (the machine is busy: numbers taken under contention)" if load[0] > 0.5 else ""))
    registries = build_registries()
    # TRex owns both ports in one process: both generator ends in one namespace (vsgen runs there too)
    spec = replace(DeploymentSpec.from_settings(args.deployment, settings, registries), one_gen_netns=True)
    deployment = build_deployment(spec, registries, hosts, Traffic(frame_size_bytes=max(sizes), bidir=False))
    gen_host = hosts.trafficgen
    with hosts, deployment:
        ports = deployment.gen_ports
        trex = run("trex", TrexTrafficGenerator(settings, gen_host), ports, sizes, args.seconds)
        vsgen = run("vsgen", VsgenTrafficGenerator(settings, gen_host), ports, sizes, args.seconds)
    for size in sizes:
        t, v = trex[size], vsgen[size]
        print(f"{size:>5} B: TRex / vsgen delivered {t.delivered_fps / v.delivered_fps:.3f}x "
              f"({t.delivered_fps:,.0f} / {v.delivered_fps:,.0f} fps); CPU per frame "
              f"{t.cpu_s_per_mframe / v.cpu_s_per_mframe:.2f}x ({t.cpu_s_per_mframe:.2f} / "
              f"{v.cpu_s_per_mframe:.2f} s per million)")
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f}; command log in {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
