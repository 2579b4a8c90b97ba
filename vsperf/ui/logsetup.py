"""Logging: the console at the chosen verbosity, everything in the run's overall.log."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


def setup_console(verbosity: str) -> None:
    """Console logging; called once by the CLI."""
    root = logging.getLogger()
    root.setLevel(logging.DEBUG)
    for handler in list(root.handlers):
        if getattr(handler, "_vsperf", False):
            root.removeHandler(handler)
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
    logging.getLogger().addHandler(handler)
    return handler
