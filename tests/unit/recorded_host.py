"""A testbed host for unit tests: an Executor that answers each command with recorded output."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from vsperf.executor import Command, Executor, Process, Streams, TcpStream


class RecordedHost(Executor):
    """Answers `run` from `answers` (argv -> the outputs of its successive calls, the last one
    repeated; a missing argv exits 1 with nothing printed) and keeps every command it was given."""

    def __init__(self, name: str, answers: Mapping[tuple[str, ...], Sequence[str]]) -> None:
        self.name = name
        self.answers = {argv: list(outputs) for argv, outputs in answers.items()}
        self.commands: list[tuple[tuple[str, ...], str | None]] = []  # (argv, netns)

    @property
    def host(self) -> str:
        return self.name

    def _complete(self, cmd: Command, timeout_s: float | None,
                  input_text: str | None) -> subprocess.CompletedProcess[str]:
        self.commands.append((cmd.argv, cmd.netns))
        outputs = self.answers.get(cmd.argv)
        if not outputs:
            return subprocess.CompletedProcess(list(cmd.argv), 1, "", "No such file or directory")
        out = outputs.pop(0) if len(outputs) > 1 else outputs[0]
        return subprocess.CompletedProcess(list(cmd.argv), 0, out, "")

    def _start(self, cmd: Command, streams: Streams) -> Process:
        raise AssertionError("collectors start no process on a host")

    def put(self, local: Path, remote: PurePosixPath | str, *, mode: int | None = None) -> None:
        raise AssertionError("collectors copy no file")

    def get(self, remote: PurePosixPath | str, local: Path) -> None:
        raise AssertionError("collectors copy no file")

    def open_tcp(self, port: int, *, netns: str | None = None, timeout_s: float = 5.0) -> TcpStream:
        raise AssertionError("collectors open no connection")
