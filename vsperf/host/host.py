"""A machine of the run: this one or an SSH host, differing only by its Executor.

Every backend receives the `Host` it runs on (a switch and its VNFs the DUT host, a generator the
generator host, a load the DUT host) and creates through it whatever must not outlive the run:
processes (`spawn`, `adopt`), directories (`work_dir`), DPDK runtime directories
(`dpdk_file_prefix`), and, through `Host.net`, namespaces, links and bridges. Each of them is in
the run's journal (`vsperf.host.journal`) before it exists, so teardown, and the next run after a
SIGKILL, removes it. Every command goes through the host's executor: it is in commands.log, and a
user can replay it.

Paths are the host's (`PurePosixPath`); files of this machine reach a host through `stage_file`.
A host without a journal is a probe: it answers questions (`which`, `cpu_count`, ...) for the
checks made before anything is deployed, and refuses to create anything.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from vsperf.errors import CommandError, DeploymentError, PrerequisiteError, VsperfError
from vsperf.executor import Executor, LocalExecutor
from vsperf.host.journal import Entry, EntryKind, Journal
from vsperf.host.names import DPDK_RUNTIME_ROOT, RunNames
from vsperf.host.network import Network
from vsperf.host.process import HostProcess, read_stat
from vsperf.remote.connection import HostLostError

# A fixed script (its arguments are never part of it): output appended to the log file "$1", then
# the command itself in place of the shell (`exec`: the PID and start time stay the command's).
_LOG_SCRIPT = 'f=$1; shift; exec "$@" >>"$f" 2>&1'
# The same with only stderr to the log: stdin and stdout stay pipes to vsperf (a control channel).
_STDERR_LOG_SCRIPT = 'f=$1; shift; exec "$@" 2>>"$f"'
_POLL_S = 0.02


class Host:
    """One machine of the run (see the module docstring)."""

    def __init__(self, name: str, executor: Executor, names: RunNames, journal: Journal | None,
                 results_dir: Path | None = None) -> None:
        self.name = name  # `local`, or the testbed's name for the host
        self.executor = executor
        self.names = names
        self.journal = journal
        # The run's outputs on the controller (this machine): where a component saves what the
        # report shows (a guest's console log); None for a probe.
        self.results_dir = results_dir
        self.net: Network = Network(self)
        self._dirs: set[PurePosixPath] = set()
        self._cpus: list[int] | None = None

    @classmethod
    def probe(cls, executor: Executor | None = None, *, name: str = "local") -> Host:
        """A host for checks only (this machine unless `executor` says otherwise): creates nothing."""
        return cls(name, executor or LocalExecutor(), RunNames("check"), None)

    def __repr__(self) -> str:
        return f"Host({self.name!r})"

    @property
    def local(self) -> bool:
        """True for this machine (no SSH)."""
        return self.executor.host == "local"

    @property
    def prefix(self) -> str:
        """What begins a message about this host: "host NAME: ", or "" on this machine."""
        return "" if self.local else f"host {self.name}: "

    @property
    def on(self) -> str:
        """What follows a thing in a message about where it runs: " on host NAME", or "" on this machine."""
        return "" if self.local else f" on host {self.name}"

    @property
    def run_id(self) -> str:
        return self.names.run_id

    # --- the journal ------------------------------------------------------------------------------

    def record(self, kind: EntryKind, name: str, **fields: Any) -> Entry:
        """Record what is about to be created or changed on this host (see `Journal.record`)."""
        if self.journal is None:
            raise DeploymentError(f"host {self.name}: a probe host creates nothing ({kind} {name})")
        return self.journal.record(Entry(kind, self.name, name, **fields))

    def forget(self, entry: Entry) -> None:
        """Drop `entry` once what it records is gone or put back."""
        if self.journal is not None:
            self.journal.forget(entry)

    # --- processes --------------------------------------------------------------------------------

    def spawn(self, label: str, argv: Sequence[str], *, netns: str | None = None,
              env: Mapping[str, str] | None = None, log_path: PurePosixPath | None = None,
              pipes: bool = False) -> HostProcess:
        """Start `argv` in the background (inside `netns`), in a session of its own, and record it
        by PID and start time: `stop_process`, teardown or the next run after a SIGKILL stops it.

        Its stdout and stderr are appended to `log_path` on the host (or discarded). `pipes`: its
        stdin and stdout are pipes to vsperf (`HostProcess.stdin`/`stdout`: a control channel, a
        serial console; over SSH, the channel), only stderr goes to `log_path`."""
        if self.journal is None:
            raise DeploymentError(f"host {self.name}: a probe host starts nothing ({label})")
        command = list(argv)
        if log_path is not None:
            command = ["sh", "-c", _STDERR_LOG_SCRIPT if pipes else _LOG_SCRIPT, "sh", str(log_path), *command]
        pipe = subprocess.PIPE if pipes else None
        try:
            proc = self.executor.spawn(command, netns=netns, env=env, stdin=pipe,
                                       stdout=pipe if pipes else subprocess.DEVNULL)
        except CommandError as exc:
            raise DeploymentError(f"host {self.name}: {label}: {exc}") from exc
        ticks = getattr(proc, "start_ticks", None)
        if ticks is None:
            stat = read_stat(self.executor, proc.pid)
            ticks = stat.start_ticks if stat is not None else None
        if ticks is not None:  # one that ended already has nothing left to stop
            self.record("process", label, pid=proc.pid, start_ticks=ticks)
        return HostProcess(label, proc.pid, ticks, self.executor, proc, log_path)

    def adopt(self, label: str, pidfile: PurePosixPath, *, timeout_s: float = 10.0,
              log_path: PurePosixPath | None = None) -> HostProcess:
        """Record a daemon that detached itself (`ovs-vswitchd --detach`) by its pid file, once the
        file names a live process; DeploymentError after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while True:
            pid_text = self.executor.run(["cat", "--", str(pidfile)], check=False, timeout_s=10.0).stdout.strip()
            stat = read_stat(self.executor, int(pid_text)) if pid_text.isdigit() else None
            if stat is not None and stat.running:
                self.record("process", label, pid=stat.pid, start_ticks=stat.start_ticks)
                return HostProcess(label, stat.pid, stat.start_ticks, self.executor, None, log_path)
            if time.monotonic() >= deadline:
                where = self.prefix
                raise DeploymentError(f"{where}{label} did not write a live PID to {pidfile} within {timeout_s:g} s")
            time.sleep(_POLL_S)

    def stop_process(self, proc: HostProcess, *, timeout_s: float = 5.0) -> int | None:
        """Stop `proc` by its PID if it still runs (SIGTERM, SIGKILL after `timeout_s`) and forget
        it; its exit code (None: unknown, e.g. the host is lost: the journal keeps it)."""
        try:
            code = proc.terminate(timeout_s)
        except HostLostError:
            return None
        self.forget_process(proc)
        return code

    def forget_process(self, proc: HostProcess) -> None:
        """`proc` has ended (or was stopped some other way, e.g. `ovs-appctl exit`)."""
        self.forget(Entry("process", self.name, proc.label, pid=proc.pid))

    # --- directories and files --------------------------------------------------------------------

    def work_dir(self, name: str) -> PurePosixPath:
        """The run's directory `name` on this host (/tmp/vsperf-RUNID-NAME, mode 700): created,
        recorded, removed at teardown and by the next run after a kill."""
        return self.track_dir(self.names.run_dir(name))

    def log_path(self, name: str) -> PurePosixPath:
        """Where log file `name` of a process goes on this host (its directory exists)."""
        return self.work_dir("logs") / name

    def track_dir(self, path: PurePosixPath) -> PurePosixPath:
        """Create directory `path` on this host (mode 700) and record it: removed at teardown."""
        if path not in self._dirs:
            self.record("dir", str(path))
            self.run(["mkdir", "-p", "-m", "700", "--", str(path)])
            self._dirs.add(path)
        return path

    def released(self) -> None:
        """Everything the journal listed is gone (a release): directories are made anew when asked."""
        self._dirs.clear()

    def dpdk_file_prefix(self, role: str) -> str:
        """A DPDK --file-prefix for process `role` (a few letters), carrying the run's tag: its
        runtime directory (/var/run/dpdk/<prefix>) is recorded and removed at teardown."""
        prefix = self.names.dpdk_prefix(role)
        self.record("dir", f"{DPDK_RUNTIME_ROOT}/{prefix}")
        return prefix

    def write_file(self, path: PurePosixPath, text: str, *, mode: int = 0o600) -> None:
        """Write `text` to file `path` on this host."""
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", prefix="vsperf-", suffix=f"-{path.name}") as tmp:
            tmp.write(text)
            tmp.flush()
            try:
                self.executor.put(Path(tmp.name), path, mode=mode)
            except (CommandError, OSError) as exc:
                raise DeploymentError(f"host {self.name}: cannot write {path}: {exc}") from exc

    def read_text(self, path: PurePosixPath) -> str:
        """The text of file `path` on this host ("" when it cannot be read)."""
        proc = self.executor.run(["cat", "--", str(path)], check=False, timeout_s=20.0)
        return proc.stdout if proc.returncode == 0 else ""

    def stage_file(self, local: Path, name: str) -> PurePosixPath:
        """File `local` of this machine where this host's processes can read it: `local` itself
        on this machine (never modified), else a read-only copy `name` in the run's directory
        "files" there (removed at teardown)."""
        if self.local:
            return PurePosixPath(local)
        remote = self.work_dir("files") / name
        try:
            self.executor.put(local, remote, mode=0o500 if local.stat().st_mode & 0o100 else 0o400)
        except (CommandError, OSError) as exc:
            raise DeploymentError(f"host {self.name}: cannot copy {local} there: {exc}") from exc
        return remote

    def remove_files(self, paths: Sequence[PurePosixPath]) -> None:
        """Remove files `paths` on this host now; no error for those already gone."""
        if paths:
            self.executor.run(["rm", "-f", "--", *map(str, paths)], check=False, timeout_s=20.0)

    def remove_dir(self, path: PurePosixPath) -> None:
        """Remove directory `path` (and what it holds) on this host now; no error when it is gone."""
        self.executor.run(["rm", "-rf", "--", str(path)], check=False, timeout_s=20.0)

    # --- commands and facts -----------------------------------------------------------------------

    def run(self, argv: Sequence[str], *, netns: str | None = None, timeout_s: float = 20.0,
            check: bool = True) -> str:
        """Run `argv` to its end on this host; its stdout. DeploymentError naming the host on failure."""
        try:
            return self.executor.run(argv, netns=netns, timeout_s=timeout_s, check=check).stdout
        except CommandError as exc:
            where = self.prefix
            raise DeploymentError(f"{where}{exc}") from exc

    def which(self, program: str) -> bool:
        """True when `program` is on this host's PATH (or is an executable path there)."""
        try:
            # A fixed script; the program's name is its argument, never part of the script.
            found = self.executor.run(["sh", "-c", 'command -v "$1"', "sh", program], check=False, timeout_s=10.0)
        except VsperfError:
            return False
        return found.returncode == 0

    def require(self, program: str, fix: str) -> None:
        """PrerequisiteError naming `fix` (and this host, when it is not this machine) unless
        `program` is there."""
        if not self.which(program):
            where, there = ("", "") if self.local else (f"host {self.name}: ", " there")
            raise PrerequisiteError(f"{where}{program} is missing: {fix}{there}")

    def cpus(self) -> list[int]:
        """The CPUs a process may use on this host (Cpus_allowed_list of /proc/self/status)."""
        if self._cpus is None:
            out = self.executor.run(["grep", "^Cpus_allowed_list:", "/proc/self/status"], check=False,
                                    timeout_s=10.0).stdout
            self._cpus = parse_cpu_list(out.partition(":")[2])
        return list(self._cpus)

    def cpu_count(self) -> int:
        """Online CPUs of this host (`getconf _NPROCESSORS_ONLN`); DeploymentError naming the
        host when the answer is not a count."""
        out = self.run(["getconf", "_NPROCESSORS_ONLN"], timeout_s=10.0).strip()
        if not out.isdigit() or int(out) < 1:
            raise DeploymentError(f"host {self.name}: getconf _NPROCESSORS_ONLN printed {out!r}, not a CPU count")
        return int(out)

    def kernel_release(self) -> str:
        """`uname -r` of this host."""
        return self.run(["uname", "-r"], timeout_s=10.0).strip()

    def reachable(self) -> bool:
        """False for an SSH host whose connection is gone."""
        alive = getattr(self.executor, "alive", None)
        return bool(alive()) if callable(alive) else True


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
