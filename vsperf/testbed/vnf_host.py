"""A testbed's DUT host as the host of VNFs (vsperf.vnf.host.VnfHost).

The netns VNF (`vsperf.vnf.netns.NetnsVnf`) builds the same namespace, veths and loopback bridge
on a testbed's DUT host as on the local lab, here with `ip` commands through the host's executor
(SSH, or this machine for a host `local`); the VNFs' processes (testpmd, ...) run there too:

- the namespace `vst<RUNID>v<i>` and the switch ends of its veths (`vst<RUNID>v<i>s<k>`, in the
  host's own namespace, where the switch runs) are recorded in the run's journal on the
  controller before they exist, so the next run deletes them when this one could not (a
  SIGKILL, a lost host); the VNF ends and the bridge live inside the namespace and go with it;
- the prefix `vst` (not the lab's `vsp`) keeps them apart from what a local lab on the same
  host creates and sweeps;
- processes start through `TestbedSession.spawn` (journaled by PID and start time: the next run
  stops them after a SIGKILL), their output appended to a log file on the host;
- files live in /tmp/vsperf-RUNID-NAME on the host and DPDK runtime directories are
  /var/run/dpdk/vsperf-RUNID-ROLE: removed at teardown (`remove_dirs`), and by the next run
  after a killed one (`vsperf.testbed.session.host_run_dirs_removal`).
"""

from __future__ import annotations

import logging
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from vsperf.errors import CommandError, DeploymentError
from vsperf.executor import Executor, Process
from vsperf.lab.names import check_run_id
from vsperf.testbed.session import TestbedSession
from vsperf.testbed.switch_host import TestbedSwitchHost, host_dir
from vsperf.vnf.host import HostProcess, VnfNames

log = logging.getLogger(__name__)

PREFIX = "vst"  # testbed VNF names: PREFIX + run id + role; 15 characters at most


def host_vnf_names(run_id: str, index: int) -> VnfNames:
    """The names of VNF `index` of run `run_id` on a testbed host."""
    base = f"{PREFIX}{check_run_id(run_id)}v{index}"
    return VnfNames(base, (f"{base}s0", f"{base}s1"), (f"{base}i0", f"{base}i1"), f"{base}b")


# A fixed script (its arguments are never part of it): output appended to the log file "$1", then
# the command itself in place of the shell (`exec`: the PID and start time stay the command's).
_LOG_SCRIPT = 'f=$1; shift; exec "$@" >>"$f" 2>&1'


# The same with only stderr to the log: stdin and stdout stay the channel's (a console).
_STDERR_LOG_SCRIPT = 'f=$1; shift; exec "$@" 2>>"$f"'


def logged_argv(argv: Sequence[str], log_path: Path) -> list[str]:
    """`argv` with its stdout and stderr appended to `log_path` on its host."""
    return ["sh", "-c", _LOG_SCRIPT, "sh", str(log_path), *argv]


@dataclass
class TestbedProcess:
    """A background process of a VNF on a testbed host (`vsperf.vnf.host.HostProcess`)."""

    __test__ = False

    label: str
    process: Process  # the executor's handle (its PID is the host's)
    executor: Executor
    log_path: Path | None

    @property
    def pid(self) -> int:
        """Its PID on the host."""
        return self.process.pid

    def alive(self) -> bool:
        """True while it runs (its channel has no exit status yet: no command on the host)."""
        return self.process.poll() is None

    def returncode(self) -> int | None:
        """Its exit code once it has ended."""
        return self.process.poll()

    def wait(self, timeout_s: float) -> int | None:
        """Its exit code, or None when it still runs after `timeout_s`."""
        try:
            return self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def interrupt(self) -> None:
        """SIGINT to its process group on the host."""
        self.process.send_signal(signal.SIGINT)

    def log_tail(self, lines: int = 5) -> str:
        """The last lines of its log file on the host."""
        if self.log_path is None:
            return ""
        proc = self.executor.run(["tail", "-n", str(lines), str(self.log_path)], check=False, timeout_s=10.0)
        return " | ".join(proc.stdout.strip().splitlines()) if proc.returncode == 0 else ""


class TestbedVnfHost:
    """The DUT host of a testbed run, as `vsperf.vnf.host.VnfHost`."""

    __test__ = False
    switch_netns: str | None = None  # the switch runs in the host's own namespace

    def __init__(self, session: TestbedSession, host: str, run_id: str) -> None:
        self.session = session
        self.host = host
        self.run_id = run_id
        # The VNFs' directories are made and removed as the switch's are (their own list).
        self._dirs = TestbedSwitchHost(session, host, run_id)
        self._tracked: set[Path] = set()

    @property
    def executor(self) -> Executor:
        """The host's executor."""
        return self.session.executors[self.host]

    def vnf_names(self, index: int) -> VnfNames:
        return host_vnf_names(self.run_id, index)

    def _run(self, argv: list[str], *, netns: str | None = None, check: bool = True) -> None:
        try:
            self.executor.run(argv, netns=netns, check=check, timeout_s=20.0)
        except CommandError as exc:
            raise DeploymentError(f"host {self.host}: {exc}") from exc

    def add_netns(self, name: str) -> None:
        self.session.journal.record_netns(self.host, name)
        self._run(["ip", "netns", "add", name])
        # No IPv6 (no router solicitations, no ND: no frames of its own on the loop), loopback up.
        self._run(["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                   "net.ipv6.conf.default.disable_ipv6=1"], netns=name)
        self._run(["ip", "link", "set", "dev", "lo", "up"], netns=name)

    def add_veth(self, inner: str, netns: str, outer: str, *, mtu_bytes: int) -> None:
        # One record covers the pair: deleting either end deletes both.
        self.session.journal.record_link(self.host, outer)
        mtu = str(mtu_bytes)
        self._run(["ip", "link", "add", outer, "mtu", mtu, "type", "veth", "peer", "name", inner, "mtu", mtu,
                   "netns", netns])
        self._run(["ip", "link", "set", "dev", outer, "up"])
        self._run(["ip", "link", "set", "dev", inner, "up"], netns=netns)

    def add_bridge(self, name: str, netns: str, members: tuple[str, ...]) -> None:
        # Inside the VNF's namespace: deleted with it, no record of its own.
        self._run(["ip", "link", "add", "name", name, "type", "bridge", "stp_state", "0", "forward_delay", "0"],
                  netns=netns)
        for member in members:
            self._run(["ip", "link", "set", "dev", member, "master", name], netns=netns)
        self._run(["ip", "link", "set", "dev", name, "up"], netns=netns)

    def remove(self, names: VnfNames) -> None:
        # The veths first: deleting a pair is synchronous, while a namespace's interfaces go
        # with it in the kernel's own time (its switch ends would linger a moment).
        journal = self.session.journal
        for outer in names.switch_ifs:
            self._run(["ip", "link", "del", "dev", outer], check=False)
            journal.forget_link(self.host, outer)
        self._run(["ip", "netns", "del", names.netns])
        journal.forget_netns(self.host, names.netns)

    # --- processes and files (vsperf.vnf.host.ProcessHost) ------------------------------------

    def spawn(self, label: str, argv: Sequence[str], *, log_path: Path, netns: str | None = None,
              env: Mapping[str, str] | None = None) -> TestbedProcess:
        """Start `argv` on the host (`TestbedSession.spawn`: journaled by PID and start time), its
        output appended to `log_path` there."""
        try:
            proc = self.session.spawn(self.host, label, logged_argv(argv, log_path), netns=netns, env=env)
        except CommandError as exc:
            raise DeploymentError(f"host {self.host}: {label}: {exc}") from exc
        return TestbedProcess(label, proc, self.executor, log_path)

    def stop_process(self, proc: HostProcess, *, timeout_s: float = 5.0) -> None:
        """Stop `proc` by its PID on the host (SIGTERM, then SIGKILL) and forget its record."""
        if not isinstance(proc, TestbedProcess):
            raise TypeError(f"{proc.label} is not a process of host {self.host}")
        self.session.stop_process(self.host, proc.process, timeout_s=timeout_s)

    def work_dir(self, name: str) -> Path:
        """/tmp/vsperf-RUNID-NAME on the host (created; removed by `remove_dirs`)."""
        return self.track_dir(host_dir(self.run_id, name))

    def log_path(self, name: str) -> Path:
        """In the host's work directory "vnf" (removed with it at teardown)."""
        return self.work_dir("vnf") / name

    def dpdk_file_prefix(self, role: str) -> str:
        """vsperf-RUNID-ROLE: `host_run_dirs_removal` finds its runtime directory after a kill."""
        return f"vsperf-{self.run_id}-{role}"

    def track_dir(self, path: Path) -> Path:
        """Create `path` on the host (mode 700) and remove it at teardown (`remove_dirs`)."""
        if path not in self._tracked:
            self._dirs.track_dir(path)
            self._tracked.add(path)
        return path

    def remove_dir(self, path: Path) -> None:
        """`rm -rf` of `path` on the host (a failure is left to teardown and the next run)."""
        self._run(["rm", "-rf", "--", str(path)], check=False)

    def remove_files(self, paths: Sequence[Path]) -> None:
        """`rm -f` of `paths` on the host."""
        if paths:
            self._run(["rm", "-f", "--", *map(str, paths)], check=False)

    def read_text(self, path: Path) -> str:
        """`cat` of `path` on the host ("" when it cannot be read)."""
        proc = self.executor.run(["cat", "--", str(path)], check=False, timeout_s=20.0)
        return proc.stdout if proc.returncode == 0 else ""

    def spawn_console(self, label: str, argv: Sequence[str], *, log_path: Path,
                      netns: str | None = None) -> tuple[HostProcess, IO[bytes], IO[bytes]]:
        """`spawn` whose stdin and stdout are its SSH channel (a serial console on QEMU's stdio:
        nothing else is needed on the host); only stderr is appended to `log_path` there."""
        try:
            proc = self.session.spawn(self.host, label, ["sh", "-c", _STDERR_LOG_SCRIPT, "sh", str(log_path), *argv],
                                      netns=netns, stdout=subprocess.PIPE, stdin=subprocess.PIPE)
        except CommandError as exc:
            raise DeploymentError(f"host {self.host}: {label}: {exc}") from exc
        if proc.stdin is None or proc.stdout is None:
            raise DeploymentError(f"host {self.host}: {label}: started without console pipes")
        return TestbedProcess(label, proc, self.executor, log_path), proc.stdin, proc.stdout

    def stage_file(self, local: Path, name: str) -> Path:
        """A copy of `local` in /tmp/vsperf-RUNID-files on the host (SFTP), read-only there."""
        remote = self.work_dir("files") / name
        try:
            self.executor.put(local, str(remote), mode=0o400)
        except CommandError as exc:
            raise DeploymentError(f"host {self.host}: cannot copy {local} there: {exc}") from exc
        return remote

    def add_tap(self, name: str, *, mtu_bytes: int) -> None:
        self.session.journal.record_link(self.host, name)
        self._run(["ip", "tuntap", "add", "dev", name, "mode", "tap"])
        self._run(["ip", "link", "set", "dev", name, "mtu", str(mtu_bytes), "up"])

    def remove_tap(self, name: str) -> None:
        try:
            self._run(["ip", "link", "del", "dev", name])
        except DeploymentError as exc:  # the journal keeps it: teardown's restore tries again
            log.warning("%s", exc)
            return
        self.session.journal.forget_link(self.host, name)

    def remove_dirs(self) -> None:
        """Remove the directories of `track_dir`/`work_dir` (teardown; a failure is logged: the
        next run removes them)."""
        self._dirs.remove_dirs()
        self._tracked.clear()
