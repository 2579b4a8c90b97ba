"""The otg backend through vsgen's OTG server next to vsgen direct, on the wire (needs root).

    PYTHONPATH=. .venv/bin/python bench/bench_otg.py [--seconds S]

One run, one deployment: the local lab's "wire" (what `--mode trafficgen` deploys: the two
generator ports joined back to back by a veth pair), 64-byte frames, one direction, transmit
thread on CPU 0 for both. First vsgen direct, then `vsperf otg-server` (a subprocess: real HTTP,
real snappi) driven by the otg backend on the same ports. For each: the highest delivered rate
(a burst of about --seconds at full speed, rx frames / transmit time), then rate trials at 10,
50 and 90 % of that rate: achieved rate error and loss, and the wall time each trial took
(the OTG round trips, the polling and the server's own residual wait are the difference).
Prints every number and the ratios otg / vsgen; the machine's load average says whether other
work shared the two CPUs.
"""

from __future__ import annotations

import argparse
import os
import secrets
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from vsperf.backends import build_registries
from vsperf.config.loader import load_settings
from vsperf.deploy.build import DeploymentSpec, build_deployment
from vsperf.executor import CommandLog
from vsperf.host.hosts import local_lab
from vsperf.search.measurer import TrialResult
from vsperf.traffic import Traffic
from vsperf.trafficgen.base import TrafficGenerator
from vsperf.trafficgen.otg.backend import OtgTrafficGenerator
from vsperf.trafficgen.vsgen.backend import VsgenTrafficGenerator

TX_CPU = 0
RESIDUAL_S = 0.5
ACCURACY_POINTS = (0.10, 0.50, 0.90)
Point = tuple[float, float, float, bool, float]  # requested, achieved, error, lossless, wall s


def measure(gen: TrafficGenerator, traffic: Traffic, seconds: float) -> tuple[float, list[Point]]:
    """Highest delivered rate (burst), then (requested, achieved, error, lossless, wall time)."""
    gen.burst(traffic, 100_000)  # warm-up (and vsgen's first XDP probe)
    probe = gen.burst(traffic, 1_000_000)
    frames = max(1_000_000, int(probe.tx_frames / probe.duration_s * seconds))
    burst = gen.burst(traffic, frames)
    delivered = burst.rx_frames / burst.duration_s
    points: list[Point] = []
    for share in ACCURACY_POINTS:
        rate = share * delivered
        start = time.monotonic()
        trial: TrialResult = gen.trial(traffic, rate, seconds)
        wall = time.monotonic() - start
        points.append((rate, trial.actual_tx_rate_fps, trial.actual_tx_rate_fps / rate - 1,
                       trial.rx_frames == trial.tx_frames, wall))
    return delivered, points


def start_server(env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "vsperf", "otg-server", "--listen", "127.0.0.1:0", "--netns-prefix", "vsp",
         "--cpus", str(TX_CPU), "--residual-wait", str(RESIDUAL_S)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True,
    )
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        line = proc.stdout.readline() if sel.select(timeout=60) else ""
    if "serving OTG on " not in line:
        stop_server(proc)
        raise RuntimeError(f"vsperf otg-server did not start: {line!r}")
    return proc, line.split(" on ", 1)[1].split()[0]


def stop_server(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def show(name: str, delivered: float, points: list[Point]) -> None:
    print(f"{name:>6}: highest delivered rate {delivered / 1e6:.3f} Mfps")
    for (rate, achieved, error, lossless, wall), share in zip(points, ACCURACY_POINTS, strict=True):
        print(f"{name:>6} at {share:>4.0%}: requested {rate:>11,.0f} fps, achieved {achieved:>11,.0f} fps, "
              f"error {100 * error:+.3f} %, {'no loss' if lossless else 'frames lost'}, trial took {wall:.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="burst length and trial duration")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench_otg: needs root", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="vsperf-bench-otg-"))
    rid = secrets.token_hex(3)
    hosts = local_lab(rid, CommandLog(work / "commands.log"))
    traffic = Traffic(bidir=False)
    settings = load_settings(env={}).merged(
        {"VSGEN_CPUS": [TX_CPU], "TRAFFICGEN_RESIDUAL_WAIT_S": RESIDUAL_S}, "bench_otg")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRAFFIC", "VSWITCH", "VNF", "VSGEN"))}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs"
          + ("  (the machine is busy: numbers taken under contention)" if load[0] > 0.5 else ""))
    results: dict[str, tuple[float, list[Point]]] = {}
    registries = build_registries()
    deployment = build_deployment(DeploymentSpec.from_settings("wire", settings, registries), registries, hosts,
                                  traffic)
    with hosts, deployment:
        ports = deployment.gen_ports
        with VsgenTrafficGenerator(settings, hosts.trafficgen) as vsgen:
            vsgen.check_prerequisites()
            vsgen.start(ports)
            results["vsgen"] = measure(vsgen, traffic, args.seconds)
            print(f"vsgen: {vsgen.version()}")
        server, url = start_server(env)
        try:
            otg_settings: Any = settings.merged({"TRAFFICGEN_OTG_LOCATION": url}, "bench_otg")
            with OtgTrafficGenerator(otg_settings, hosts.trafficgen) as otg:
                otg.check_prerequisites()
                otg.start(ports)
                results["otg"] = measure(otg, traffic, args.seconds)
                print(f"otg:   {otg.version()} at {url}")
        finally:
            stop_server(server)
    for name, (delivered, points) in results.items():
        show(name, delivered, points)
    (vsgen_max, vsgen_points), (otg_max, otg_points) = results["vsgen"], results["otg"]
    print(f"otg / vsgen highest delivered rate: {otg_max / vsgen_max:.3f}x")
    for share, direct, served in zip(ACCURACY_POINTS, vsgen_points, otg_points, strict=True):
        print(f"at {share:.0%}: |error| otg {100 * abs(served[2]):.3f} % vs vsgen {100 * abs(direct[2]):.3f} %; "
              f"trial wall time otg / vsgen {served[4] / direct[4]:.2f}x")
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f}; command log in {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
