"""Deploy and teardown times of the local lab, per deployment and vswitch (needs root).

    PYTHONPATH=. .venv/bin/python bench/bench_deploy.py [--repeat N] [--vswitch ovs ...]

Prints one line per (deployment, vswitch): median deploy and teardown seconds over N runs and
their sum, against the target (p2p deploy + teardown < 2 s). Every run uses a fresh run id
and checks that nothing of it is left afterwards.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from vsperf.backends import build_registries
from vsperf.config.loader import load_settings
from vsperf.deploy.build import DeploymentSpec, build_deployment
from vsperf.executor import CommandLog
from vsperf.host import netlink as netdev
from vsperf.host.hosts import local_lab
from vsperf.host.journal import DEFAULT_STATE_ROOT
from vsperf.host.workdir import new_run_id
from vsperf.traffic import Traffic

TARGET_P2P_S = 2.0


def one_run(deployment: str, vswitch: str) -> tuple[float, float]:
    """Deploy and tear down once; (deploy seconds, teardown seconds)."""
    run_id = new_run_id()
    work = Path(tempfile.mkdtemp(prefix=f"vsperf-{run_id}-"))
    try:
        hosts = local_lab(run_id, CommandLog(work / "commands.log"))
        settings = {**load_settings(env={}), "VSWITCH": vswitch}
        registries = build_registries()
        dep = build_deployment(DeploymentSpec.from_settings(deployment, settings, registries), registries, hosts,
                               Traffic())
        started = time.monotonic()
        with dep:
            deployed = time.monotonic()
        finished = time.monotonic()
        hosts.close()
        left = [n for n in netdev.list_netns() if n.startswith(f"vsp{run_id}")]
        if left or (DEFAULT_STATE_ROOT / run_id).exists():
            raise SystemExit(f"run {run_id} left {left or 'its state file'}")
        return deployed - started, finished - deployed
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--vswitch", nargs="+", default=["linux-bridge", "ovs"])
    parser.add_argument("--deployment", nargs="+", default=["p2p", "pvp"])
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench_deploy needs root (namespaces, switches)")
    print(f"{'deployment':<10} {'vswitch':<13} {'deploy s':>9} {'teardown s':>11} {'total s':>8}  target")
    for deployment in args.deployment:
        for vswitch in args.vswitch:
            runs = [one_run(deployment, vswitch) for _ in range(args.repeat)]
            deploy = statistics.median(r[0] for r in runs)
            teardown = statistics.median(r[1] for r in runs)
            total = deploy + teardown
            target = (f"< {TARGET_P2P_S:g} s: {'ok' if total < TARGET_P2P_S else 'MISSED'}"
                      if deployment == "p2p" else "")
            print(f"{deployment:<10} {vswitch:<13} {deploy:>9.3f} {teardown:>11.3f} {total:>8.3f}  {target}")


if __name__ == "__main__":
    main()
