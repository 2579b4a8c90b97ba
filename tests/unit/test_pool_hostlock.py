"""A host's lock state in its file: the real scripts, run through a LocalExecutor on a temporary
directory: read with the host's clock, compare-and-swap changes that never lose an update,
and every way the directory can be unusable is one line naming the host, the directory and the fix."""

from __future__ import annotations

import os
import subprocess
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from vsperf.executor import Command, LocalExecutor
from vsperf.pool.hostlock import LockDirError, LockPlace, append_log, change, new_version, read_state, read_states
from vsperf.pool.state import HostClock, LockState


def place(tmp_path: Path, name: str = "locks") -> LockPlace:
    return LockPlace(LocalExecutor(), str(tmp_path / name))


def bump(state: LockState, _clock: HostClock) -> tuple[LockState, int]:
    """One more line in the state's log: a change that can be counted (an empty state is no file)."""
    count = len(state.log) + 1
    return replace(state, log=(*state.log, f"change {count}")), count


def count(where: LockPlace) -> int:
    return len(read_state(where)[0].log)


def test_a_directory_never_used_reads_as_free_with_the_hosts_clock(tmp_path: Path) -> None:
    state, clock = read_state(place(tmp_path))
    assert state == LockState()
    assert clock.boot_id == Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    assert abs(clock.uptime_s - float(Path("/proc/uptime").read_text().split()[0])) < 5
    assert not (tmp_path / "locks").exists()  # reading creates nothing


def test_a_change_is_written_with_a_new_version_and_read_back(tmp_path: Path) -> None:
    where = place(tmp_path)
    assert change(where, bump) == 1
    first = read_state(where)[0].version
    assert change(where, bump) == 2
    [state_file] = (tmp_path / "locks").glob("state.*")
    assert state_file.name == f"state.{os.stat('/proc/self/ns/net').st_ino}"  # one per network namespace
    text = state_file.read_text()
    second = read_state(where)[0].version
    assert text.splitlines()[0] == str(second) and text.endswith("\n#end\n")
    assert 0 not in (first, second) and first != second
    assert count(where) == 2
    assert change(where, lambda s, c: (None, "nothing")) == "nothing"  # no write: no new version
    assert read_state(where)[0].version == second


def test_a_state_emptied_and_filled_again_never_has_a_version_seen_before(tmp_path: Path) -> None:
    """An empty state removes its file (version 0); a counter would then start again, and a
    controller that read version 1 long ago could overwrite a different state of version 1."""
    where = place(tmp_path)
    seen = set()
    for _ in range(20):
        change(where, bump)
        seen.add(read_state(where)[0].version)
        change(where, lambda s, c: (LockState(version=s.version), None))  # emptied: the file goes
        assert read_state(where)[0].version == 0 and not list((tmp_path / "locks").glob("state.*"))
    assert len(seen) == 20 and 0 not in seen
    assert all(new_version(5) not in (0, 5) for _ in range(1000))


def test_someone_elses_change_in_between_is_never_lost(tmp_path: Path) -> None:
    where = place(tmp_path)
    calls: list[int] = []

    def decide(state: LockState, clock: HostClock) -> tuple[LockState, int]:
        calls.append(state.version)
        if len(calls) == 1:
            change(where, bump)  # another controller's change lands between our read and our write
        return bump(state, clock)

    assert change(where, decide) == 2  # decided again on the state with the other change in it
    assert len(calls) == 2 and calls[0] == 0 and calls[1] != 0 and count(where) == 2


def test_concurrent_changes_from_many_threads_all_count(tmp_path: Path) -> None:
    where = place(tmp_path)
    seen: list[int] = []

    def worker() -> None:
        for _ in range(8):
            seen.append(change(where, bump))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seen) == list(range(1, 33)) and count(where) == 32


def test_several_directories_of_one_host_in_one_command(tmp_path: Path) -> None:
    one, two = place(tmp_path, "one"), place(tmp_path, "two")
    change(two, bump)
    executor = LocalExecutor()
    found = read_states(executor, [one.lock_dir, two.lock_dir])
    assert len(found[one.lock_dir][0].log) == 0 and len(found[two.lock_dir][0].log) == 1
    assert found[one.lock_dir][1].boot_id == found[two.lock_dir][1].boot_id


def test_a_lock_dir_name_is_an_argument_never_shell_text(tmp_path: Path) -> None:
    odd = place(tmp_path, "a b'$(touch pwned)\"")
    change(odd, bump)
    assert count(odd) == 1 and not (Path.cwd() / "pwned").exists()
    assert not (tmp_path / "pwned").exists()


def test_a_lock_dir_that_is_a_file_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "locks").write_text("")
    for action in (lambda: read_state(place(tmp_path)), lambda: change(place(tmp_path), bump)):
        with pytest.raises(LockDirError, match=rf"^host local: lock directory {tmp_path}/locks: it is not a "
                                               r"directory \(.*\); make it root's .* or give the host another "
                                               r"lock_dir in the testbed file$"):
            action()


def test_a_damaged_state_is_refused_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "locks").mkdir()
    (tmp_path / "locks" / f"state.{os.stat('/proc/self/ns/net').st_ino}").write_text("3\n{broken\n#end\n")
    with pytest.raises(LockDirError, match=rf"lock directory {tmp_path}/locks: its state is not a vsperf lock "
                                           rf"state .*remove {tmp_path}/locks/state\.\* if no run uses the host"):
        read_state(place(tmp_path))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a directory whatever its mode")
def test_a_lock_dir_someone_else_made_unreadable(tmp_path: Path) -> None:
    (tmp_path / "locks").mkdir(mode=0)
    try:
        with pytest.raises(LockDirError, match=r"cannot read its state .*permission denied"):
            read_state(place(tmp_path))
    finally:
        (tmp_path / "locks").chmod(0o755)


class Answering(LocalExecutor):
    """A host whose lock command ends with `code` and `stderr` (what a real one says)."""

    def __init__(self, code: int, stderr: str) -> None:
        super().__init__()
        self.code, self.stderr = code, stderr

    def _complete(self, cmd: Command, timeout_s: float | None, input_text: str | None) -> Any:
        return subprocess.CompletedProcess(list(cmd.argv), self.code, "", self.stderr)


@pytest.mark.parametrize(("code", "stderr", "message"), [
    (77, "sh: 9: cannot open /run/vsperf/locks/state: Permission denied",
     r"^host local: lock directory /run/vsperf/locks: cannot read its state \(sh: 9: cannot open "
     r"/run/vsperf/locks/state: Permission denied\); make it root's and readable \(chown root: and chmod 755 it\), "
     r"or give the host another lock_dir in the testbed file$"),
    (127, "sh: 5: flock: not found", r"^host local: flock not found \(vsperf locks testbeds with it\): apt-get "
                                     r"install util-linux there$"),
    (73, "", r"^host local: lock directory /run/vsperf/locks: its .flock stayed locked for 20 s; try again"),
])
def test_what_a_host_says_is_one_line_with_the_fix(code: int, stderr: str, message: str) -> None:
    where = LockPlace(Answering(code, stderr), "/run/vsperf/locks")
    with pytest.raises(LockDirError, match=message) as info:
        change(where, bump, current=(LockState(), HostClock("b", 1.0)))
    assert "\n" not in str(info.value)


def test_the_log_of_forced_unlocks_is_appended(tmp_path: Path) -> None:
    where = place(tmp_path)
    change(where, bump)
    append_log(where, "one")
    append_log(where, "two")
    assert (tmp_path / "locks" / "unlock.log").read_text() == "one\ntwo\n"


def test_an_empty_state_leaves_no_file(tmp_path: Path) -> None:
    where = place(tmp_path)
    change(where, bump)
    assert list((tmp_path / "locks").glob("state.*"))
    change(where, lambda s, c: (LockState(), None))
    assert not list((tmp_path / "locks").glob("state.*")) and read_state(where)[0] == LockState()
