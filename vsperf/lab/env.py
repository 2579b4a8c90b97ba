"""The handle a deployment gives its vswitch and VNFs: names, run context, resource recording.

Everything a component creates goes through here (or is recorded here right after it is
created) so that the run's state file always lists it: teardown and `cleanup_leftovers` can
then remove it even when the component itself never gets to stop it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vsperf.context import RunContext
from vsperf.lab.names import LabNames
from vsperf.lab.process import ManagedProcess, adopt_pidfile, spawn_process
from vsperf.lab.state import Resource, RunState


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

    def work_path(self, *parts: str) -> Path:
        """A path inside the run's work directory (created on demand by the caller)."""
        return self.ctx.work_dir.joinpath(*parts)

    def spawn(
        self,
        label: str,
        argv: Sequence[str],
        *,
        netns: str | None = None,
        env: Mapping[str, str] | None = None,
        log_path: Path | None = None,
    ) -> ManagedProcess:
        """Start a background process through the run's executor and record it."""
        proc = spawn_process(self.ctx.executor, label, argv, netns=netns, env=env, log_path=log_path)
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

    def stop(self, proc: ManagedProcess, *, timeout_s: float = 5.0) -> None:
        """Stop `proc` by PID (if it still runs) and forget it."""
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
