"""The exit-code promise, checked from outside as a user would see it (README.md): `vsperf` run in a
subprocess, in a fresh directory, in a session of its own, with a bounded address space.

`expect_refusal` asserts, for one invocation: the exit code (2 for usage and configuration
errors), exactly one non-blank line on stderr, `vsperf: error: ...`, no traceback; nothing
created (the directory it ran in is as it was, no run id was issued, no namespace or work
directory of a run, no process of its session left); within TIME_BOUND_S, in MEMORY_BOUND_BYTES.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil
from cli_helpers import command, environment

from vsperf.host import netlink as netdev

# Bounds a refused input must stay within (typical: 1-3 s and ~80 MB on an idle machine; CI is shared).
TIME_BOUND_S = 60.0
MEMORY_BOUND_BYTES = 1 << 30  # address space: an alias bomb or /dev/zero would need many GiB
DUMMY = ("--trafficgen", "dummy", "--report-format", "rst")
RUN_ID_RE = re.compile(r"vsperf run ([0-9a-f]{6})")


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BOUND_BYTES, MEMORY_BOUND_BYTES))


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _session(sid: int) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error, OSError):
            if os.getsid(proc.pid) == sid and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
    return found


@dataclass(frozen=True)
class Outcome:
    """What one invocation did."""

    pid: int
    code: int
    stdout: str
    stderr: str
    elapsed_s: float
    left_processes: list[int]

    @property
    def lines(self) -> list[str]:
        """stderr's non-blank lines."""
        return [line for line in self.stderr.splitlines() if line.strip()]


def invoke(args: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None,
           timeout_s: float = TIME_BOUND_S) -> Outcome:
    """Run `vsperf ARGS` in `cwd` in a new session with a bounded address space; a process of
    that session still there afterwards is listed, then killed (by PID)."""
    # HOME: ~ and LOG_DIR's default stay inside `cwd`; no SSH agent unless the case gives one
    full_env = {k: v for k, v in environment().items() if k != "SSH_AUTH_SOCK"}
    full_env.update({"HOME": str(cwd), **(env or {})})
    started = time.monotonic()
    proc = subprocess.Popen(command(*args), cwd=cwd, env=full_env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=_bounded)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        shown = " ".join(args)[:200]
        raise AssertionError(f"vsperf {shown} ran over {timeout_s:.0f} s; stderr: {err[-500:]}") from None
    elapsed = time.monotonic() - started
    left = _session(proc.pid)
    for stray in left:
        with contextlib.suppress(psutil.Error):
            stray.kill()
    return Outcome(proc.pid, proc.returncode, out, err, elapsed, [p.pid for p in left])


def expect_refusal(args: Sequence[str], cwd: Path, *needles: str, code: int = 2,
                   env: Mapping[str, str] | None = None) -> str:
    """Run `vsperf ARGS` in `cwd` and assert the promise (see the module's doc); returns the line."""
    before, namespaces = _tree(cwd), set(netdev.list_netns())
    work_dirs = set(Path("/tmp").glob("vsperf-*"))
    outcome = invoke(args, cwd, env)
    shown = f"vsperf {' '.join(args)[:300]}\nstderr: {outcome.stderr[-2000:]}"
    assert "Traceback" not in outcome.stderr, shown
    assert outcome.code == code, shown
    assert len(outcome.lines) == 1, shown
    line = outcome.lines[0]
    assert line.startswith("vsperf: error: "), shown
    for needle in needles:
        assert needle in line, f"{needle!r} not in {line!r}"
    run_ids = RUN_ID_RE.findall(outcome.stdout + outcome.stderr)
    assert run_ids == [], f"a run was started: {shown}"
    assert outcome.left_processes == [], shown
    assert _tree(cwd) == before, f"files created in {cwd}: {shown}"
    new_namespaces = set(netdev.list_netns()) - namespaces
    assert not [n for n in new_namespaces if any(r in n for r in run_ids)], shown
    owned = [d for d in set(Path("/tmp").glob("vsperf-*")) - work_dirs if _owned(d, outcome.pid)]
    assert owned == [], shown
    assert outcome.elapsed_s < TIME_BOUND_S
    return line


def _owned(work_dir: Path, pid: int) -> bool:
    """A run's work directory names its owner's PID (vsperf.host.workdir): was it this invocation's?"""
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        return int(json.loads((work_dir / "owner.json").read_text())["pid"]) == pid
    return False
