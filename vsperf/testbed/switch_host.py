"""A testbed's DUT host as the host of the lab's switch classes (vsperf.vswitch.host.SwitchHost).

The Linux bridge, OVS and OVS-DPDK classes of `vsperf.vswitch` run every command through the
executor of their context; for a testbed run that is the DUT host's (SSH, or this machine for a
host `local`). This module gives them the rest, the testbed's way:

- the switch runs in the host's own namespace (its existing, cabled interfaces are there);
- its files live in /tmp/vsperf-RUNID-NAME on the host (removed at teardown, and by the next
  run after a killed one: `vsperf.testbed.session.host_run_dirs_removal`);
- interfaces it creates (a bridge) and daemons it starts (ovsdb-server, ovs-vswitchd) are
  recorded in the run's port journal on the controller before or as soon as they exist, so the
  next run deletes / stops them (by PID and start time) when this one could not;
- the generator ports are the testbed's interfaces: the switch must not tune them
  (`owns_phy_ports` is False); their state is the journal's business (vsperf.testbed.ports).
"""

from __future__ import annotations

import logging
import shlex
import signal
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from vsperf.errors import CommandError, DeploymentError
from vsperf.executor import Executor
from vsperf.remote.command import parse_stat_line, signal_command
from vsperf.testbed.session import TestbedSession
from vsperf.vswitch.host import Daemon

log = logging.getLogger(__name__)

_POLL_S = 0.1


def host_bridge_name(run_id: str, index: int = 0) -> str:
    """Bridge `index` of the run on a testbed host: the run id in its name (an interface name:
    15 characters at most)."""
    return f"vsperf{run_id}b{index}"[:15]


def host_dir(run_id: str, name: str) -> Path:
    """Directory `name` of run `run_id` on a testbed host (/tmp/vsperf-RUNID-NAME)."""
    if not name or "/" in name:
        raise ValueError(f"bad directory name {name!r}")
    return Path(f"/tmp/vsperf-{run_id}-{name}")


@dataclass
class RemoteDaemon:
    """A detached daemon on a testbed host: its PID and start time (clock ticks) there."""

    label: str
    pid: int
    start_ticks: int | None
    executor: Executor
    log_path: Path | None = None

    def alive(self) -> bool:
        """True while the process with this PID and start time runs on the host."""
        proc = self.executor.run(["cat", f"/proc/{self.pid}/stat"], check=False, timeout_s=10.0)
        if proc.returncode != 0 or not proc.stdout.strip():
            return False
        _pid, ticks = parse_stat_line(proc.stdout)
        return self.start_ticks is None or ticks == self.start_ticks

    def wait(self, timeout_s: float) -> int | None:
        """Poll until it has ended or `timeout_s` passed (a daemon's exit code is unknown: None)."""
        deadline = time.monotonic() + timeout_s
        while self.alive() and time.monotonic() < deadline:
            time.sleep(_POLL_S)
        return None

    def log_tail(self, lines: int = 5) -> str:
        """The last lines of its log file on the host."""
        if self.log_path is None:
            return ""
        proc = self.executor.run(["tail", "-n", str(lines), str(self.log_path)], check=False, timeout_s=10.0)
        return " | ".join(proc.stdout.strip().splitlines()) if proc.returncode == 0 else ""

    def signal(self, sig: int) -> None:
        """Send `sig` to its process group, only while it is still the same process."""
        self.executor.run(shlex.split(signal_command(self.pid, self.start_ticks, sig)), check=False, timeout_s=10.0)


class TestbedSwitchHost:
    """The DUT host of a testbed run, as `vsperf.vswitch.host.SwitchHost`."""

    __test__ = False
    switch_netns: str | None = None  # the host's own namespace: its interfaces are there
    owns_phy_ports = False

    def __init__(self, session: TestbedSession, host: str, run_id: str) -> None:
        self.session = session
        self.host = host
        self.run_id = run_id
        self._dirs: list[Path] = []

    @property
    def executor(self) -> Executor:
        """The host's executor."""
        return self.session.executors[self.host]

    def bridge_name(self, index: int) -> str:
        return host_bridge_name(self.run_id, index)

    def work_path(self, *parts: str) -> Path:
        return host_dir(self.run_id, "-".join(parts))

    def _run(self, argv: list[str], *, timeout_s: float = 20.0) -> None:
        try:
            self.executor.run(argv, timeout_s=timeout_s)
        except CommandError as exc:
            raise DeploymentError(f"host {self.host}: {exc}") from exc

    def track_dir(self, path: Path) -> Path:
        self._dirs.append(path)
        self._run(["mkdir", "-p", "-m", "700", "--", str(path)])
        return path

    def write_file(self, path: Path, text: str) -> None:
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", prefix="vsperf-", suffix=f"-{path.name}") as tmp:
            tmp.write(text)
            tmp.flush()
            self.executor.put(Path(tmp.name), str(path), mode=0o600)

    def record_link(self, name: str) -> None:
        self.session.journal.record_link(self.host, name)

    def forget_link(self, name: str) -> None:
        self.session.journal.forget_link(self.host, name)

    def adopt(self, label: str, pidfile: Path, *, timeout_s: float = 10.0, log_path: Path | None = None) -> Daemon:
        """Journal a daemon that detached itself, by its pid file on the host (PID and start time)."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                pid, ticks = self.session.adopt_daemon(self.host, str(pidfile), label)
                return RemoteDaemon(label, pid, ticks, self.executor, log_path)
            except (CommandError, ValueError) as exc:
                if time.monotonic() >= deadline:
                    raise DeploymentError(f"host {self.host}: {label} did not write a live PID to {pidfile} "
                                          f"within {timeout_s:g} s: {exc}") from exc
                time.sleep(_POLL_S)

    def stop(self, proc: Daemon, *, timeout_s: float = 5.0) -> None:
        """SIGTERM, then SIGKILL after `timeout_s`, to `proc` if it still runs; then forget it."""
        if not isinstance(proc, RemoteDaemon):
            raise TypeError(f"{proc.label} is not a daemon of host {self.host}")
        if proc.alive():
            proc.signal(signal.SIGTERM)
            proc.wait(timeout_s)
            if proc.alive():
                proc.signal(signal.SIGKILL)
        self.session.forget_daemon(self.host, proc.pid)

    def remove_dirs(self) -> None:
        """Remove the directories made by `track_dir` (teardown; a failure is logged)."""
        if not self._dirs:
            return
        try:
            self._run(["rm", "-rf", "--", *map(str, reversed(self._dirs))])
            self._dirs.clear()
        except DeploymentError as exc:
            log.warning("%s (the next run removes /tmp/vsperf-%s-*)", exc, self.run_id)
