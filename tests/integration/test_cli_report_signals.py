"""Signals during the report and a disk that fills during a run, sent to a real `vsperf` process
(and its process group) as a terminal, a CI runner or a container runtime sends them.

After each: exit 1, no traceback (a worker's included), results.json closed (an end time, never
"running") with what was measured, no temporary file of the report left, and every worker
process gone, checked by PID.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from cli_helpers import command, environment

pytestmark = pytest.mark.root  # the full-disk case mounts a tmpfs; all run in CI as root
RUN = ["phy2phy_tput", "back2back", "--trafficgen", "dummy", "--test-params", "TRAFFICGEN_PKT_SIZES=(64,128)",
       "--report-format", "rst,md,html,pdf"]


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _workers(vsperf: psutil.Process) -> set[int]:
    """The report's worker processes: forked copies of vsperf (same command line), at any depth."""
    with contextlib.suppress(psutil.Error):
        own = vsperf.cmdline()
        return {p.pid for p in vsperf.children(recursive=True) if _same(p, own)}
    return set()


def _same(proc: psutil.Process, cmdline: list[str]) -> bool:
    with contextlib.suppress(psutil.Error):
        return proc.cmdline() == cmdline
    return False


@contextlib.contextmanager
def vsperf_run(args: list[str], out: Path, stderr: Path) -> Iterator[subprocess.Popen[str]]:
    """`vsperf ARGS` in a session of its own (its PID is its process group's); killed at the end."""
    err = stderr.open("w")
    proc = subprocess.Popen(command(*args, "--results-dir", str(out)), env=environment(),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, text=True,
                            start_new_session=True)
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        err.close()


def _finished(out: Path) -> bool:
    with contextlib.suppress(OSError, ValueError):
        return bool(json.loads((out / "results.json").read_text())["status"] == "finished")
    return False


def _report_started(proc: subprocess.Popen[str], out: Path, timeout_s: float = 120) -> set[int]:
    """The workers once the report runs: results.json is closed, then the report forks them (a
    command's child shows vsperf's command line too, between its fork and its exec)."""
    vsperf = psutil.Process(proc.pid)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = _workers(vsperf) if _finished(out) else set()
        if found:
            return found
        assert proc.poll() is None, "vsperf ended before its report started"
        time.sleep(0.02)
    raise AssertionError("no report worker started")


def _signal(proc: subprocess.Popen[str], sig: signal.Signals, group: bool) -> None:
    (os.killpg if group else os.kill)(proc.pid, sig)


@pytest.mark.parametrize(
    ("signals", "group", "delay_s"),
    [
        ((signal.SIGTERM,), False, 0.0),
        ((signal.SIGHUP,), False, 0.5),
        ((signal.SIGTERM,), True, 0.2),
        ((signal.SIGINT,), True, 0.0),
        ((signal.SIGINT,), True, 1.0),
        ((signal.SIGINT, signal.SIGINT), True, 0.3),  # a second Ctrl-C while stopping
        ((signal.SIGTERM, signal.SIGINT, signal.SIGTERM), True, 0.1),
    ],
)
def test_a_signal_during_the_report(tmp_path: Path, signals: tuple[signal.Signals, ...], group: bool,
                                    delay_s: float) -> None:
    out = tmp_path / "run"
    with vsperf_run(RUN, out, tmp_path / "stderr") as proc:
        workers = _report_started(proc, out)
        time.sleep(delay_s)
        for sig in signals:
            workers |= _workers(psutil.Process(proc.pid))
            _signal(proc, sig, group)
            time.sleep(0.2)
        code = proc.wait(120)
        stderr = (tmp_path / "stderr").read_text()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(p) for p in workers):
            time.sleep(0.1)
        left = [p for p in workers if _alive(p)]
    assert left == [], f"report workers left running: {left}"
    assert code == 1, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert stderr.rstrip().splitlines()[-1] in (
        "vsperf: run interrupted; everything it created was removed; measured results kept",
        f"vsperf: interrupted: received {signals[0].name}")
    results = json.loads((out / "results.json").read_text())
    assert results["status"] == "finished" and results["finished_at"]  # closed before the report
    assert [len(t["results"]) for t in results["tests"]] == [2, 2]  # measured before the report
    assert not list(out.glob(".*.tmp")) and not list(out.glob("plots/.*.tmp"))


def test_workers_die_with_a_killed_vsperf(tmp_path: Path) -> None:
    with vsperf_run(RUN, tmp_path / "run", tmp_path / "stderr") as proc:
        workers = _report_started(proc, tmp_path / "run")
        time.sleep(0.3)
        workers |= _workers(psutil.Process(proc.pid))
        proc.kill()  # SIGKILL: no handler runs; the kernel tells the workers (PR_SET_PDEATHSIG)
        proc.wait(30)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(p) for p in workers):
            time.sleep(0.1)
        left = [p for p in workers if _alive(p)]
        for pid in left:  # only when the test fails: stop what it started, by PID
            os.kill(pid, signal.SIGKILL)
    assert left == []


def test_a_disk_that_fills_during_the_run(tmp_path: Path) -> None:
    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", str(mount)], check=True)
    try:
        out = mount / "run"
        args = ["phy2phy_tput", "back2back", "pvp_tput", "--trafficgen", "dummy", "--test-params",
                "TRAFFICGEN_PKT_SIZES=(64,128,256,512,1024,1280,1518)"]
        with vsperf_run(args, out, tmp_path / "stderr") as proc:
            deadline = time.monotonic() + 120
            while not list(out.glob("result_0_*.csv")):  # one frame size measured
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.005)
            with contextlib.suppress(OSError), (mount / "filler").open("wb") as fh:
                while True:  # another program fills the disk
                    fh.write(b"\0" * 65536)
                    fh.flush()
            code = proc.wait(120)
        stderr = (tmp_path / "stderr").read_text()
        results = json.loads((out / "results.json").read_text())
        listing = sorted(p.name for p in out.iterdir())
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
    assert code == 1 and "Traceback" not in stderr and "Logging error" not in stderr, stderr
    assert "run stopped: cannot write" in stderr and "No space left on device" in stderr
    assert results["status"] == "interrupted" and results["finished_at"]
    assert results["tests"] and len(results["tests"][0]["results"]) >= 1  # what was measured is kept
    assert ".results.json.reserve" not in listing
