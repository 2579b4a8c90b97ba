"""The vsgen engine on another host: copy, check, removal, its CPUs, its command channel."""

from __future__ import annotations

import io
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import IO

import pytest

from vsperf.errors import CommandError, PrerequisiteError
from vsperf.executor import LocalExecutor, Process
from vsperf.trafficgen.vsgen.remote import (
    LineWriter,
    builder,
    host_cpus,
    is_remote,
    parse_cpu_list,
    remote_dir,
    stage_engine,
)


class FakeRemote:
    """A remote host's executor that records commands and copies; `fail` makes one command fail."""

    host = "gen"

    def __init__(self, fail: str = "", status: str = "") -> None:
        self.calls: list[list[str]] = []
        self.puts: list[tuple[Path, str, int | None]] = []
        self.fail = fail
        self.status = status

    def run(self, argv: Sequence[str], *, netns: str | None = None, check: bool = True,
            timeout_s: float | None = 60.0, env: Mapping[str, str] | None = None,
            input_text: str | None = None) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(argv))
        if self.fail and self.fail in argv[0]:
            raise CommandError(list(argv), 127, "error while loading shared libraries: libbpf.so.1")
        return subprocess.CompletedProcess(list(argv), 0, self.status, "")

    def spawn(self, argv: Sequence[str], *, netns: str | None = None, env: Mapping[str, str] | None = None,
              stdout: IO[bytes] | int | None = None, stderr: IO[bytes] | int | None = None,
              stdin: int | None = None) -> Process:
        raise AssertionError("not here")

    def put(self, local: Path, remote: PurePosixPath | str, *, mode: int | None = None) -> None:
        self.puts.append((local, str(remote), mode))

    def get(self, remote: PurePosixPath | str, local: Path) -> None:
        raise AssertionError("not here")


def test_the_engine_is_copied_into_the_runs_directory_and_checked_there(tmp_path: Path) -> None:
    ex = FakeRemote()
    target = stage_engine(ex, tmp_path / "vsgen-engine", "abc123")
    assert target == remote_dir("abc123") / "vsgen-engine" == PurePosixPath("/tmp/vsperf-abc123-vsgen/vsgen-engine")
    assert ex.calls[0] == ["mkdir", "-p", "-m", "700", "/tmp/vsperf-abc123-vsgen"]
    assert ex.puts == [(tmp_path / "vsgen-engine", str(target), 0o700)]
    assert ex.calls[1] == [str(target), "--version"]


def test_an_engine_that_cannot_run_there_is_a_prerequisite_error_and_is_removed(tmp_path: Path) -> None:
    ex = FakeRemote(fail="vsgen-engine")
    with pytest.raises(PrerequisiteError, match=r"^host gen: cannot run the vsgen engine .*libbpf"):
        stage_engine(ex, tmp_path / "vsgen-engine", "abc123")
    assert ex.calls[-1] == ["rm", "-rf", "--", "/tmp/vsperf-abc123-vsgen"]


def test_cpu_lists() -> None:
    assert parse_cpu_list("0-3,6") == [0, 1, 2, 3, 6] and parse_cpu_list("1\n") == [1]
    assert parse_cpu_list("") == [] and parse_cpu_list("x") == []
    assert host_cpus(FakeRemote(status="Cpus_allowed_list:\t0-1\n")) == [0, 1]


def test_remote_or_local_and_the_builder() -> None:
    local = LocalExecutor()
    assert not is_remote(local) and builder(local) is local
    remote = FakeRemote()
    assert is_remote(remote) and builder(remote).host == "local"


def test_line_writer_sends_ascii_lines_and_closes() -> None:
    stream = io.BytesIO()
    writer = LineWriter(stream)
    assert writer.write("port 0 - p0\n") == 12
    writer.flush()
    assert stream.getvalue() == b"port 0 - p0\n"
    writer.close()
    assert stream.closed
