"""vsperf.history.hook: the runner's recorder records the run, and a broken store costs one warning."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from history_runs import START, write_run

from vsperf.history.db import open_store, parse_url
from vsperf.history.hook import RunRecorder
from vsperf.history.query import list_runs


def _recorder(db: str, log_dir: Path, on: bool = True) -> RunRecorder | None:
    return RunRecorder.from_settings({"HISTORY": on, "HISTORY_DB": db, "LOG_DIR": str(log_dir)})


def record_run(recorder: RunRecorder | None, results_dir: Path) -> None:
    """What the runner does with its recorder (none when HISTORY is off)."""
    if recorder is not None:
        recorder.record(results_dir)


def test_the_run_is_recorded_into_the_default_store_under_log_dir(tmp_path: Path) -> None:
    run = write_run(tmp_path, run_id="abc123", started=START, throughput={("phy2phy_tput", 64): 1e6})
    recorder = _recorder("", tmp_path)
    record_run(recorder, run)  # after a test
    record_run(recorder, run)  # at the end
    assert (tmp_path / "vsperf-history.sqlite").is_file()
    with open_store(parse_url("", tmp_path)) as store, store.connect() as c:
        assert [r.run_id[-6:] for r in list_runs(c)] == ["abc123"]


def test_history_off_records_nothing(tmp_path: Path) -> None:
    run = write_run(tmp_path, run_id="abc123", started=START, throughput={("phy2phy_tput", 64): 1e6})
    assert _recorder("", tmp_path, on=False) is None
    record_run(_recorder("", tmp_path, on=False), run)
    assert not (tmp_path / "vsperf-history.sqlite").exists()


def test_a_broken_store_is_one_warning_for_the_whole_run(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    run = write_run(tmp_path, run_id="abc123", started=START, throughput={("phy2phy_tput", 64): 1e6})
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes(b"not sqlite at all " * 300)
    recorder = _recorder(str(damaged), tmp_path)
    with caplog.at_level(logging.WARNING):
        for _call in range(3):
            record_run(recorder, run)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "not a usable SQLite database" in warnings[0] and f"vsperf history import {run}" in warnings[0]
    # The next run (its own recorder) tries again.
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        record_run(_recorder(str(damaged), tmp_path), run)
    assert len(caplog.records) == 1
