"""The controller's scratch directory of a run: named by the run id, owned by this process, and
found as an orphan once its owner is gone."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import psutil
import pytest

from vsperf.executor import LocalExecutor
from vsperf.host import workdir
from vsperf.host.names import check_run_id
from vsperf.host.workdir import OWNER_FILE, RunContext, create_work_dir, new_run_id, orphaned_work_dirs, work_dir_for


@pytest.fixture
def tmpdir_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(workdir.tempfile, "gettempdir", lambda: str(tmp_path))
    return tmp_path


def test_run_ids_are_six_hex_digits_fit_for_names() -> None:
    ids = [new_run_id() for _ in range(50)]
    assert all(len(i) == 6 and int(i, 16) >= 0 and check_run_id(i) == i for i in ids)
    assert len(set(ids)) > 45  # random, not a counter that repeats


def test_work_dir_names_carry_the_run_id(tmpdir_root: Path) -> None:
    path = create_work_dir("abc123")
    assert path == work_dir_for("abc123") == tmpdir_root / "vsperf-abc123"
    assert path.stat().st_mode & 0o777 == 0o700
    owner = json.loads((path / OWNER_FILE).read_text())
    assert owner == {"pid": os.getpid(), "start_time": psutil.Process(os.getpid()).create_time()}
    assert create_work_dir("abc123") == path  # a second call reuses it


def test_only_dirs_of_dead_owners_are_orphans(tmpdir_root: Path) -> None:
    mine = create_work_dir("live01")
    dead = tmpdir_root / "vsperf-dead01"
    dead.mkdir()
    # Our PID with another start time: the PID was reused, the owner is gone.
    me = psutil.Process(os.getpid())
    (dead / OWNER_FILE).write_text(json.dumps({"pid": me.pid, "start_time": me.create_time() - 1000}))
    gone = tmpdir_root / "vsperf-gone01"
    gone.mkdir()
    (gone / OWNER_FILE).write_text(json.dumps({"pid": 2**22 + 1, "start_time": 1.0}))  # above pid_max: no such PID
    stranger = tmpdir_root / "vsperf-noowner"  # no owner file: not ours to judge
    stranger.mkdir()
    garbled = tmpdir_root / "vsperf-garbled"
    garbled.mkdir()
    (garbled / OWNER_FILE).write_text("{not json")
    assert sorted(orphaned_work_dirs()) == [dead, gone]
    assert mine.exists() and stranger.exists() and garbled.exists()  # found, never removed here


def test_the_run_context_is_frozen(tmp_path: Path) -> None:
    ctx = RunContext("abc123", tmp_path / "results", tmp_path / "work", LocalExecutor())
    assert (ctx.run_id, ctx.results_dir, ctx.work_dir) == ("abc123", tmp_path / "results", tmp_path / "work")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.run_id = "other"  # type: ignore[misc]
