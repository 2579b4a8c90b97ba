"""The runner's two calls: record the run after each test and at its end, never failing it.

A store that cannot be reached, is locked too long or refuses the run costs one warning line for
the whole run (later calls of that run are skipped): the results directory still has everything,
and `vsperf history import DIR` records it later. The exit code never changes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vsperf.history.db import open_store, parse_url
from vsperf.history.recorder import record_dir

log = logging.getLogger(__name__)

_failed: set[Path] = set()  # run directories whose store failed once in this process


def record_run(settings: Mapping[str, Any], results_dir: Path, *, final: bool = False) -> None:
    """Record the run in `results_dir` into the store of `settings` (HISTORY_DB) if HISTORY is on.

    Called after each test (so an interrupted run keeps what it measured) and once with `final`
    at the end. Never raises (except KeyboardInterrupt/SystemExit, which are not ours to eat)."""
    try:
        if not settings["HISTORY"] or results_dir in _failed:
            return
        url = parse_url(str(settings["HISTORY_DB"]), str(settings["LOG_DIR"]))
        with open_store(url) as store:
            recorded = record_dir(store, results_dir)
        log.debug("results store %s: run %s %s", store.where, recorded.run_id, recorded.action)
    except Exception as exc:  # the store is an extra: a failure of it never fails the run
        _failed.add(results_dir)
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        log.warning("run not recorded in the results store: %s; the results directory has everything: "
                    "vsperf history import %s records it later", message, results_dir)
    finally:
        if final:
            _failed.discard(results_dir)
