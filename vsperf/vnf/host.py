"""Where a VNF runs: the host-side operations a VNF needs (namespaces, links, processes, files).

What differs between the local lab and a testbed's DUT host is how things are created and
recorded for cleanup, never what is created:

- `vsperf.vnf.netns.LabVnfHost` (processes and files: `LabProcessHost` here): the local lab
  (netlink on this machine, processes and directories in the run's state file);
- `vsperf.testbed.vnf_host.TestbedVnfHost`: a testbed's DUT host, every command (`ip netns add`,
  `ip link add ... type veth`, a background process, ...) through that host's executor, each
  namespace, link and process recorded in the run's journal on the controller before it
  exists (processes by PID and start time), its directories under /tmp/vsperf-RUNID-* there.

A VNF's processes (`ProcessHost.spawn`) are `HostProcess` handles: their PID is the host's,
their log file lives on the host, and they are stopped by PID (`ProcessHost.stop_process`).
Paths are the host's: `Path` is used as a POSIX path and only ever handed to the host.
Names are the host's (`VnfNames`): they carry the run id and fit an interface name.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from vsperf.errors import DeploymentError
from vsperf.executor import Executor
from vsperf.lab.env import LabEnv
from vsperf.lab.process import ManagedProcess


@dataclass(frozen=True)
class VnfNames:
    """Names of VNF `index`'s namespace, links and loopback bridge on its host."""

    netns: str
    switch_ifs: tuple[str, str]  # switch end of port 0 and port 1 (in the switch's namespace)
    inner_ifs: tuple[str, str]  # VNF end of port 0 and port 1 (in `netns`)
    bridge: str  # loopback bridge inside `netns`


class HostProcess(Protocol):
    """A background process a VNF started on its host (`ProcessHost.spawn`)."""

    @property
    def label(self) -> str:
        """Its name in messages ("testpmd vnf0")."""
        ...

    @property
    def pid(self) -> int:
        """Its PID on its host."""
        ...

    @property
    def log_path(self) -> Path | None:
        """Its log file (stdout and stderr) on its host."""
        ...

    def alive(self) -> bool:
        """True while it runs."""
        ...

    def returncode(self) -> int | None:
        """Its exit code once it has ended, else None."""
        ...

    def wait(self, timeout_s: float) -> int | None:
        """Wait up to `timeout_s` for its end; its exit code, None when it still runs."""
        ...

    def interrupt(self) -> None:
        """SIGINT to its process group, as a terminal's Ctrl-C (it stops cleanly and reports)."""
        ...

    def log_tail(self, lines: int = 5) -> str:
        """The last `lines` lines of its log, joined with " | " (for error messages)."""
        ...


class ProcessHost(Protocol):
    """A host that runs a component's processes and keeps its files (the local lab or a
    testbed's DUT host)."""

    @property
    def executor(self) -> Executor:
        """The host's executor (commands of the VNF: telemetry, versions, ...)."""
        ...

    def spawn(self, label: str, argv: Sequence[str], *, log_path: Path, netns: str | None = None,
              env: Mapping[str, str] | None = None) -> HostProcess:
        """Start `argv` in the background on the host (inside `netns`), stdout and stderr appended
        to `log_path` on the host, and record it (PID and start time): teardown, or the next run
        after a SIGKILL, stops it if `stop_process` did not."""
        ...

    def stop_process(self, proc: HostProcess, *, timeout_s: float = 5.0) -> None:
        """Stop `proc` by PID if it still runs (SIGTERM, SIGKILL after `timeout_s`) and forget it."""
        ...

    def work_dir(self, name: str) -> Path:
        """A directory `name` on the host for the VNF's files (sockets, logs, images): created,
        its name carries the run id, removed at teardown and by the next run after a kill."""
        ...

    def log_path(self, name: str) -> Path:
        """Where log file `name` of a process goes on the host (its directory exists)."""
        ...

    def dpdk_file_prefix(self, role: str) -> str:
        """A DPDK --file-prefix for the process `role` (a few letters, e.g. "t0"), carrying the run
        id: its runtime directory (/var/run/dpdk/<prefix>) is removed at teardown and after a kill."""
        ...

    def track_dir(self, path: Path) -> Path:
        """Create directory `path` on the host and record it: removed at teardown."""
        ...

    def remove_dir(self, path: Path) -> None:
        """Remove directory `path` (and what it holds) on the host now; no error when it is gone."""
        ...

    def remove_files(self, paths: Sequence[Path]) -> None:
        """Remove files `paths` on the host now; no error for those already gone."""
        ...

    def read_text(self, path: Path) -> str:
        """The text of file `path` on the host ("" when it cannot be read)."""
        ...

    def spawn_console(self, label: str, argv: Sequence[str], *, log_path: Path,
                      netns: str | None = None) -> tuple[HostProcess, IO[bytes], IO[bytes]]:
        """`spawn` with the process's stdin and stdout as pipes to vsperf (a serial console on
        QEMU's stdio; over SSH they are the process's channel); only stderr goes to `log_path`.
        Returns the process, its stdin and its stdout."""
        ...

    def stage_file(self, local: Path, name: str) -> Path:
        """File `local` of this machine where the host's processes can read it: a copy `name` in
        the host's work directory "files" (SFTP), or `local` itself on this machine (never modified)."""
        ...


class VnfHost(ProcessHost, Protocol):
    """The host a namespace VNF is built on (see the module docstring)."""

    @property
    def switch_netns(self) -> str | None:
        """The namespace of the switch (None: the host's own): the switch ends of the veths go there."""
        ...

    def vnf_names(self, index: int) -> VnfNames:
        """The names of VNF `index` on this host."""
        ...

    def add_netns(self, name: str) -> None:
        """Record, then create namespace `name` (IPv6 off, loopback up)."""
        ...

    def add_veth(self, inner: str, netns: str, outer: str, *, mtu_bytes: int) -> None:
        """Record, then create veth `outer` (in the switch's namespace) <-> `inner` (in `netns`), both up."""
        ...

    def add_bridge(self, name: str, netns: str, members: tuple[str, ...]) -> None:
        """Record, then create bridge `name` in `netns` (no STP, no forward delay) with `members`, up."""
        ...

    def remove(self, names: VnfNames) -> None:
        """Delete the namespace (with its bridge and veths) and forget every record of it."""
        ...

    def add_tap(self, name: str, *, mtu_bytes: int) -> None:
        """Record, then create tap device `name` in the switch's namespace, up (a guest's NIC)."""
        ...

    def remove_tap(self, name: str) -> None:
        """Delete tap device `name` and forget its record (a failure is logged, the record kept)."""
        ...


class LabProcessHost:
    """The local lab as a `ProcessHost`: processes through the run's executor, recorded with
    directories in the run's state file (`vsperf.lab.env.LabEnv`)."""

    def __init__(self, lab: LabEnv) -> None:
        self.lab = lab

    @property
    def executor(self) -> Executor:
        """This machine's executor of the run."""
        return self.lab.ctx.executor

    def spawn(self, label: str, argv: Sequence[str], *, log_path: Path, netns: str | None = None,
              env: Mapping[str, str] | None = None) -> ManagedProcess:
        """See `ProcessHost.spawn` (the lab's `LabEnv.spawn`)."""
        return self.lab.spawn(label, argv, netns=netns, env=env, log_path=log_path)

    def stop_process(self, proc: HostProcess, *, timeout_s: float = 5.0) -> None:
        """See `ProcessHost.stop_process`."""
        if not isinstance(proc, ManagedProcess):
            raise TypeError(f"{proc.label} is not a process of the local lab")
        self.lab.stop(proc, timeout_s=timeout_s)

    def work_dir(self, name: str) -> Path:
        """`name`-RUNID inside the run's work directory, in the run's state file."""
        return self.lab.track_dir(self.lab.work_path(f"{name}-{self.lab.ctx.run_id}"))

    def log_path(self, name: str) -> Path:
        """In the run's work directory (kept with the run's other files)."""
        return self.lab.work_path(name)

    def dpdk_file_prefix(self, role: str) -> str:
        """The lab's tag (vsp + run id) and `role`: the lab's leftover sweep knows it."""
        return f"{self.lab.names.tag}{role}"

    def track_dir(self, path: Path) -> Path:
        """See `ProcessHost.track_dir` (the run's state file)."""
        return self.lab.track_dir(path)

    def remove_dir(self, path: Path) -> None:
        """See `ProcessHost.remove_dir`."""
        shutil.rmtree(path, ignore_errors=True)

    def remove_files(self, paths: Sequence[Path]) -> None:
        """See `ProcessHost.remove_files`."""
        for path in paths:
            path.unlink(missing_ok=True)

    def read_text(self, path: Path) -> str:
        """See `ProcessHost.read_text`."""
        try:
            return path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def spawn_console(self, label: str, argv: Sequence[str], *, log_path: Path,
                      netns: str | None = None) -> tuple[HostProcess, IO[bytes], IO[bytes]]:
        """See `ProcessHost.spawn_console` (the lab's `LabEnv.spawn`, console pipes)."""
        proc = self.lab.spawn(label, argv, netns=netns, log_path=log_path, console=True)
        popen = proc.popen
        if popen is None or popen.stdin is None or popen.stdout is None:
            raise DeploymentError(f"{label}: started without console pipes")
        return proc, popen.stdin, popen.stdout

    def stage_file(self, local: Path, name: str) -> Path:
        """See `ProcessHost.stage_file`: this machine reads `local` where it is."""
        return local
