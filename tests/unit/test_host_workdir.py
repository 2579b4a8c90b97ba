import json
import os
from pathlib import Path

import psutil
import pytest

from vsperf import context
from vsperf.host.workdir import OWNER_FILE, create_work_dir, orphaned_work_dirs, work_dir_for


@pytest.fixture
def tmpdir_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(context.tempfile, "gettempdir", lambda: str(tmp_path))
    return tmp_path


def test_work_dir_names_carry_the_run_id(tmpdir_root: Path) -> None:
    path = create_work_dir("abc123")
    assert path == work_dir_for("abc123") == tmpdir_root / "vsperf-abc123"
    owner = json.loads((path / OWNER_FILE).read_text())
    assert owner["pid"] == os.getpid()


def test_only_dirs_of_dead_owners_are_orphans(tmpdir_root: Path) -> None:
    mine = create_work_dir("live01")
    dead = tmpdir_root / "vsperf-dead01"
    dead.mkdir()
    # Our PID with another start time: the PID was reused, the owner is gone.
    me = psutil.Process(os.getpid())
    (dead / OWNER_FILE).write_text(json.dumps({"pid": me.pid, "start_time": me.create_time() - 1000}))
    stranger = tmpdir_root / "vsperf-noowner"  # no owner file: not ours to judge
    stranger.mkdir()
    garbled = tmpdir_root / "vsperf-garbled"
    garbled.mkdir()
    (garbled / OWNER_FILE).write_text("{not json")
    assert orphaned_work_dirs() == [dead]
    assert mine.exists()
