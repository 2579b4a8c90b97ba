"""Per-run context handed to every backend: run id, directories, executor."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from vsperf.executor import Executor


def new_run_id() -> str:
    """A short id carried by every name a run creates (namespaces, links, directories)."""
    return secrets.token_hex(3)


@dataclass(frozen=True)
class RunContext:
    """Where a run keeps its things and how it runs commands."""

    run_id: str
    results_dir: Path  # the run's outputs: results.json, CSVs, report, logs
    work_dir: Path  # scratch space for components (sockets, pid files, databases); removed at exit
    executor: Executor
