"""Pktgen-DPDK next to vsgen on the local lab's wire deployment (needs root and a pktgen).

    PKTGEN_BINARY=/path/to/pktgen PYTHONPATH=. .venv/bin/python bench/bench_pktgen.py [--seconds S]

The wire deployment is what `vsperf --mode trafficgen` uses: the generator's two ports joined
back to back by one veth pair, each end in a namespace of its own. Both generators run
through their vsperf backends, one after the other, on the same ports, unidirectional 64-byte
frames:
- the highest rate each delivers: a burst at full speed (pktgen: rate 100 % of the 10 Gbit/s
  link its af_packet ports report), frames received / transmit time;
- its rate accuracy at 10, 50 and 90 % of that maximum: a rate trial of S seconds, achieved
  transmit rate against the requested one, and whether every frame arrived.
Prints every number and the pktgen / vsgen ratios. pktgen runs two processes here (one per
namespace), each busy-polling its console, timer and port threads on this machine's CPUs:
the load average is printed, numbers taken under load say so.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vsperf.backends import build_registries
from vsperf.config.loader import load_settings
from vsperf.deploy.build import DeploymentSpec, build_deployment
from vsperf.executor import CommandLog
from vsperf.host.hosts import local_lab
from vsperf.host.workdir import new_run_id
from vsperf.search.measurer import TrialResult
from vsperf.traffic import L3, Traffic
from vsperf.trafficgen.base import TrafficGenerator
from vsperf.trafficgen.pktgen.backend import PktgenTrafficGenerator
from vsperf.trafficgen.vsgen.backend import VsgenTrafficGenerator

ACCURACY_POINTS = (0.10, 0.50, 0.90)
Point = tuple[float, TrialResult]


def measure(gen: TrafficGenerator, traffic: Traffic, seconds: float, probe_frames: int) -> tuple[float, float,
                                                                                                   list[Point]]:
    """(delivered max fps, transmitted fps of that burst, [(requested fps, trial)] at ACCURACY_POINTS)."""
    gen.burst(traffic, max(1000, probe_frames // 10))  # warm-up
    probe = gen.burst(traffic, probe_frames)
    frames = max(probe_frames, int(probe.tx_frames / probe.duration_s * seconds))
    burst = gen.burst(traffic, frames)
    delivered = burst.rx_frames / burst.duration_s
    points = [(share * delivered, gen.trial(traffic, share * delivered, seconds)) for share in ACCURACY_POINTS]
    return delivered, burst.actual_tx_rate_fps, points


def run_generator(name: str, make: Callable[[], TrafficGenerator], ports: Any, traffic: Traffic, seconds: float,
                  probe_frames: int) -> tuple[float, float, list[Point], str]:
    gen = make()
    gen.check_prerequisites()
    try:
        gen.start(ports)
        version = gen.version()
        delivered, sent, points = measure(gen, traffic, seconds, probe_frames)
    finally:
        gen.stop()
    print(f"{name:>7} {version}: {delivered:,.0f} fps delivered (burst transmitted at {sent:,.0f} fps)")
    for (rate, trial), share in zip(points, ACCURACY_POINTS, strict=True):
        error = trial.actual_tx_rate_fps / rate - 1
        print(f"{name:>7} at {share:.0%}: requested {rate:,.0f} fps, achieved {trial.actual_tx_rate_fps:,.0f} fps, "
              f"error {100 * error:+.3f} %, {trial.tx_frames:,} sent, {trial.rx_frames:,} received"
              f"{' [' + ', '.join(trial.flags) + ']' if trial.flags else ''}")
    return delivered, sent, points, version


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each rate trial and of the burst")
    parser.add_argument("--skip-vsgen", action="store_true", help="measure pktgen only")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench_pktgen: needs root", file=sys.stderr)
        return 2
    binary = os.environ.get("PKTGEN_BINARY") or shutil.which("pktgen")
    if not binary:
        print("bench_pktgen: no pktgen (set PKTGEN_BINARY or put pktgen on PATH)", file=sys.stderr)
        return 2
    run_id = new_run_id()
    work = Path(tempfile.mkdtemp(prefix=f"vsperf-{run_id}-"))
    hosts = local_lab(run_id, CommandLog(work / "commands.log"))
    settings: dict[str, Any] = dict(load_settings(env={}))
    settings.update(TRAFFICGEN_PKTGEN_BINARY=binary, TRAFFICGEN_RESIDUAL_WAIT_S=1.2)
    traffic = Traffic(bidir=False, l3=L3(dstip="198.18.0.2"))
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs"
          + ("  (the machine is busy: numbers taken under contention)" if load[0] > 0.5 else ""))
    results: dict[str, tuple[float, float, list[Point], str]] = {}
    registries = build_registries()
    deployment = build_deployment(DeploymentSpec.from_settings("wire", settings, registries), registries, hosts,
                                  traffic)
    gen_host = hosts.trafficgen
    with hosts, deployment:
        ports = deployment.gen_ports
        results["pktgen"] = run_generator(
            "pktgen", lambda: PktgenTrafficGenerator(settings, gen_host), ports, traffic, args.seconds, 50_000)
        if not args.skip_vsgen:
            results["vsgen"] = run_generator(
                "vsgen", lambda: VsgenTrafficGenerator(settings, gen_host), ports, traffic, args.seconds, 1_000_000)
    if "vsgen" in results:
        pk, vs = results["pktgen"], results["vsgen"]
        print(f"pktgen / vsgen delivered maximum: {pk[0] / vs[0]:.3f}x ({pk[0]:,.0f} / {vs[0]:,.0f} fps)")
        for i, share in enumerate(ACCURACY_POINTS):
            errors = [abs(r[2][i][1].actual_tx_rate_fps / r[2][i][0] - 1) * 100 for r in (pk, vs)]
            print(f"rate error at {share:.0%} of each one's maximum: pktgen {errors[0]:.3f} %, vsgen {errors[1]:.3f} %")
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f}; command log in {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
