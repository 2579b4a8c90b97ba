"""Teardown and leftover cleanup remove recorded resources, newest first, and nothing else."""

from pathlib import Path

from vsperf.lab.release import release, release_all
from vsperf.lab.state import Owner, Resource, RunState


class FakeOps:
    """Records removals; `existing` says what is still there, `failing` what cannot be removed."""

    def __init__(self, existing: set[str] | None = None, failing: set[str] | None = None) -> None:
        self.calls: list[str] = []
        self.existing = existing
        self.failing = failing or set()

    def _do(self, what: str) -> bool:
        self.calls.append(what)
        if what in self.failing:
            raise OSError(f"cannot remove {what}")
        return self.existing is None or what in self.existing

    def stop_process(self, pid: int, start_time: float) -> bool:
        return self._do(f"pid {pid}")

    def delete_link(self, name: str, netns: str | None) -> bool:
        return self._do(f"link {name}")

    def delete_netns(self, name: str) -> bool:
        return self._do(f"netns {name}")

    def remove_dir(self, path: str) -> bool:
        return self._do(f"dir {path}")


def _state(tmp_path: Path) -> RunState:
    state = RunState("abc123", root=tmp_path / "run", owner=Owner(1, 1.0))
    state.add(Resource("dir", "/tmp/vsperf-abc123/ovs"))
    state.add(Resource("netns", "vspabc123s"))
    state.add(Resource("link", "vspabc123g0", netns="vspabc123g0"))
    state.add(Resource("process", "ovs-vswitchd", pid=4321, start_time=99.0))
    return state


def test_newest_first_and_state_gone(tmp_path: Path) -> None:
    state = _state(tmp_path)
    ops = FakeOps()
    removed, errors = release_all(state, ops)
    assert ops.calls == ["pid 4321", "link vspabc123g0", "netns vspabc123s", "dir /tmp/vsperf-abc123/ovs"]
    assert errors == [] and len(removed) == 4
    assert not state.directory.exists()


def test_already_gone_is_not_an_error(tmp_path: Path) -> None:
    state = _state(tmp_path)
    removed, errors = release_all(state, FakeOps(existing=set()))
    assert removed == [] and errors == []
    assert not state.directory.exists()


def test_failures_stay_recorded_for_a_later_cleanup(tmp_path: Path) -> None:
    state = _state(tmp_path)
    removed, errors = release_all(state, FakeOps(failing={"netns vspabc123s"}))
    assert len(removed) == 3
    assert len(errors) == 1 and "vspabc123s" in errors[0]
    assert [r.name for r in RunState.load(state.path).resources()] == ["vspabc123s"]


def test_things_not_of_this_run_are_never_touched() -> None:
    ops = FakeOps()
    foreign = [
        Resource("netns", "dpxns0"),
        Resource("link", "eth0"),
        Resource("link", "vspffffffg0"),  # another run's tag
        Resource("dir", "/"),
        Resource("dir", "/tmp/somebody-else"),
        Resource("process", "init", pid=1, start_time=1.0),
        Resource("process", "no start time", pid=1234, start_time=0.0),
    ]
    assert not any(release(r, ops, "abc123") for r in foreign)
    assert ops.calls == []
