"""Per-run context handed to every backend: run id, directories, executor."""

from __future__ import annotations

import json
import os
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path

import psutil

from vsperf.executor import Executor


def new_run_id() -> str:
    """A short id carried by every name a run creates (namespaces, links, directories)."""
    return secrets.token_hex(3)


WORK_DIR_PREFIX = "vsperf-"
OWNER_FILE = "owner.json"


def work_dir_for(run_id: str) -> Path:
    """The scratch directory of run `run_id` (short: unix socket paths live in it)."""
    return Path(tempfile.gettempdir()) / f"{WORK_DIR_PREFIX}{run_id}"


def create_work_dir(run_id: str) -> Path:
    """Create the run's scratch directory with an owner file (this process's PID and start
    time), so that a later run can tell a killed run's directory from a live one's."""
    path = work_dir_for(run_id)
    path.mkdir(mode=0o700, exist_ok=True)
    me = psutil.Process(os.getpid())
    (path / OWNER_FILE).write_text(json.dumps({"pid": me.pid, "start_time": me.create_time()}))
    return path


def orphaned_work_dirs() -> list[Path]:
    """Scratch directories of runs whose vsperf process is gone (only those with an owner file)."""
    orphans = []
    for path in Path(tempfile.gettempdir()).glob(f"{WORK_DIR_PREFIX}*/{OWNER_FILE}"):
        try:
            owner = json.loads(path.read_text())
            alive = psutil.Process(int(owner["pid"])).create_time() == float(owner["start_time"])
        except psutil.NoSuchProcess:
            alive = False
        except (OSError, ValueError, KeyError, TypeError, psutil.Error):
            continue  # unreadable or not ours to judge: leave it
        if not alive:
            orphans.append(path.parent)
    return orphans


@dataclass(frozen=True)
class RunContext:
    """Where a run keeps its things and how it runs commands."""

    run_id: str
    results_dir: Path  # the run's outputs: results.json, CSVs, report, logs
    work_dir: Path  # scratch space for components (sockets, pid files, databases); removed at exit
    executor: Executor
