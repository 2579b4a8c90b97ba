"""vsgen against the local lab's switches (needs root): XDP live frames next to AF_PACKET, and
one transmit thread next to two.

    PYTHONPATH=. .venv/bin/python bench/bench_vsgen_switches.py [--seconds S] [--vswitch NAME ...] [--threads]

For each case (the wire: `--mode trafficgen`, linux-bridge, ovs) one one-way trial of 64-byte
frames at 100 % of line rate with one flow (the sweep_bw benchmark of seeds/003), once with
VSGEN_PATH=xdp and once with VSGEN_PATH=packet, run through the `vsperf` command as a user does.
Prints the frames per second vsgen sent and the tester and the DUT's ports received, and the ratio
xdp / packet per case (the issue: against the Linux bridge vsgen fell back to AF_PACKET; the lab
now turns GRO on at the bridge's veth ends, so XDP frames are taken).

`--threads` (also bench_generators.py's second part): each case with VSGEN_TX_THREADS 1 and 2
(8 flows, LAB_PORT_QUEUES=2; the wire WIRE_ROUNDS times, alternately, with VSGEN_CPUS=[0,1]:
the default leaves out VSWITCH_PMD_CPU_MASK's CPUs even when no switch runs), every run, then
the cases side by side. Target: two threads deliver >= 1.8x one thread on the wire, judged
only when the threads got >= 90 % of the CPU seconds they could use (the transmit CPU seconds
of vsperf's debug log): on a shared machine a thread gets what other work leaves, and a ratio
taken without the second CPU is printed as not judged. The load average is printed with every
run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vsperf.executor import CommandLog, LocalExecutor
from vsperf.trafficgen.vsgen.build import locate_engine

ROOT = Path(__file__).resolve().parents[1]
THREAD_FLOWS = 8  # streams: spread over the transmit threads (a stream is never split)
WIRE_ROUNDS = 3
TARGET_TWO_THREADS = 1.8
CPU_SHARE_TO_JUDGE = 0.9  # the threads' CPU seconds over threads x trial seconds needed to judge it
CASE = """- Name: bench_vsgen_64
  Deployment: p2p
  Description: vsgen one way, 64 B, one flow, 100 % of line rate
  Parameters:
    TRAFFIC: {traffic_type: sweep_bw, bidir: false}
    TRAFFICGEN_PKT_SIZES: [64]
"""


def run(case: str, path: str, seconds: float, work: Path, flows: int = 1, extra: str = "",
        tag: str = "") -> dict[str, float | None]:
    """One vsperf run (`extra`: more --test-params; `tag` names its results dir); the sweep point's
    rates (Mpps)."""
    out = work / f"{case}-{path}{tag}"
    params = (f"TEST_CASE_FILES=['{work / 'case.yaml'}'];VSGEN_PATH={path};SWEEP_FLOWS=[{flows}];"
              f"SWEEP_DURATION_S={seconds};REPORT_FORMATS=('rst',)" + (f";{extra}" if extra else ""))
    if case == "wire":  # --mode trafficgen sends the TRAFFIC settings, not a test case
        params += ";TRAFFIC={'traffic_type': 'sweep_bw', 'bidir': False};TRAFFICGEN_PKT_SIZES=(64,)"
        where = ["--mode", "trafficgen"]
    else:
        where = ["bench_vsgen_64", "--vswitch", case]
    args = [sys.executable, "-m", "vsperf", *where, "--trafficgen", "vsgen", "--results-dir", str(out),
            "--test-params", params]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    if proc.returncode != 0:
        raise RuntimeError(f"{case} {path}: {proc.stderr.strip()[-500:]}")
    (point,) = json.loads((out / "results.json").read_text())["tests"][0]["results"][0]["details"]["points"]
    return {"tx": point["tx_mpps"], "rx": point["rx_tester_mpps"], "dut": point["rx_dut_mpps"]}


def _transmit_cpu(out: Path) -> tuple[int, float]:
    """Frames sent and transmit threads' CPU seconds of a vsperf run's vsgen trials (its debug log):
    on a shared machine the CPU the threads got says how much of the rate was theirs to take."""
    frames, cpu_s = 0, 0.0
    log = out / "overall.log"
    for line in log.read_text().splitlines() if log.exists() else []:
        m = re.search(r"vsgen direction \d+: .*?(\d+) of \d+ frames.*transmit CPU ([0-9.]+) s", line)
        if m:
            frames, cpu_s = frames + int(m.group(1)), cpu_s + float(m.group(2))
    return frames, cpu_s


@dataclass(frozen=True)
class DeploymentRun:
    """One vsperf run of vsgen on a deployment (bench_vsgen_switches.run) with its CPU use."""

    case: str
    threads: int
    tx_mpps: float
    rx_mpps: float
    dut_mpps: float | None  # the wire has no DUT
    cpu_s: float  # the transmit threads' CPU seconds (vsperf's debug log)
    frames: int  # frames the threads sent
    load: float  # 1-minute load average after the run


def _fifo_engine(work: Path, priority: int) -> Path:
    """A wrapper running vsgen's engine (built on first use, as vsperf does) at SCHED_FIFO
    `priority`: its threads then take their CPUs from other work on a shared machine."""
    engine = locate_engine(LocalExecutor(CommandLog(work / "build.log"))).path
    wrapper = work / "vsgen-engine-fifo"
    wrapper.write_text(f"#!/bin/sh\nexec chrt -f {priority} {shlex.quote(str(engine))} \"$@\"\n")
    wrapper.chmod(0o755)
    return wrapper


def _deployment_run(case: str, threads: int, seconds: float, work: Path, tag: str,
                    engine: Path | None = None) -> DeploymentRun | str:
    extra = f"VSGEN_TX_THREADS={threads};LAB_PORT_QUEUES=2" + (f";VSGEN_ENGINE={engine}" if engine else "")
    if case == "wire":  # no switch busy-polls a CPU: both are the generator's
        extra += ";VSGEN_CPUS=[0,1]"
    try:
        r = run(case, "xdp", seconds, work, THREAD_FLOWS, extra, tag)
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        return str(exc)[:200]
    frames, cpu_s = _transmit_cpu(work / f"{case}-xdp{tag}")
    return DeploymentRun(case, threads, r["tx"] or 0.0, r["rx"] or 0.0, r["dut"], cpu_s, frames, os.getloadavg()[0])


def bench_deployments(cases: list[str], seconds: float, fifo: int = 0) -> bool | None:
    """vsgen with 1 and 2 transmit threads on the lab's deployments, through `vsperf`: every run,
    then the cases side by side. Returns the wire's 2-thread target: True met, False missed with
    the CPUs the threads needed, None not judged (the threads did not get their CPUs: load).
    `fifo` > 0: the engine runs at that SCHED_FIFO priority (said in the output)."""
    if fifo:
        print(f"vsgen's engine at SCHED_FIFO priority {fifo} (chrt -f): other work cannot take its CPUs")
    print(f"{'case':<14}{'threads':>8}{'tx Mpps':>9}{'rx tester':>11}{'rx DUT':>9}{'tx CPU s':>10}"
          f"{'Mfps/CPU s':>12}{'load':>7}")
    best: dict[tuple[str, int], DeploymentRun] = {}
    with tempfile.TemporaryDirectory(prefix="bench-vsgen-threads-") as tmp:
        work = Path(tmp)
        (work / "case.yaml").write_text(CASE)
        engine = _fifo_engine(work, fifo) if fifo else None
        for case in cases:
            for i in range(WIRE_ROUNDS if case == "wire" else 1):
                for threads in (1, 2):
                    run = _deployment_run(case, threads, seconds, work, f"-t{threads}-{i}", engine)
                    if isinstance(run, str):
                        print(f"{case:<14}{threads:>8}  failed: {run}")
                        continue
                    dut = "-" if run.dut_mpps is None else f"{run.dut_mpps:.3f}"
                    per_cpu = f"{run.frames / run.cpu_s / 1e6:.3f}" if run.cpu_s else "-"
                    print(f"{case:<14}{threads:>8}{run.tx_mpps:>9.3f}{run.rx_mpps:>11.3f}{dut:>9}"
                          f"{run.cpu_s:>10.2f}{per_cpu:>12}{run.load:>7.2f}")
                    if run.rx_mpps > (best[(case, threads)].rx_mpps if (case, threads) in best else -1.0):
                        best[(case, threads)] = run
    return print_side_by_side(cases, best, seconds)


def print_side_by_side(cases: list[str], best: dict[tuple[str, int], DeploymentRun], seconds: float) -> bool | None:
    """The cases in columns (best run of each); the wire's 2-thread / 1-thread verdict."""
    print(f"\nvsgen, 64 B, {THREAD_FLOWS} flows, one way, best run per cell (Mpps received by the tester)")
    print(f"{'':<30}" + "".join(f"{c:>14}" for c in cases))

    def row(label: str, cell: Callable[[str], str]) -> None:
        print(f"{label:<30}" + "".join(f"{cell(c):>14}" for c in cases))

    def rx(case: str, threads: int) -> str:
        run = best.get((case, threads))
        return f"{run.rx_mpps:.3f}" if run else "failed"

    def ratio(case: str) -> str:
        one, two = best.get((case, 1)), best.get((case, 2))
        return f"{two.rx_mpps / one.rx_mpps:.2f}x" if one and two and one.rx_mpps else "-"

    def cpu(case: str) -> str:
        one, two = best.get((case, 1)), best.get((case, 2))
        return f"{one.cpu_s:.2f} / {two.cpu_s:.2f}" if one and two else "-"

    row("1 thread", lambda c: rx(c, 1))
    row("2 threads", lambda c: rx(c, 2))
    row("2 / 1", ratio)
    row(f"tx CPU s (1 / 2), of {seconds:g} s", cpu)
    row("load average (2 threads)", lambda c: f"{best[(c, 2)].load:.2f}" if (c, 2) in best else "-")
    one, two = best.get(("wire", 1)), best.get(("wire", 2))
    if "wire" not in cases:
        return True
    if not one or not two or not one.rx_mpps:
        print("wire: 2 threads / 1 thread: no result")
        return False
    ratio_value = two.rx_mpps / one.rx_mpps
    # Judged only when the threads had their CPUs: on a shared machine a thread gets what the
    # other work leaves, and a ratio measured without the second CPU says nothing about vsgen.
    if one.cpu_s < CPU_SHARE_TO_JUDGE * seconds or two.cpu_s < CPU_SHARE_TO_JUDGE * 2 * seconds:
        print(f"wire: 2 threads / 1 thread = {ratio_value:.2f}x, NOT JUDGED against {TARGET_TWO_THREADS}x: the "
              f"threads got {one.cpu_s:.2f} and {two.cpu_s:.2f} CPU s of {seconds:g} and {2 * seconds:g} "
              f"(under {CPU_SHARE_TO_JUDGE:.0%}: other work on the machine)")
        return None
    met = ratio_value >= TARGET_TWO_THREADS
    print(f"wire: 2 threads / 1 thread = {ratio_value:.2f}x (target >= {TARGET_TWO_THREADS}x: "
          f"{'met' if met else 'MISSED'}; the threads had their CPUs)")
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--vswitch", nargs="*", default=["wire", "linux-bridge", "ovs"])
    parser.add_argument("--threads", action="store_true", help="1 and 2 transmit threads instead of xdp/packet")
    parser.add_argument("--fifo", type=int, default=0, metavar="PRIO",
                        help="with --threads: run vsgen's engine at this SCHED_FIFO priority (chrt -f)")
    opts = parser.parse_args()
    if os.geteuid() != 0:
        print("needs root", file=sys.stderr)
        return 2
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    if opts.threads:
        return 1 if bench_deployments(opts.vswitch, opts.seconds, opts.fifo) is False else 0
    print(f"{'case':<14}{'path':<8}{'tx Mpps':>9}{'rx tester':>11}{'rx DUT':>9}")
    with tempfile.TemporaryDirectory(prefix="bench-vsgen-") as tmp:
        work = Path(tmp)
        (work / "case.yaml").write_text(CASE)
        for case in opts.vswitch:
            rates = {path: run(case, path, opts.seconds, work) for path in ("xdp", "packet")}
            for path, r in rates.items():
                dut = "-" if r["dut"] is None else f"{r['dut']:.3f}"  # the wire has no DUT
                print(f"{case:<14}{path:<8}{r['tx'] or 0.0:>9.3f}{r['rx'] or 0.0:>11.3f}{dut:>9}")
            xdp, packet = rates["xdp"]["rx"] or 0.0, rates["packet"]["rx"] or 0.0
            ratio = xdp / packet if packet else float("inf")
            print(f"{case:<14}xdp / packet received: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
