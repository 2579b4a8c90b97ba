"""Removing recorded resources: the one code path for teardown and for leftover cleanup.

Resources are removed newest first (a process before the namespace it runs in, a link before
its namespace), each one tolerant of being gone already. Only what a state file records is
touched, and a process only when its PID still belongs to the process that was recorded.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Protocol

from vsperf.lab import netdev
from vsperf.lab.names import TAG_PREFIX
from vsperf.lab.process import process_start_time, stop_pid
from vsperf.lab.state import Resource, RunState

log = logging.getLogger(__name__)


class ResourceOps(Protocol):
    """How resources are removed (the real system, or a fake in unit tests)."""

    def stop_process(self, pid: int, start_time: float) -> bool:
        """Stop the process if it is still the recorded one; True when it was running."""
        ...

    def delete_link(self, name: str, netns: str | None) -> bool:
        """Delete the interface; True when it existed."""
        ...

    def delete_netns(self, name: str) -> bool:
        """Delete the namespace; True when it existed."""
        ...

    def remove_dir(self, path: str) -> bool:
        """Remove the directory tree; True when it existed."""
        ...


class SystemOps:
    """Removes resources on this machine."""

    def stop_process(self, pid: int, start_time: float) -> bool:
        return stop_pid(pid, start_time, timeout_s=5.0)

    def delete_link(self, name: str, netns: str | None) -> bool:
        return netdev.delete_link(name, netns)

    def delete_netns(self, name: str) -> bool:
        # Whatever still runs inside a namespace vsperf created is vsperf's (a generator or
        # loopback the owner never got to stop): stop it, or it would outlive its interfaces.
        for pid in netdev.netns_pids(name):
            start = process_start_time(pid)
            if start is not None:
                stop_pid(pid, start, timeout_s=2.0)
        return netdev.delete_netns(name)

    def remove_dir(self, path: str) -> bool:
        target = Path(path)
        if not target.exists():
            return False
        shutil.rmtree(target, ignore_errors=True)
        return True


def _safe_to_remove(resource: Resource, run_id: str) -> bool:
    """Refuse anything a state file could name by mistake (or by tampering) but we never create."""
    if resource.kind in ("netns", "link"):
        return resource.name.startswith(TAG_PREFIX + run_id)
    if resource.kind == "dir":
        path = Path(resource.name)
        return path.is_absolute() and len(path.parts) >= 3 and any(run_id in part for part in path.parts)
    return resource.kind == "process" and resource.pid > 1 and resource.start_time > 0


def release(resource: Resource, ops: ResourceOps, run_id: str) -> bool:
    """Remove one resource; True when it existed and was removed."""
    if not _safe_to_remove(resource, run_id):
        log.warning("not removing %s: not something run %s creates", resource.describe(), run_id)
        return False
    if resource.kind == "process":
        return ops.stop_process(resource.pid, resource.start_time)
    if resource.kind == "link":
        return ops.delete_link(resource.name, resource.netns)
    if resource.kind == "netns":
        return ops.delete_netns(resource.name)
    return ops.remove_dir(resource.name)


def release_all(state: RunState, ops: ResourceOps | None = None) -> tuple[list[str], list[str]]:
    """Remove every resource of `state`, newest first; forget each one handled.

    Returns (descriptions of what was removed, errors). A resource whose removal failed stays
    in the state file so that a later `cleanup_leftovers` retries it.
    """
    ops = ops or SystemOps()
    removed: list[str] = []
    errors: list[str] = []
    for resource in reversed(state.resources()):
        try:
            if release(resource, ops, state.run_id):
                removed.append(resource.describe())
        except Exception as exc:  # keep going: the other resources must still be removed
            errors.append(f"{resource.describe()}: {exc}")
            log.warning("could not remove %s: %s", resource.describe(), exc)
            continue
        state.discard(resource)
    state.close()
    return removed, errors
