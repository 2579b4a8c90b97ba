"""The generator host of the traffic generators' unit tests (no root): this machine as a `Host`.

`generator_host(tmp_path)` is this machine as the run's `local` host; with `name="gen"` it poses as
a testbed's generator host reached over SSH: the commands still run here, but the host is not
`local`, so every path a generator takes for another machine is taken (files staged by copy into
the run's directory, messages naming the host). The run's journal lives under the test's
directory; whatever a test leaves recorded (processes, directories) is released at its end, even
when it fails.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from vsperf.executor import Command, CommandLog, LocalExecutor
from vsperf.host.host import Host
from vsperf.host.journal import Entry, EntryKind, Journal
from vsperf.host.names import RunNames
from vsperf.host.release import release
from vsperf.host.workdir import new_run_id


class NamedLocalExecutor(LocalExecutor):
    """This machine's executor under a testbed host's name (what an SshExecutor reports)."""

    def __init__(self, name: str, command_log: CommandLog | None = None) -> None:
        super().__init__(command_log)
        self.name = name

    @property
    def host(self) -> str:  # type: ignore[override]
        return self.name

    def put(self, local: Path, remote: PurePosixPath | str, *, mode: int | None = None) -> None:
        """Copy as SFTP does, with the permissions asked for (an engine copy must be executable)."""
        super().put(local, remote, mode=mode)
        if mode is not None:
            os.chmod(remote, mode)


class AnsweringExecutor(NamedLocalExecutor):
    """This machine posing as host `name`, except that the commands in `answers` print the
    given text (exit 0) there: the facts of another machine (its CPUs, its user id)."""

    def __init__(self, answers: Mapping[tuple[str, ...], str], name: str = "gen") -> None:
        super().__init__(name)
        self.answers = dict(answers)

    def _complete(self, cmd: Command, timeout_s: float | None,
                  input_text: str | None) -> subprocess.CompletedProcess[str]:
        if cmd.argv in self.answers:
            self.command_log.record(cmd.argv, cmd.env)
            return subprocess.CompletedProcess(list(cmd.argv), 0, self.answers[cmd.argv], "")
        return super()._complete(cmd, timeout_s, input_text)


@contextmanager
def generator_host(tmp_path: Path, name: str = "local", command_log: CommandLog | None = None) -> Iterator[Host]:
    """A host of a fresh run (its own run id: runs on a shared machine stay apart), released at
    the end: what the test left running is stopped, the run's directories removed."""
    executor = LocalExecutor(command_log) if name == "local" else NamedLocalExecutor(name, command_log)
    run_id = new_run_id()
    journal = Journal(run_id, root=tmp_path / "state")
    host = Host(name, executor, RunNames(run_id), journal, results_dir=tmp_path)
    try:
        yield host
    finally:
        release(journal, {name: executor})


def recorded(host: Host, kind: EntryKind) -> list[Entry]:
    """The entries of `kind` the host's run journal holds now."""
    assert host.journal is not None
    return [e for e in host.journal.entries() if e.kind == kind]
