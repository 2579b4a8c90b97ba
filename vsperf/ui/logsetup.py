"""Logging: the console at the chosen verbosity, everything in the run's overall.log.

What is logged before the run's directory exists (opening the hosts, the checks before anything
is created, what a killed run left and the hosts' opening put back) is kept in memory and
written first when overall.log is opened: the file has the whole run.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


class _Early(logging.Handler):
    """Keeps the records logged before overall.log exists (at most MAX: the oldest stay)."""

    MAX = 5000

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.records) < self.MAX:
            self.records.append(record)


def setup_console(verbosity: str) -> None:
    """Console logging, and the early records of overall.log; called once by the CLI."""
    root = logging.getLogger()
    root.setLevel(logging.DEBUG)
    for handler in list(root.handlers):
        if getattr(handler, "_vsperf", False) or isinstance(handler, _Early):
            root.removeHandler(handler)
    root.addHandler(_Early())
    console = logging.StreamHandler(sys.stderr)
    console.setLevel(LEVELS.get(verbosity, logging.INFO))
    console.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%H:%M:%S"))
    console._vsperf = True  # type: ignore[attr-defined]
    root.addHandler(console)


def add_file_log(path: Path) -> logging.Handler:
    """Log everything (debug included) to `path`; the caller removes the handler at the end."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setLevel(logging.DEBUG)
    handler.setFormatter(logging.Formatter(_FORMAT))
    root = logging.getLogger()
    for early in [h for h in root.handlers if isinstance(h, _Early)]:
        root.removeHandler(early)
        for record in early.records:
            handler.handle(record)
    root.addHandler(handler)
    return handler
