"""QEMU guests as VNFs: image build time, boot time to forwarding, pvp_tput next to the netns VNF.

    PYTHONPATH=. .venv/bin/python bench/bench_qemu.py [--max-rate-percent P] [--duration S] [--only SUBSTR]

1. `vsperf guest-image build --rebuild` into a scratch directory: the cold build time (apt
   download of the kernel package included), target under 60 s.
2. pvp_tput through the `vsperf` command for each guest interface and loopback, and for the
   VNFs without a VM (netns, testpmd-vhost) on the same switches: throughput (zero-loss, binary
   search with short trials up to --max-rate-percent of 10 GbE at 64 B) and, for the guests, the
   time from QEMU's start to the guest's "forwarding" marker (target under 20 s under TCG).
   Ratios are each row's throughput over the VNF without a VM on the same switch (netns;
   testpmd-vhost on ovs-dpdk), measured in this run.

Under TCG (software emulation) the guests' numbers are functional, not performance: the script
prints the accelerator each guest ran with and the machine's load average.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET_BUILD_S = 60.0
TARGET_BOOT_S = 20.0
NO_VM = ("netns", "testpmd-vhost")


@dataclass(frozen=True)
class Case:
    """One pvp_tput run: a switch, a VNF and its loopback."""

    vswitch: str
    vnf: str
    loopback: str

    @property
    def label(self) -> str:
        return f"{self.vswitch:<12} {self.vnf:<16} {self.loopback:<12}"


CASES = (
    Case("linux-bridge", "netns", "linux_bridge"),
    Case("linux-bridge", "qemu-virtio-net", "linux_bridge"),
    Case("linux-bridge", "qemu-virtio-net", "testpmd"),
    Case("ovs", "netns", "linux_bridge"),
    Case("ovs", "qemu-virtio-net", "linux_bridge"),
    Case("ovs-dpdk", "testpmd-vhost", "testpmd"),
    Case("ovs-dpdk", "qemu-vhost-user", "testpmd"),
    Case("ovs-dpdk", "qemu-vhost-user", "linux_bridge"),
)


def vsperf(*args: str, timeout_s: float = 900) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRAFFIC", "VSWITCH", "VNF", "GUEST"))}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "vsperf", *args], capture_output=True, text=True, env=env,
                          timeout=timeout_s)


def build_time(scratch: Path) -> tuple[float, str]:
    started = time.monotonic()
    proc = vsperf("guest-image", "build", "--rebuild", "--output", str(scratch / "images"))
    took = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"guest-image build failed: {proc.stderr.strip()[-500:]}")
    return took, proc.stdout.strip().splitlines()[0]


def run_case(case: Case, scratch: Path, max_rate: float, duration_s: float) -> dict[str, Any]:
    out = scratch / f"{case.vswitch}-{case.vnf}-{case.loopback}"
    params = {
        "TRAFFICGEN_DURATION": str(duration_s), "TRAFFICGEN_PKT_SIZES": "(64,)",
        "TRAFFICGEN_RESIDUAL_WAIT_S": "0.5", "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT": str(max_rate),
        "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT": str(round(max_rate / 64, 4)),
        "GUEST_LOOPBACK": f"['{case.loopback}']", "REPORT_FORMATS": "['rst']",
    }
    started = time.monotonic()
    proc = vsperf("pvp_tput", "--vswitch", case.vswitch, "--vnf", case.vnf, "--results-dir", str(out),
                  "--test-params", ";".join(f"{k}={v}" for k, v in params.items()))
    row: dict[str, Any] = {"case": case, "wall_s": time.monotonic() - started}
    try:
        test = json.loads((out / "results.json").read_text())["tests"][0]
    except (OSError, ValueError, IndexError):
        row["error"] = proc.stderr.strip()[-300:] or "no results"
        return row
    if test["status"] != "passed":
        row["error"] = str(test["error"])[:300]
        return row
    row["fps"] = float(test["results"][0]["metrics"]["throughput_rx_fps"])
    vnfs = [c for c in test["components"] if c["role"] == "vnf"]
    details = vnfs[0]["details"] if vnfs else {}
    row["accel"] = details.get("accel", "-")
    row["boot_s"] = float(details["boot_to_forwarding_s"]) if "boot_to_forwarding_s" in details else None
    row["nic"] = details.get("nic", "")
    row["vhost_net"] = details.get("vhost_net", "")
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-rate-percent", type=float, default=1.0,
                        help="search ceiling, %% of 10 GbE at 64 B (1 %% = 148.8 kframes/s)")
    parser.add_argument("--duration", type=float, default=2.0, help="seconds per trial")
    parser.add_argument("--only", default="", help="run the cases whose label contains this")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench_qemu needs root (namespaces, switches, QEMU)", file=sys.stderr)
        return 2
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="bench-qemu-") as tmp:
        scratch = Path(tmp)
        took, line = build_time(scratch)
        verdict = "meets" if took < TARGET_BUILD_S else "MISSES"
        print(f"image build (cold, --rebuild): {took:.1f} s ({verdict} the {TARGET_BUILD_S:.0f} s target): {line}")
        rows = [run_case(c, scratch, args.max_rate_percent, args.duration) for c in CASES if args.only in c.label]
    # Each switch's VNF without a VM: netns (kernel ports), or testpmd-vhost on OVS-DPDK's vhost-user.
    baseline = {r["case"].vswitch: r["fps"] for r in rows if r["case"].vnf in NO_VM and "fps" in r}
    print(f"\npvp_tput, 64 B, zero loss, trials {args.duration:g} s, ceiling {args.max_rate_percent:g} % of 10 GbE")
    print(f"{'vswitch':<12} {'vnf':<16} {'loopback':<12} {'rx fps':>10} {'vs no-VM':>9} {'boot s':>7} "
          f"{'accel':>5}  notes")
    for row in rows:
        case = row["case"]
        if "error" in row:
            print(f"{case.label} {'failed':>10}  {row['error']}")
            continue
        base = baseline.get(case.vswitch)
        ratio = f"{row['fps'] / base:8.2f}x" if base else f"{'-':>9}"
        boot = f"{row['boot_s']:7.1f}" if row["boot_s"] is not None else f"{'-':>7}"
        notes = ", ".join(n for n in (row["nic"], f"vhost-net {row['vhost_net']}" if row["vhost_net"] else "") if n)
        print(f"{case.label} {row['fps']:10,.0f} {ratio} {boot} {row['accel']:>5}  {notes}")
    boots = [r["boot_s"] for r in rows if r.get("boot_s") is not None]
    if boots:
        verdict = "meets" if max(boots) < TARGET_BOOT_S else "MISSES"
        print(f"\nboot to forwarding: {min(boots):.1f}-{max(boots):.1f} s ({verdict} the {TARGET_BOOT_S:.0f} s target)")
    if any(r.get("accel") == "tcg" for r in rows):
        print("guests ran under TCG (software emulation): their numbers are functional, not performance")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
