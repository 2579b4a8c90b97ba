"""Where the TRex under test is, and what its tests share (root, a TRex built from source).

TRex is not packaged: its tests run the TRex named by TREX_BASE_DIR (its scripts directory, the
one holding t-rex-64 and _t-rex-64), or the one whose t-rex-64 is on PATH, with TRex's client
from the lbr-trex-client package (pip install 'vsperf[trex]'), and skip saying so otherwise.
docs/trafficgens.rst says how to build TRex.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
from pathlib import Path

import psutil
from conftest import lab_skip_reason

SKIP_MISSING = ("TRex is not installed: set TREX_BASE_DIR to a TRex build's scripts directory (with _t-rex-64) "
                "or put its t-rex-64 on PATH (docs/trafficgens.rst)")
SKIP_CLIENT = "TRex's Python client is not installed: pip install 'vsperf[trex]' (lbr-trex-client)"

# Short trials at low rates: 0.02 % of 2 x 10 Gbit/s at 64 B is 5,952 frames/s in all, far below what
# TRex sends on a veth here (~295 kframes/s), and what the switches forward without loss.
SHORT = {
    "TRAFFICGEN_DURATION": "1",
    "TRAFFICGEN_PKT_SIZES": "(64,)",
    "TRAFFICGEN_RESIDUAL_WAIT_S": "0.5",
    "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT": "0.02",
    "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT": "0.01",
}


def trex_base_dir() -> str | None:
    """The TRex under test: TREX_BASE_DIR, else the directory of t-rex-64 on PATH."""
    configured = os.environ.get("TREX_BASE_DIR")
    if configured:
        return configured
    found = shutil.which("t-rex-64")
    return str(Path(found).resolve().parent) if found else None


def trex_skip_reason() -> str | None:
    """Why TRex's tests cannot run here (None: they can)."""
    reason = lab_skip_reason({"ip": "iproute2"})
    if reason:
        return reason
    base = trex_base_dir()
    if base is None or not os.access(os.path.join(base, "_t-rex-64"), os.X_OK):
        return SKIP_MISSING
    if importlib.util.find_spec("lbr_trex_client") is None:
        return SKIP_CLIENT
    return None


def trex_params(**overrides: str) -> str:
    """--test-params for short trials with the TRex under test, with `overrides`."""
    values = {"TRAFFICGEN_TREX_BASE_DIR": str(trex_base_dir()), **SHORT, **overrides}
    return ";".join(f"{k}={v}" for k, v in values.items())


def trex_servers(run_id: str | None = None) -> dict[int, str]:
    """PID -> run id of the TRex servers vsperf started (their config lives in the run's
    directory: /tmp/vsperf-RUNID/trex/ on the local lab, /tmp/vsperf-RUNID-trex/ on a testbed)."""
    found: dict[int, str] = {}
    for proc in psutil.process_iter(["cmdline"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        match = re.search(r"_t-rex-64 .*--cfg /tmp/vsperf-(\w+)[/-]", cmd)
        if match and (run_id is None or match.group(1) == run_id):
            found[proc.pid] = match.group(1)
    return found


def trex_workers() -> list[int]:
    """PIDs of TRex client workers (whatever run started them)."""
    return [p.pid for p in psutil.process_iter(["cmdline"])
            if "vsperf.trafficgen.trex.worker" in " ".join(p.info["cmdline"] or [])]


def trial_lines(log_text: str) -> list[tuple[dict[int, tuple[int, int]], dict[int, tuple[int, int]]]]:
    """Each trial's per-stream and per-port (sent, received) counts, from the run's log."""
    trials = []
    for line in log_text.splitlines():
        if "TRex trial: " not in line:
            continue
        streams = {int(s): (int(t), int(r)) for s, t, r in re.findall(r"stream (\d+) sent (\d+) received (\d+)", line)}
        ports_part = line.split("; ports ", 1)[1]
        ports = {int(p): (int(t), int(r)) for p, t, r in re.findall(r"(\d+) sent (\d+) received (\d+)", ports_part)}
        trials.append((streams, ports))
    return trials
