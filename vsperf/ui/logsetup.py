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


class RunLogHandler(logging.FileHandler):
    """The run's overall.log. A write that fails (a full disk) turns the file log off with one
    line on the console, instead of logging's traceback for every record that follows; the run
    itself is stopped by the results writer, which hits the same disk."""

    failed = False

    def handleError(self, record: logging.LogRecord) -> None:
        if self.failed:
            return
        self.failed = True
        exc = sys.exc_info()[1]
        why = (exc.strerror or str(exc)) if isinstance(exc, OSError) else repr(exc)
        sys.stderr.write(f"vsperf: {self.baseFilename}: cannot write the run's log ({why}); it goes on on the "
                         f"console only\n")

    def emit(self, record: logging.LogRecord) -> None:
        if not self.failed:
            super().emit(record)

    def flush(self) -> None:
        try:
            super().flush()
        except OSError:
            self.failed = True

    def close(self) -> None:
        try:
            super().close()
        except OSError:
            self.failed = True


def add_file_log(path: Path) -> logging.Handler:
    """Log everything (debug included) to `path`; the caller removes the handler at the end."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = RunLogHandler(path, encoding="utf-8")
    handler.setLevel(logging.DEBUG)
    handler.setFormatter(logging.Formatter(_FORMAT))
    root = logging.getLogger()
    for early in [h for h in root.handlers if isinstance(h, _Early)]:
        root.removeHandler(early)
        for record in early.records:
            handler.handle(record)
    root.addHandler(handler)
    return handler
