"""The vsgen engine on another host (a testbed's generator host, reached over SSH).

The engine binary is found (or built) on this machine as for the local lab, then copied to a
directory of the run on the generator host over SFTP and run there through that host's executor.
Commands go to the engine's standard input, carried by the SSH channel (the engine reads its
standard input when it has no `--control` FIFO); its JSON events come back on its standard
output. When the channel closes (vsperf gone, connection lost) the engine sees the end of its
input and exits, detaching its XDP programs. The host must be able to run the binary: same
architecture, and the shared libraries it links (libbpf, libelf, zlib) installed there.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path, PurePosixPath
from typing import IO

from vsperf.errors import CommandError, PrerequisiteError
from vsperf.executor import Executor, LocalExecutor
from vsperf.remote.ssh import SshExecutor
from vsperf.trafficgen.vsgen.build import ENGINE_NAME

log = logging.getLogger(__name__)


def is_remote(executor: Executor) -> bool:
    """True when `executor` runs commands on another host than this one."""
    return executor.host != "local"


def builder(executor: Executor) -> Executor:
    """The executor that finds or builds the engine: this machine's (a remote host gets a copy),
    logging to the same command log."""
    if not is_remote(executor):
        return executor
    return LocalExecutor(executor.command_log if isinstance(executor, SshExecutor) else None)


def remote_dir(run_id: str) -> PurePosixPath:
    """The run's directory on the generator host (the engine binary lives there). Its name
    matches /tmp/vsperf-RUNID-*: after a killed run, the next run's testbed session removes it
    (`vsperf.testbed.session.host_run_dirs_removal`)."""
    return PurePosixPath(f"/tmp/vsperf-{run_id}-vsgen")


def stage_engine(executor: Executor, binary: Path, run_id: str) -> PurePosixPath:
    """Copy the engine to the generator host; its path there."""
    directory = remote_dir(run_id)
    target = directory / ENGINE_NAME
    try:
        executor.run(["mkdir", "-p", "-m", "700", str(directory)], timeout_s=10)
        executor.put(binary, target, mode=0o700)
        # The copy must run there (architecture, libbpf): `--version` says so before any port is touched.
        executor.run([str(target), "--version"], timeout_s=10)
    except CommandError as exc:
        unstage_engine(executor, run_id)
        raise PrerequisiteError(f"host {executor.host}: cannot run the vsgen engine copied from this machine "
                                f"({exc}); install libbpf1 there, or use a generator host of the same "
                                f"architecture and distribution") from exc
    return target


def unstage_engine(executor: Executor, run_id: str) -> None:
    """Remove the run's directory from the generator host (a lost host keeps it)."""
    try:
        executor.run(["rm", "-rf", "--", str(remote_dir(run_id))], check=False, timeout_s=10)
    except CommandError as exc:
        log.warning("host %s: could not remove %s: %s", executor.host, remote_dir(run_id), exc)


def parse_cpu_list(text: str) -> list[int]:
    """CPU numbers of a kernel CPU list such as "0-3,6" (empty when malformed)."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        match = re.fullmatch(r"(\d+)(?:-(\d+))?", part.strip())
        if not match:
            return []
        first, last = int(match.group(1)), int(match.group(2) or match.group(1))
        cpus += range(first, last + 1)
    return cpus


def host_cpus(executor: Executor) -> list[int]:
    """The CPUs a process may use on the executor's host (Cpus_allowed_list of /proc/self/status)."""
    out = executor.run(["grep", "^Cpus_allowed_list:", "/proc/self/status"], check=False, timeout_s=10).stdout
    return parse_cpu_list(out.partition(":")[2])


class LineWriter:
    """Text lines onto a binary stream (the engine's stdin over SSH), flushed line by line.

    The engine session's command channel: `write`, `flush` and `close` (the end of input) are
    all it uses.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(text.encode("ascii"))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def close(self) -> None:
        self.stream.close()
