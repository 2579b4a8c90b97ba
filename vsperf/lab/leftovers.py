"""Finding and removing what killed vsperf runs left behind.

A run is a leftover when its state file's owner (PID + start time) is no longer running: the
PID is gone, or belongs to a process that started at another time. Runs whose owner still
runs (another vsperf working right now) are never touched. Besides the state files, nothing
is guessed: a namespace that merely looks like ours but is not recorded stays where it is,
and is only reported.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from vsperf.context import orphaned_work_dirs
from vsperf.dpdk.eal import DPDK_RUNTIME_ROOT
from vsperf.executor import Executor
from vsperf.lab import netdev
from vsperf.lab.names import TAG_PREFIX, is_tagged
from vsperf.lab.process import is_same_process
from vsperf.lab.release import ResourceOps, SystemOps, release_all
from vsperf.lab.state import DEFAULT_STATE_ROOT, STATE_FILE, RunState

log = logging.getLogger(__name__)


def find_leftover_runs(root: Path = DEFAULT_STATE_ROOT) -> tuple[list[RunState], list[str]]:
    """State of every run under `root` whose owner is gone, and problems with unreadable files."""
    runs: list[RunState] = []
    problems: list[str] = []
    if not root.is_dir():
        return runs, problems
    for path in sorted(root.glob(f"*/{STATE_FILE}")):
        try:
            state = RunState.load(path)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        if is_same_process(state.owner.pid, state.owner.start_time):
            continue  # a live vsperf: its resources are in use
        runs.append(state)
    return runs, problems


def cleanup_leftovers(
    executor: Executor,
    *,
    root: Path = DEFAULT_STATE_ROOT,
    ops: ResourceOps | None = None,
    list_namespaces: bool = True,
    dpdk_root: Path = DPDK_RUNTIME_ROOT,
) -> list[str]:
    """Remove the resources of every run whose vsperf process is gone; describe each removal.

    `executor` is the run's executor (kept for symmetry with the other lab entry points: every
    removal here goes through netlink and signals, which need no external command).
    """
    del executor
    ops = ops or SystemOps()
    removed: list[str] = []
    runs, problems = find_leftover_runs(root)
    for problem in problems:
        log.warning("ignoring %s", problem)
    for state in runs:
        done, errors = release_all(state, ops)
        removed.extend(f"run {state.run_id}: {what}" for what in done)
        for error in errors:
            log.warning("leftover of run %s not removed: %s", state.run_id, error)
        # The DPDK runtime directories of the run's generators on this machine (their file prefix
        # carries the run's tag: pktgen's vsp<id>pgN, TRex's vsp<id>t); the processes are gone now.
        for runtime in sorted(dpdk_root.glob(f"{TAG_PREFIX}{state.run_id}*")):
            shutil.rmtree(runtime, ignore_errors=True)
            done.append(f"DPDK runtime directory {runtime}")
            removed.append(f"run {state.run_id}: DPDK runtime directory {runtime}")
        if not done and not errors:
            # Everything was gone already; the state file itself was the leftover.
            removed.append(f"run {state.run_id}: empty state file {state.path}")
    for work_dir in orphaned_work_dirs():
        shutil.rmtree(work_dir, ignore_errors=True)
        removed.append(f"work directory {work_dir}")
    if list_namespaces:
        _report_unrecorded(root)
    return removed


def _report_unrecorded(root: Path) -> None:
    """Log namespaces that look like ours but no state file lists (never removed)."""
    recorded: set[str] = set()
    for path in root.glob(f"*/{STATE_FILE}") if root.is_dir() else []:
        try:
            state = RunState.load(path)
        except ValueError:
            continue
        recorded.update(r.name for r in state.resources() if r.kind == "netns")
    for name in netdev.list_netns():
        if is_tagged(name) and name not in recorded:
            log.warning(
                "network namespace %s looks like vsperf's but no run records it; not removed "
                "(delete it with `ip netns delete %s` if it is yours)",
                name,
                name,
            )
