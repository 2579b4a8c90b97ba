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

from vsperf.lab import netdev

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
    found += [f"dpdk runtime dir {p}" for p in Path("/var/run/dpdk").glob(f"{tag}*")]
    return found
