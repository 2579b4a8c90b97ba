"""Helpers of the integration tests that run the `vsperf` command as a user does (root): start it
with a clean environment, read its results.json, and list what a run left on the machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import psutil

from vsperf.host import netlink as netdev

ROOT = Path(__file__).resolve().parents[2]


def command(*args: str) -> list[str]:
    """The argv of `vsperf ARGS` run from this checkout."""
    return [sys.executable, "-m", "vsperf", *args]


def environment() -> dict[str, str]:
    """The test's environment without the settings a developer may have exported (TRAFFIC*, ...)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRAFFIC", "VSWITCH", "VNF", "GUEST"))}
    env["PYTHONPATH"] = str(ROOT)
    return env


def vsperf(*args: str, timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
    """Run `vsperf ARGS` to its end and capture its output."""
    return subprocess.run(command(*args), capture_output=True, text=True, env=environment(), timeout=timeout_s)


def params_text(base: Mapping[str, str], **overrides: str) -> str:
    """--test-params text: `base` settings with `overrides`."""
    return ";".join(f"{k}={v}" for k, v in {**base, **overrides}.items())


def results(out: Path) -> dict[str, Any]:
    """The run's results.json."""
    data: dict[str, Any] = json.loads((out / "results.json").read_text())
    return data


def leftovers(run_id: str) -> list[str]:
    """Namespaces, processes (QEMU carries the tag in -name), state, work and DPDK runtime dirs of a run."""
    tag = f"vsp{run_id}"
    found = [f"netns {n}" for n in netdev.list_netns() if n.startswith(tag)]
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmdline = " ".join(proc.info.get("cmdline") or [])
        if tag in cmdline or f"vsperf-{run_id}" in cmdline:
            found.append(f"process {proc.info['pid']}: {cmdline[:100]}")
    for path in (Path("/run/vsperf") / run_id, Path("/tmp") / f"vsperf-{run_id}"):
        if path.exists():
            found.append(str(path))
    found += [f"run dir {p}" for p in Path("/tmp").glob(f"vsperf-{run_id}-*")]
    found += [f"dpdk runtime dir {p}" for p in Path("/var/run/dpdk").glob(f"{tag}*")]
    return found


# A small CPU load (VSPERF's phy2phy_cpu_load runs 100 % on all cores but 4): 20 % on one worker,
# around 1 s continuous trials, so that the shared machine stays usable.
SMALL_LOAD_TEST = """
- Name: {name}
  Deployment: p2p
  Description: LTD.CPU.RFC2544.0PacketLoss, a small load
  Load: {{tool: stress-ng, load: 20, reserved: 1, pattern: c}}
  Parameters:
    TRAFFIC: {{traffic_type: rfc2544_continuous, frame_rate: 1}}
"""


def small_load_conf(tmp_path: Path, name: str) -> Path:
    """A conf file (for --conf-file) adding test `name`, with SMALL_LOAD_TEST's load, to the catalog."""
    tests = tmp_path / "load_tests.yaml"
    tests.write_text(SMALL_LOAD_TEST.format(name=name))
    conf = tmp_path / "load.yaml"
    conf.write_text(f"TEST_CASE_FILES: [{tests}]\n")
    return conf
