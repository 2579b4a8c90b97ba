"""vsgen's frame mixes, latency histograms and warm start, measured side by side (needs root).

    PYTHONPATH=. .venv/bin/python bench/bench_vsgen_mix.py [--repeats N] [--skip wire|warm]

1. On the wire (one veth pair between two namespaces, one transmit thread, XDP live frames):
   vsgen's sending rate at full speed with IMIX (64:7, 570:4, 1518:1, interleaved) against 64 B
   only and 1518 B only, in frames/s and Gb/s on the wire (frames and their 20 bytes of preamble
   and gap), each the median of N bursts of BURST_S of traffic, the three sizes taken in turn.
2. The cost of the latency histogram every frame goes into: the 64 B rate with the histogram
   against without it (the engine's hist=0), alternately; target: within 5 %.
3. The warm start against OVS (userspace datapath) at 64 B, through `vsperf` as a user runs it:
   the loss in the first 100 ms of a trial (TRIALS_100MS continuous trials of 0.1 s each at 90 %
   of the NDR found without a warm start, a residual wait apart, as a search's trials are), and
   the NDR of phy2phy_tput (binary search), N times each, with and without a warm start
   (WARM: a 0.1 s lead-in at 10 % of the trial's rate), alternately.
The machine's load average is printed with every part: numbers taken under load say so.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_generators import Env, _ports, setup, teardown
from bench_host import bench_host

from vsperf.config import load_settings
from vsperf.traffic import L3, Traffic
from vsperf.traffic.mix import parse_mix
from vsperf.trafficgen.vsgen.backend import VsgenTrafficGenerator

ROOT = Path(__file__).resolve().parents[1]
BURST_S = 0.5  # traffic of one measured burst at full speed (frames = rate x this)
HIST_TARGET = 0.05
WARM = "{'mode': 'lead-in', 'duration_s': 0.1, 'rate_percent': 10}"
TRIALS_100MS = 8
IMIX = parse_mix("IMIX")
OVS_COMMON = {"TRAFFICGEN_PKT_SIZES": "(64,)", "TRAFFICGEN_RESIDUAL_WAIT_S": 0.5, "HISTORY": "False",
              "TRAFFICGEN_DURATION": 2, "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT": 10.0,
              "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT": 0.02}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def wire_gbps(fps: float, mean_bytes: float) -> float:
    return fps * (mean_bytes + 20) * 8 / 1e9


def _burst(gen: VsgenTrafficGenerator, traffic: Traffic, frames: int) -> tuple[float, float]:
    """One burst at full speed: its rate, and its frames per CPU second of the transmit thread
    (which also runs the receiver's XDP program: the veth hands the frame to its peer's NAPI on the
    sending CPU), the figure other work on the machine disturbs least."""
    trial = gen.burst(traffic, frames)
    if trial.rx_frames != trial.tx_frames:
        print(f"    (the receiver lost {trial.tx_frames - trial.rx_frames} of {trial.tx_frames} frames)")
    assert gen.last_run is not None
    cpu_s = sum(d.cpu_s for d in gen.last_run.dirs)
    return trial.actual_tx_rate_fps, trial.tx_frames / cpu_s if cpu_s > 0 else 0.0


def wire_part(repeats: int) -> None:
    with tempfile.TemporaryDirectory(prefix="vsperf-bench-mix-") as tmp, bench_host(Path(tmp)) as host:
        env = Env(host.run_id, Path(tmp), host.executor, host)
        try:
            setup(env)
            settings = load_settings(env={}).merged({"VSGEN_CPUS": [0], "VSGEN_PATH": "xdp",
                                                     "TRAFFICGEN_RESIDUAL_WAIT_S": 0.2}, "bench")
            gen = VsgenTrafficGenerator(settings, host)
            with gen:
                gen.start(_ports(env))
                base_traffic = Traffic(bidir=False, l3=L3(dstip="198.18.0.2"))
                cases: dict[str, Traffic] = {"64 B": base_traffic.with_frame_size(64),
                                             "IMIX": base_traffic.with_frame_size(IMIX),
                                             "1518 B": base_traffic.with_frame_size(1518)}
                first = {k: _burst(gen, t, 100_000)[0] for k, t in cases.items()}  # sizes the bursts
                rates: dict[str, list[float]] = {k: [] for k in cases}
                per_cpu: dict[str, list[float]] = {k: [] for k in cases}
                for _ in range(repeats):
                    for name, traffic in cases.items():
                        rate, fpc = _burst(gen, traffic, max(10_000, round(first[name] * BURST_S)))
                        rates[name].append(rate)
                        per_cpu[name].append(fpc)
                print(f"\n1. vsgen on the wire, full speed, one thread, XDP live frames (load {load()})")
                print("   median and best of the bursts (the best: the burst other work disturbed least)")
                print(f"{'':<8}{'Mfps':>8}{'Gb/s':>8}{'vs 64 B':>9}{'best Mfps':>11}{'Gb/s':>8}{'vs 64 B':>9}"
                      "   per burst (Mfps)")
                base, top = statistics.median(rates["64 B"]), max(rates["64 B"])
                for name, values in rates.items():
                    fps, best = statistics.median(values), max(values)
                    mean = cases[name].mean_frame_bytes
                    print(f"{name:<8}{fps / 1e6:>8.3f}{wire_gbps(fps, mean):>8.2f}{fps / base:>9.2f}"
                          f"{best / 1e6:>11.3f}{wire_gbps(best, mean):>8.2f}{best / top:>9.2f}   "
                          + " ".join(f"{v / 1e6:.3f}" for v in values))
                print("   frames per CPU second of the transmit thread (tx and the receiver's XDP program), median:")
                cpu_base = statistics.median(per_cpu["64 B"])
                for name, values in per_cpu.items():
                    fpc = statistics.median(values)
                    print(f"{name:<8}{fpc / 1e6:>8.3f} M/CPU-s{fpc / cpu_base:>9.2f} vs 64 B   "
                          f"{wire_gbps(fpc, cases[name].mean_frame_bytes):.2f} Gb/s per CPU")
                hist_part(gen, cases["64 B"], repeats, round(base * BURST_S))
        finally:
            teardown(env)


def hist_part(gen: VsgenTrafficGenerator, traffic: Traffic, repeats: int, frames: int) -> None:
    found: dict[bool, list[float]] = {True: [], False: []}
    cpu: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(repeats):
        for keep in (True, False):
            gen.keep_histogram = keep
            rate, fpc = _burst(gen, traffic, frames)
            found[keep].append(rate)
            cpu[keep].append(fpc)
    gen.keep_histogram = True
    print(f"\n2. the latency histogram's cost, 64 B at full speed (load {load()})")
    for how, values, unit in (("rate, median", found, "Mfps"), ("rate, best", found, "Mfps"),
                              ("per CPU-s, median", cpu, "M/CPU-s")):
        pick = max if "best" in how else statistics.median
        on, off = pick(values[True]), pick(values[False])
        cost = 1 - on / off
        verdict = "met" if cost <= HIST_TARGET else "NOT met"
        print(f"   {how:<18} with the histogram {on / 1e6:.3f} {unit}, without {off / 1e6:.3f}: cost "
              f"{100 * cost:+.1f} % (target <= {100 * HIST_TARGET:g} %: {verdict})")
    print("   per burst with:    " + " ".join(f"{v / 1e6:.3f}" for v in found[True]))
    print("   per burst without: " + " ".join(f"{v / 1e6:.3f}" for v in found[False]))


def vsperf(args: list[str], params: dict[str, Any], out: Path) -> dict[str, Any]:
    text = ";".join(f"{k}={v}" for k, v in params.items())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRAFFIC", "VSWITCH", "VNF"))}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-m", "vsperf", *args, "--vswitch", "ovs", "--results-dir", str(out),
                           "--test-params", text], capture_output=True, text=True, env=env, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"vsperf exited {proc.returncode}: {proc.stderr.strip()[-800:]}")
    test: dict[str, Any] = json.loads((out / "results.json").read_text())["tests"][0]
    return test


def _spread(values: list[float]) -> float:
    return 100 * (max(values) - min(values)) / max(values) if max(values) else 0.0


def warm_part(repeats: int) -> None:
    with tempfile.TemporaryDirectory(prefix="vsperf-bench-warm-") as tmp:
        work = Path(tmp)
        ndr: dict[str, list[float]] = {"cold": [], "warm": []}
        for i in range(repeats):
            for name in ndr:
                params = {**OVS_COMMON, **({"TRAFFICGEN_WARM_START": WARM} if name == "warm" else {})}
                test = vsperf(["phy2phy_tput"], params, work / f"ndr-{name}-{i}")
                ndr[name].append(float(test["results"][0]["metrics"]["tx_rate_fps"]))
                print(f"   NDR {name} {i + 1}: {ndr[name][-1]:,.0f} fps (load {load()})", flush=True)
        rate_percent = 0.9 * statistics.median(ndr["cold"]) / (2 * 14_880_952.38) * 100
        spec = work / "first100ms.yaml"
        spec.write_text("- Name: first_100ms\n  Deployment: p2p\n  Description: 0.1 s continuous trials\n"
                        "  Parameters:\n    TRAFFIC: {traffic_type: rfc2544_continuous, "
                        f"frame_rate: {rate_percent:.6f}}}\n")
        loss: dict[str, list[float]] = {"cold": [], "warm": []}
        for i in range(repeats):
            for name in loss:
                params = {**OVS_COMMON, "TRAFFICGEN_DURATION": 0.1,
                          "TRAFFICGEN_PKT_SIZES": "(" + "64," * TRIALS_100MS + ")",
                          **({"TRAFFICGEN_WARM_START": WARM} if name == "warm" else {})}
                test = vsperf(["first_100ms", "-f", str(spec)], params, work / f"first-{name}-{i}")
                loss[name] += [100.0 * r["trials"][0]["loss_frames"] / max(1, r["trials"][0]["tx_frames"])
                               for r in test["results"]]
        print(f"\n3. warm start ({WARM}) against OVS, 64 B (load {load()})")
        for name in ("cold", "warm"):
            print(f"   {name:<5} NDR median {statistics.median(ndr[name]):>12,.0f} fps, spread "
                  f"{_spread(ndr[name]):5.1f} %  per repeat: " + " ".join(f"{v:,.0f}" for v in ndr[name]))
        print(f"   NDR warm / cold: {statistics.median(ndr['warm']) / statistics.median(ndr['cold']):.3f}")
        for name in ("cold", "warm"):
            values = loss[name]
            print(f"   {name:<5} loss in the first 100 ms at {rate_percent:.3f} % of line rate: mean "
                  f"{statistics.mean(values):.3f} %, median {statistics.median(values):.3f} %, max "
                  f"{max(values):.3f} %, {sum(1 for v in values if v > 0)} of {len(values)} trials lost frames")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip", action="append", default=[], choices=("wire", "warm"))
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("bench_vsgen_mix needs root (namespaces, XDP, OVS); run it as root")
    if "wire" not in args.skip:
        wire_part(args.repeats)
    if "warm" not in args.skip:
        warm_part(max(1, args.repeats // 2 + 1))


if __name__ == "__main__":
    main()
