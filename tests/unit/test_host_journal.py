"""The on-disk record of a run's resources."""

import json
from pathlib import Path

import pytest

from vsperf.lab.state import STATE_FILE, Owner, Resource, RunState


def test_each_change_is_on_disk_at_once(tmp_path: Path) -> None:
    state = RunState("abc123", root=tmp_path, owner=Owner(4242, 1000.5))
    ns = state.add(Resource("netns", "vspabc123s"))
    state.add(Resource("process", "ovs-vswitchd", pid=77, start_time=12.25))
    data = json.loads((tmp_path / "abc123" / STATE_FILE).read_text())
    assert data["owner_pid"] == 4242 and data["owner_start_time"] == 1000.5
    assert [r["name"] for r in data["resources"]] == ["vspabc123s", "ovs-vswitchd"]
    state.discard(ns)
    data = json.loads((tmp_path / "abc123" / STATE_FILE).read_text())
    assert [r["kind"] for r in data["resources"]] == ["process"]


def test_load_round_trips(tmp_path: Path) -> None:
    state = RunState("abc123", root=tmp_path, owner=Owner(1, 2.0))
    link = Resource("link", "vspabc123g0", netns="vspabc123g0")
    state.add(link)
    loaded = RunState.load(state.path)
    assert loaded.run_id == "abc123"
    assert loaded.owner == Owner(1, 2.0)
    assert loaded.resources() == [link]
    assert loaded.root == tmp_path


def test_close_removes_the_directory_only_when_empty(tmp_path: Path) -> None:
    state = RunState("abc123", root=tmp_path)
    proc = state.add(Resource("process", "x", pid=5, start_time=1.0))
    state.close()
    assert state.path.exists()
    state.discard(proc)
    state.close()
    assert not state.directory.exists()


def test_adding_twice_records_once(tmp_path: Path) -> None:
    state = RunState("abc123", root=tmp_path)
    state.add(Resource("netns", "vspabc123s"))
    state.add(Resource("netns", "vspabc123s"))
    assert len(state) == 1


@pytest.mark.parametrize("content", ["not json", '{"version": 99}', "[]"])
def test_foreign_files_are_refused(tmp_path: Path, content: str) -> None:
    path = tmp_path / "x" / STATE_FILE
    path.parent.mkdir()
    path.write_text(content)
    with pytest.raises(ValueError):
        RunState.load(path)


def test_unknown_resource_kinds_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown resource kind"):
        Resource.from_dict({"kind": "volume", "name": "x"})
