"""A test's load (stress-ng) on the local lab, when vsperf is killed with SIGKILL during it (root).

stress-ng runs in a session of its own, so a SIGKILL of vsperf leaves it running. It is in the
run's journal (/run/vsperf/RUNID/journal.json) from the moment it starts: the next run that
deploys the lab stops it (and its workers) by PID and start time, and nothing of either run
is left."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import psutil
import pytest
from cli_helpers import command, environment, leftovers, small_load_conf, vsperf
from conftest import lab_skip_reason

from vsperf.executor import LocalExecutor
from vsperf.host.journal import DEFAULT_STATE_ROOT, JOURNAL_FILE, Journal
from vsperf.host.proc import local_stat, same_local_process
from vsperf.host.release import release

pytestmark = pytest.mark.root

# Two frame sizes of 2 s each: the load runs around both, long enough to be killed during it.
PARAMS = "TRAFFICGEN_PKT_SIZES=(64,1518);TRAFFICGEN_DURATION=2;TRAFFICGEN_RESIDUAL_WAIT_S=0.3"
NEXT_PARAMS = "TRAFFICGEN_PKT_SIZES=(64,);TRAFFICGEN_DURATION=1;TRAFFICGEN_RESIDUAL_WAIT_S=0.3"
STARTED = re.compile(r"stress-ng load started \(pid (\d+)\)")


@pytest.fixture(autouse=True)
def _lab() -> None:
    reason = lab_skip_reason({"ip": "iproute2", "trafgen": "netsniff-ng", "stress-ng": "stress-ng"})
    if reason:
        pytest.skip(reason)


def _started_pid(out: Path) -> int:
    log = out / "overall.log"
    found = STARTED.search(log.read_text() if log.exists() else "")
    return int(found.group(1)) if found else 0


def _recorded_pids(run_id: str) -> list[int]:
    data = json.loads((DEFAULT_STATE_ROOT / run_id / JOURNAL_FILE).read_text())
    return [e["pid"] for e in data["entries"] if e["kind"] == "process" and e["name"] == "stress-ng"]


def test_the_next_run_stops_the_load_of_a_sigkilled_run(tmp_path: Path) -> None:
    killed = tmp_path / "killed"
    proc = subprocess.Popen(
        command("vIl_cpu_load", "--vswitch", "linux-bridge", "--trafficgen", "trafgen", "--conf-file",
                str(small_load_conf(tmp_path, "vIl_cpu_load")), "--results-dir", str(killed), "--test-params", PARAMS),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True, env=environment(), cwd=tmp_path,
    )
    pid, start, run_id = 0, 0, ""
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None and not pid:
            pid = _started_pid(killed)
            time.sleep(0.1)
        assert pid, f"no load started (vsperf exit {proc.poll()})"
        stat = local_stat(pid)
        start = stat.start_ticks if stat else 0
        run_id = json.loads((killed / "results.json").read_text())["run_id"]
        assert _recorded_pids(run_id) == [pid]  # in the journal while it runs
        proc.kill()  # SIGKILL of vsperf alone: no teardown at all
        proc.wait(timeout=30)
        time.sleep(0.5)
        assert same_local_process(pid, start)  # its own session: still running
        workers = [c.pid for c in psutil.Process(pid).children(recursive=True)]
        assert workers, "stress-ng has its workers"

        nxt = tmp_path / "next"
        done = vsperf("phy2phy_cont", "--mode", "trafficgen", "--trafficgen", "trafgen", "--results-dir", str(nxt),
                      "--test-params", NEXT_PARAMS)
        assert done.returncode == 0, done.stderr[-2000:]
        overall = (nxt / "overall.log").read_text()
        assert f"removed leftover of a killed run: run {run_id}: process stress-ng (pid {pid})" in overall
        assert not same_local_process(pid, start)
        assert not any(psutil.pid_exists(w) and psutil.Process(w).name().startswith("stress-ng") for w in workers)
        assert leftovers(run_id) == []
        assert leftovers(json.loads((nxt / "results.json").read_text())["run_id"]) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        # Only when the test failed before the next run cleaned up: the run's lab by its own journal.
        journal = DEFAULT_STATE_ROOT / run_id / JOURNAL_FILE
        if run_id and journal.exists():
            release(Journal.load(journal), {"local": LocalExecutor()})
