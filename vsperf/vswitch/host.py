"""Where a virtual switch runs: the host-side services a `VSwitch` needs besides its executor.

The switch classes (Linux bridge, OVS, OVS-DPDK) run every command through the executor of
their `RunContext` (this machine, or a testbed host over SSH). What differs between the local
lab and a testbed host is only where things live and how they are recorded for cleanup:

- `vsperf.lab.env.LabEnv`: the lab's switch namespace on this machine, a directory inside the
  run's work directory, daemons and bridges recorded in the run's state file;
- `vsperf.testbed.switch_host.TestbedSwitchHost`: a testbed's DUT host (its root namespace),
  /tmp/vsperf-RUNID-* directories there, daemons and bridges recorded in the run's port journal
  on the controller.

Paths are the host's: `Path` is used as a POSIX path and only ever handed to the executor.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class Daemon(Protocol):
    """A daemon of the switch (e.g. ovs-vswitchd) on the switch's host, known by its PID."""

    @property
    def label(self) -> str:
        """Its name in messages ("ovs-vswitchd")."""
        ...

    @property
    def pid(self) -> int:
        """Its PID on its host."""
        ...

    def alive(self) -> bool:
        """True while that same process (PID and start time) runs."""
        ...

    def wait(self, timeout_s: float) -> int | None:
        """Wait up to `timeout_s` for it to end (None: still running, or a daemon's unknown code)."""
        ...

    def log_tail(self, lines: int = 5) -> str:
        """The last lines of its log file, for error messages ("" when there is none)."""
        ...


class SwitchHost(Protocol):
    """The host a vswitch is started on (see the module docstring)."""

    @property
    def switch_netns(self) -> str | None:
        """The namespace the switch's commands run in (None: the host's own)."""
        ...

    @property
    def owns_phy_ports(self) -> bool:
        """True when the generator ports are the run's own veths (the local lab), which the switch
        may tune (GRO); False for a testbed's existing interfaces, which it leaves as they are."""
        ...

    def bridge_name(self, index: int) -> str:
        """The name of the switch's bridge `index` (carries the run id)."""
        ...

    def work_path(self, *parts: str) -> Path:
        """A path for the switch's files on its host (not created: see `track_dir`)."""
        ...

    def track_dir(self, path: Path) -> Path:
        """Create directory `path` on the host and record it: removed at teardown."""
        ...

    def write_file(self, path: Path, text: str) -> None:
        """Write `text` to file `path` on the host."""
        ...

    def record_link(self, name: str) -> None:
        """Record interface `name` before it is created: teardown (or the next run) deletes it."""
        ...

    def forget_link(self, name: str) -> None:
        """Interface `name` has been deleted."""
        ...

    def adopt(self, label: str, pidfile: Path, *, timeout_s: float = 10.0, log_path: Path | None = None) -> Daemon:
        """Record a daemon that detached itself (e.g. `ovs-vswitchd --detach`) by its pid file."""
        ...

    def stop(self, proc: Daemon, *, timeout_s: float = 5.0) -> None:
        """Stop `proc` by PID (if that process still runs) and forget it."""
        ...
