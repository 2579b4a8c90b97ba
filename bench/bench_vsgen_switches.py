"""vsgen against the local lab's switches, XDP live frames next to AF_PACKET (needs root).

    PYTHONPATH=. .venv/bin/python bench/bench_vsgen_switches.py [--seconds S] [--vswitch NAME ...]

For each case (the wire: `--mode trafficgen`, linux-bridge, ovs) one one-way trial of 64-byte
frames at 100 % of line rate with one flow (the sweep_bw benchmark of seeds/003), once with
VSGEN_PATH=xdp and once with VSGEN_PATH=packet, run through the `vsperf` command as a user does.
Prints the frames per second vsgen sent and the tester and the DUT's ports received, and the ratio
xdp / packet per case (the issue: against the Linux bridge vsgen fell back to AF_PACKET; the lab
now turns GRO on at the bridge's veth ends, so XDP frames are taken). The load average is printed:
the machine is shared, numbers taken under load say so.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--vswitch", nargs="*", default=["wire", "linux-bridge", "ovs"])
    opts = parser.parse_args()
    if os.geteuid() != 0:
        print("needs root", file=sys.stderr)
        return 2
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
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
