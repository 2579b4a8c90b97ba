"""The interface of a load generator backend, and where its processes run (`LoadHost`)."""

from __future__ import annotations

import os
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Protocol

from vsperf.context import RunContext
from vsperf.deployment import ComponentInfo
from vsperf.errors import DeploymentError
from vsperf.executor import Process
from vsperf.lab.env import LabEnv
from vsperf.lab.process import ManagedProcess
from vsperf.lifecycle import Started


class LoadHost(Protocol):
    """The host a load generator's processes run on: this machine's lab (`LocalLoadHost`) or a
    testbed's DUT host (`vsperf.testbed.extras.TestbedLoadHost`, which records them in
    the run's journal, so that the next run stops them after a SIGKILL)."""

    @property
    def name(self) -> str | None:
        """The testbed's name for the host (None: this machine)."""
        ...

    def cpu_count(self) -> int:
        """The host's online CPUs."""
        ...

    def spawn(self, label: str, argv: Sequence[str]) -> Process:
        """Start `argv` in the background on the host (`label` names it in messages)."""
        ...

    def stop(self, proc: Process, *, timeout_s: float) -> int | None:
        """Stop `proc` by its PID (SIGTERM, SIGKILL after `timeout_s`); its exit code (None:
        unknown, the host is lost)."""
        ...


class LocalLoadHost:
    """This machine, inside the local lab's deployment: processes started through its `LabEnv`,
    so the run's state file records them (PID + start time) before `spawn` returns. The lab's
    teardown stops one the load generator did not, and after a SIGKILL of vsperf the next run's
    `cleanup_leftovers` does (a load runs in a session of its own: nothing else would)."""

    name = None

    def __init__(self, lab: LabEnv) -> None:
        self.lab = lab
        self._procs: dict[int, ManagedProcess] = {}

    def cpu_count(self) -> int:
        return os.cpu_count() or 1

    def spawn(self, label: str, argv: Sequence[str]) -> Process:
        managed = self.lab.spawn(label, argv)
        if managed.popen is None:  # spawn_process always gives the child's handle
            raise DeploymentError(f"{label}: no process handle")
        self._procs[managed.pid] = managed
        return managed.popen

    def stop(self, proc: Process, *, timeout_s: float) -> int | None:
        managed = self._procs.pop(proc.pid, None)
        if managed is None:
            raise DeploymentError(f"process {proc.pid} was not started by this load host")
        if proc.poll() is not None:  # it exited by itself: its exit code
            self.lab.forget(managed)
            return proc.returncode
        # It and its workers by PID (start time checked), then forgotten by the state file. The
        # stop reaps it, so its exit code (that of a signal) is not known here.
        self.lab.stop(managed, timeout_s=timeout_s)
        return None


class LoadGenerator(Started):
    """Starts a load in `__enter__` (before traffic) and stops it in `__exit__` (after).

    Its processes run on `host` (`LocalLoadHost`: the local lab's; on a testbed the DUT host's;
    none for a probe that only checks prerequisites); commands go through `ctx`'s executor,
    which is that host's."""

    NAME: ClassVar[str]
    ALIASES: ClassVar[tuple[str, ...]] = ()
    # Programs it runs (program -> Debian package): a testbed's preflight looks for them on the DUT host.
    PROGRAMS: ClassVar[Mapping[str, str]] = {}

    def __init__(self, load: Mapping[str, Any], settings: Mapping[str, Any], ctx: RunContext,
                 host: LoadHost | None = None) -> None:
        self.load = load
        self.settings = settings
        self.ctx = ctx
        self._host = host

    @property
    def host(self) -> LoadHost:
        """Where its processes run; DeploymentError for one built without (a prerequisite probe)."""
        if self._host is None:
            raise DeploymentError(f"load generator {self.NAME} has no host to run on")
        return self._host

    def check_prerequisites(self) -> None:
        """Raise PrerequisiteError naming what to install (on this machine)."""

    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def stop(self) -> None: ...

    @abstractmethod
    def component(self) -> ComponentInfo:
        """What the report says about the load."""

    def pids(self) -> dict[str, int]:
        return {}
