"""The handle a deployment gives its vswitch and VNFs: names, run context, resource recording.

Everything a component creates goes through here (or is recorded here right after it is
created) so that the run's state file always lists it: teardown and `cleanup_leftovers` can
then remove it even when the component itself never gets to stop it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Unpack

from vsperf.context import RunContext
from vsperf.lab.names import LabNames
from vsperf.lab.process import ManagedProcess, SpawnOptions, adopt_pidfile, spawn_process
from vsperf.lab.state import Resource, RunState
from vsperf.vswitch.host import Daemon


def process_resource(proc: ManagedProcess) -> Resource:
    """The state-file record of `proc`."""
    return Resource("process", proc.label, pid=proc.pid, start_time=proc.start_time)


@dataclass
class LabEnv:
    """Names, context and resource recording of one run's lab."""

    ctx: RunContext
    names: LabNames
    state: RunState

    @property
    def switch_netns(self) -> str:
        """The namespace the switch runs in; switch ends of every port live here."""
        return self.names.switch_netns

    # The lab's generator ports are veths it created: the switch may tune their switch ends.
    owns_phy_ports = True

    def bridge_name(self, index: int) -> str:
        """Bridge `index` of the switch (vsperf.vswitch.host.SwitchHost)."""
        return self.names.bridge(index)

    def write_file(self, path: Path, text: str) -> None:
        """Write a file of the switch (this machine's file system)."""
        path.write_text(text, encoding="utf-8")

    def record_link(self, name: str) -> None:
        """Record interface `name` of the switch namespace before it is created."""
        self.state.add(Resource("link", name, netns=self.switch_netns))

    def forget_link(self, name: str) -> None:
        """Interface `name` of the switch namespace has been deleted."""
        self.state.discard(Resource("link", name, netns=self.switch_netns))

    def work_path(self, *parts: str) -> Path:
        """A path inside the run's work directory (created on demand by the caller)."""
        return self.ctx.work_dir.joinpath(*parts)

    def spawn(self, label: str, argv: Sequence[str], **options: Unpack[SpawnOptions]) -> ManagedProcess:
        """Start a background process through the run's executor (`spawn_process`) and record it."""
        proc = spawn_process(self.ctx.executor, label, argv, **options)
        if proc.start_time:
            self.state.add(process_resource(proc))
        return proc

    def adopt(
        self, label: str, pidfile: Path, *, timeout_s: float = 10.0, log_path: Path | None = None
    ) -> ManagedProcess:
        """Record a daemon that detached itself (e.g. `ovs-vswitchd --detach`) by its pid file."""
        proc = adopt_pidfile(label, pidfile, timeout_s=timeout_s, log_path=log_path)
        self.state.add(process_resource(proc))
        return proc

    def stop(self, proc: Daemon, *, timeout_s: float = 5.0) -> None:
        """Stop `proc` (a process of this lab: a `ManagedProcess`) by PID if it still runs, and forget it."""
        if not isinstance(proc, ManagedProcess):
            raise TypeError(f"{proc.label} is not a process of the local lab")
        proc.stop(timeout_s=timeout_s)
        self.state.discard(process_resource(proc))

    def forget(self, proc: ManagedProcess) -> None:
        """Forget `proc` after it has been stopped some other way (e.g. `ovs-appctl exit`)."""
        self.state.discard(process_resource(proc))

    def track_dir(self, path: Path) -> Path:
        """Create `path` and record it: removed recursively at teardown."""
        path.mkdir(parents=True, exist_ok=True)
        self.state.add(Resource("dir", str(path.resolve())))
        return path
