"""This machine as the host a benchmark's generators run on: a journal of the bench's own (under
its work directory), released when the bench is done, so nothing it started is left behind."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from vsperf.executor import CommandLog, LocalExecutor
from vsperf.host.host import Host
from vsperf.host.journal import Journal
from vsperf.host.names import RunNames
from vsperf.host.release import release
from vsperf.host.workdir import new_run_id


@contextlib.contextmanager
def bench_host(work: Path, run_id: str | None = None) -> Iterator[Host]:
    """A `Host` of this machine whose journal lives in `work`; everything it lists is released
    on leaving."""
    rid = run_id or new_run_id()
    executor = LocalExecutor(CommandLog(work / "commands.log"))
    host = Host("local", executor, RunNames(rid), Journal(rid, root=work / "state"), results_dir=work)
    try:
        yield host
    finally:
        assert host.journal is not None
        release(host.journal, {"local": executor})
