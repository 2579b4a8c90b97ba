"""Output locations checked before anything runs: one line naming the place and the fix, nothing
left behind."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from vsperf.outputs import OutputError, OutputLost, check_output_dir, check_output_file, lost
from vsperf.signals import StopRun


def test_a_writable_place_is_accepted_and_nothing_is_left(tmp_path: Path) -> None:
    before = sorted(tmp_path.iterdir())
    assert check_output_dir(tmp_path / "a" / "b", "--results-dir") == tmp_path / "a" / "b"
    assert check_output_dir(tmp_path, "--results-dir") == tmp_path
    assert check_output_file(tmp_path / "c.json", "--json") == tmp_path / "c.json"
    assert sorted(tmp_path.iterdir()) == before  # the probes are gone, nothing was created


def test_relative_and_home_paths_are_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert check_output_dir("rel", "--results-dir") == tmp_path / "rel"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert check_output_dir("~/x", "LOG_DIR") == tmp_path / "x"
    with pytest.raises(OutputError, match=r"^LOG_DIR ~nosuchuser/x: '~nosuchuser': no such user's home directory"):
        check_output_dir("~nosuchuser/x", "LOG_DIR")


@pytest.mark.parametrize(
    ("place", "message"),
    [
        ("{file}/sub", r"^--results-dir .*/file/sub is inside .*/file, which is a regular file, not a directory; "
                       r"choose another place$"),
        ("{file}", r"^--results-dir .*/file is a regular file, not a directory; choose another place$"),
        ("/proc/vsperf-x", r"^--results-dir /proc/vsperf-x: cannot create anything in /proc: .* \(not a disk: "
                           r"choose a directory on one\); choose a writable directory$"),
        ("{tmp}/" + "n" * 300, r"^--results-dir .*: a name in it is longer than the 255 bytes a file system allows"),
        ("{tmp}/" + "/".join(["d" * 200] * 25), r"^--results-dir .*: the path is longer than the 4096 bytes"),
    ],
)
def test_places_that_cannot_take_a_run(tmp_path: Path, place: str, message: str) -> None:
    (tmp_path / "file").write_text("x")
    path = place.format(file=tmp_path / "file", tmp=tmp_path)
    with pytest.raises(OutputError, match=message):
        check_output_dir(path, "--results-dir")
    assert not os.path.isdir(path)  # nothing was created


def test_a_full_file_system_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.statvfs(tmp_path)

    class Full:
        f_bavail, f_frsize = 10, real.f_frsize

    monkeypatch.setattr(os, "statvfs", lambda _path: Full())
    with pytest.raises(OutputError, match=r"^--results-dir .*/run: only \d+ (bytes|KiB) free on its file system, "
                                          r"vsperf needs 16 MiB; free some space or choose another place$"):
        check_output_dir(tmp_path / "run", "--results-dir")


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("{tmp}", r"^--json .* is a directory; give the path of a file to write$"),
        ("/dev/full", r"^--json /dev/full is a character device; give the path of a file to write$"),
        ("{tmp}/missing/c.json", r"^--json .*/missing/c\.json: directory .*/missing does not exist \(under .*\); "
                                 r"create it first or choose another place$"),
    ],
)
def test_files_that_cannot_be_written(tmp_path: Path, target: str, message: str) -> None:
    with pytest.raises(OutputError, match=message):
        check_output_file(target.format(tmp=tmp_path), "--json")


def test_a_lost_output_stops_the_run() -> None:
    exc: Any = lost("results.json", OSError(28, "No space left on device"))
    assert isinstance(exc, OutputLost) and isinstance(exc, StopRun) and isinstance(exc, KeyboardInterrupt)
    assert str(exc) == "cannot write results.json: No space left on device"
