"""The interface of a load generator backend, and where its processes run (`LoadHost`)."""

from __future__ import annotations

import os
import subprocess
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Protocol

from vsperf.context import RunContext
from vsperf.deployment import ComponentInfo
from vsperf.executor import Executor, Process
from vsperf.lifecycle import Started


class LoadHost(Protocol):
    """The host a load generator's processes run on: this machine (`LocalLoadHost`) or a
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
    """This machine: processes of the run's executor, stopped by their PID."""

    name = None

    def __init__(self, executor: Executor) -> None:
        self.executor = executor

    def cpu_count(self) -> int:
        return os.cpu_count() or 1

    def spawn(self, label: str, argv: Sequence[str]) -> Process:
        return self.executor.spawn(argv)

    def stop(self, proc: Process, *, timeout_s: float) -> int | None:
        if proc.poll() is not None:
            return proc.returncode
        # Signals go to its process group (the program and what it forked).
        proc.terminate()
        try:
            return proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait()


class LoadGenerator(Started):
    """Starts a load in `__enter__` (before traffic) and stops it in `__exit__` (after).

    Its processes run on `host` (this machine when not given); commands go through `ctx`'s
    executor, which is that host's."""

    NAME: ClassVar[str]
    ALIASES: ClassVar[tuple[str, ...]] = ()
    # Programs it runs (program -> Debian package): a testbed's preflight looks for them on the DUT host.
    PROGRAMS: ClassVar[Mapping[str, str]] = {}

    def __init__(self, load: Mapping[str, Any], settings: Mapping[str, Any], ctx: RunContext,
                 host: LoadHost | None = None) -> None:
        self.load = load
        self.settings = settings
        self.ctx = ctx
        self.host: LoadHost = host if host is not None else LocalLoadHost(ctx.executor)

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
