"""The runner's recorder: it records the run after each test and at its end, never failing it.

A store that cannot be reached, is locked too long or refuses the run costs one warning line for
the whole run (later calls of that run are skipped): the results directory still has everything,
and `vsperf history import DIR` records it later. The exit code never changes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vsperf.history.db import open_store, parse_url
from vsperf.history.recorder import record_dir

log = logging.getLogger(__name__)

@dataclass
class RunRecorder:
    """Records a run into the results store HISTORY_DB (built when HISTORY is on)."""

    db: str  # HISTORY_DB, as given (parsed when recording: a bad URL costs a warning, not the run)
    log_dir: str  # LOG_DIR: where the default SQLite store lives
    failed: bool = False  # the store failed once in this run: later calls are skipped

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> RunRecorder | None:
        """The run's recorder; None when HISTORY is off."""
        if not settings["HISTORY"]:
            return None
        return cls(str(settings["HISTORY_DB"]), str(settings["LOG_DIR"]))

    def record(self, results_dir: Path) -> None:
        """Record the run in `results_dir` into the store (again: a run is recorded after each
        test, so an interrupted run keeps what it measured, and at its end). Never raises
        (except KeyboardInterrupt/SystemExit, which are not ours to eat)."""
        if self.failed:
            return
        try:
            with open_store(parse_url(self.db, self.log_dir)) as store:
                recorded = record_dir(store, results_dir)
            log.debug("results store %s: run %s %s", store.where, recorded.run_id, recorded.action)
        except Exception as exc:  # the store is an extra: a failure of it never fails the run
            self.failed = True
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            log.warning("run not recorded in the results store: %s; the results directory has everything: "
                        "vsperf history import %s records it later", message, results_dir)
