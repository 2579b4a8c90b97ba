"""Pktgen-DPDK on a testbed's generator host, reached over SSH (`vsperf.remote`).

vsperf starts pktgen there on the host's cable ends, with the same EAL isolation and port
driver as on the local lab (`vsperf.trafficgen.pktgen.process.pktgen_argv`), through the run's
testbed session (`HostProcesses`), which journals it by PID and start time: a SIGKILLed vsperf
leaves the record and the next run stops it. pktgen needs a terminal on its standard input:
vsperf's pty launcher (`ptyexec`, standard library only) is copied to the run's directory on
the host, /tmp/vsperf-RUNID-pktgen, and run with the host's python3; it execs pktgen under the
same PID. The DPDK file prefix is vsperf-RUNID-pktgenN: after a killed run the next run's
sweep (`vsperf.testbed.session.host_run_dirs_removal`) removes its runtime directory too.

The transmit clock of a trial (vsperf.trafficgen.pktgen.txclock) reads the host's interface
counters through `HostCounters`: a shell loop there, journaled like pktgen, that prints them each
time it reads a line on its SSH channel, and ends with its input.

The Lua socket listens on the host's loopback only (127.0.0.1): vsperf reaches it through a
`direct-tcpip` channel of the SSH connection it already has to the host (what `ssh -L` uses),
so nothing listens on the host's network and nothing else is needed there (sshd's default
`AllowTcpForwarding yes`; a host that forbids it is named in the error).

A testbed whose generator host is `local` (this machine) runs pktgen the same way, through the
same session (journaled: a SIGKILLed vsperf's pktgen is stopped by the next run, as there is
no lab state on a testbed), with the host's executor a local one and the Lua socket reached
directly on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import logging
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

import paramiko

from vsperf.errors import CommandError, PrerequisiteError, TrafficGenError
from vsperf.executor import Executor, Process
from vsperf.remote.ssh import SshExecutor
from vsperf.trafficgen.base import HostProcesses
from vsperf.trafficgen.pktgen import lua, ptyexec
from vsperf.trafficgen.pktgen.client import LuaClient, LuaSocket
from vsperf.trafficgen.pktgen.process import CONSOLE_NICE, TIMER_NICE, PktgenConfig, pktgen_argv, wait_for_lua

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
LUA_MARKER = "Pktgen_Version"  # a string only pktgen's Lua library carries
_STOP_TIMEOUT_S = 5.0
_PTYEXEC = Path(ptyexec.__file__)
# A fixed script: the counter files are its arguments. One line in, one count per file out.
COUNTERS_SCRIPT = 'while read -r _; do cat "$@" || exit 1; done'
# calm_housekeeping (vsperf.trafficgen.pktgen.process) on the host, with renice and taskset: the
# console (thread $1) to nice $2, the timer thread (another thread named pktgen) to the console's
# CPUs at nice $3. A fixed script: the PID and the values are its arguments. Prints the threads changed.
CALM_SCRIPT = ('renice -n "$2" -p "$1" >/dev/null || exit 1; echo "$1"; '
               'home=$(taskset -c -p "$1") || exit 1; home=${home##*: }; '
               'for t in /proc/"$1"/task/*; do tid=${t##*/}; [ "$tid" = "$1" ] && continue; '
               'read -r comm <"$t/comm" 2>/dev/null || continue; [ "$comm" = pktgen ] || continue; '
               'taskset -c -p "$home" "$tid" >/dev/null && renice -n "$3" -p "$tid" >/dev/null && echo "$tid"; done')


def remote_dir(run_id: str) -> PurePosixPath:
    """The run's directory on the generator host (the pty launcher). Its name matches
    /tmp/vsperf-RUNID-*: after a killed run, the next run's testbed session removes it."""
    return PurePosixPath(f"/tmp/vsperf-{run_id}-pktgen")


def file_prefix(run_id: str, index: int) -> str:
    """DPDK --file-prefix of pktgen `index` of run `run_id` on a testbed host: its runtime
    directory /var/run/dpdk/vsperf-RUNID-pktgenN is swept by the next run after a kill."""
    return f"vsperf-{run_id}-pktgen{index}"


def launcher(run_id: str) -> list[str]:
    """The pty launcher's command on the host (see the module doc)."""
    return ["python3", str(remote_dir(run_id) / _PTYEXEC.name)]


def tunnel_opener(executor: SshExecutor, port: int) -> Callable[[float], LuaSocket]:
    """Opens a `direct-tcpip` channel to 127.0.0.1:`port` of the executor's host over its SSH
    connection; a refused or forbidden forward is an OSError (the client retries, then reports)."""

    def open_channel(timeout_s: float) -> LuaSocket:
        transport = executor.connection.client().get_transport()
        if transport is None:
            raise ConnectionError(f"no SSH connection to host {executor.host}")
        try:
            return transport.open_channel("direct-tcpip", (LOOPBACK, port), (LOOPBACK, 0), timeout=timeout_s)
        except paramiko.ChannelException as exc:  # the host's sshd could not (or may not) connect
            raise ConnectionRefusedError(f"host {executor.host}: SSH forward to {LOOPBACK}:{port} refused "
                                         f"({exc.text or exc.code}; sshd needs AllowTcpForwarding)") from exc
        except (paramiko.SSHException, EOFError) as exc:
            raise ConnectionError(f"host {executor.host}: {exc}") from exc

    return open_channel


def tunnel_argv(executor: SshExecutor, port: int) -> list[str]:
    """The OpenSSH command that opens the same forward (`ssh -N -L`), for the command log."""
    argv = executor.replay.argv("")[:-2]  # without "-- COMMAND"
    return [*argv[:-1], "-N", "-L", f"{port}:{LOOPBACK}:{port}", argv[-1]]


def _log_tail(path: Path, lines: int = 4) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return " | ".join(text.strip().splitlines()[-lines:])


class HostCounters:
    """The transmit counters of interfaces of the generator host, read on request (see the
    module doc); `tx_packets` is called from one thread at a time (the trial's clock)."""

    def __init__(self, processes: HostProcesses, host: str, ifnames: Sequence[str]) -> None:
        self.processes = processes
        self.host = host
        self.ifnames = list(ifnames)
        paths = [f"/sys/class/net/{name}/statistics/tx_packets" for name in self.ifnames]
        self.proc = processes.spawn(host, "pktgen transmit counters", ["sh", "-c", COUNTERS_SCRIPT, "sh", *paths],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def tx_packets(self) -> dict[str, int]:
        """Interface name -> frames it sent, read on the host now."""
        stdin, stdout = self.proc.stdin, self.proc.stdout
        if stdin is None or stdout is None:
            raise TrafficGenError(f"host {self.host}: the transmit counter reader is closed")
        try:
            stdin.write(b"\n")
            stdin.flush()
            return {name: int(stdout.readline()) for name in self.ifnames}
        except (OSError, EOFError, ValueError) as exc:
            raise TrafficGenError(f"host {self.host}: cannot read the transmit counters of "
                                  f"{', '.join(self.ifnames)}: {exc}") from exc

    def close(self) -> None:
        """End the loop (the end of its input) and forget it."""
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError, EOFError):
                self.proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(_STOP_TIMEOUT_S)
        self.processes.stop_process(self.host, self.proc)


class RemotePktgen:
    """One pktgen on the generator host `host` (`executor` runs there: over SSH, or this machine
    for a testbed's `local` host) and its Lua connection; the same `start`/`check_alive`/`stop`
    as `PktgenProcess`, journaled by the testbed session either way."""

    def __init__(self, executor: Executor, processes: HostProcesses, host: str, cfg: PktgenConfig, *,
                 run_id: str, log_path: Path, label: str) -> None:
        self.executor, self.processes, self.host = executor, processes, host
        self.cfg, self.run_id, self.log_path, self.label = cfg, run_id, log_path, label
        self.proc: Process | None = None
        self.counters: HostCounters | None = None
        # A `local` generator host is this machine: its loopback is reached directly.
        self.ssh = executor if isinstance(executor, SshExecutor) else None
        self.client = LuaClient(LOOPBACK, cfg.lua_port, label=f"{label} on host {host}",
                                opener=tunnel_opener(self.ssh, cfg.lua_port) if self.ssh else None)

    def start(self, ready_timeout_s: float) -> LuaClient:
        """Stage the launcher, start pktgen on the host and connect to its Lua socket."""
        stage(self.executor, self.run_id, self.cfg.binary)
        with self.log_path.open("ab") as out:
            self.proc = self.processes.spawn(self.host, self.label, pktgen_argv(self.cfg, launcher(self.run_id)),
                                             stdout=out, stderr=subprocess.STDOUT)
        log.info("%s started on host %s (pid %d) on %s", self.label, self.host, self.proc.pid,
                 ", ".join(self.cfg.ifnames))
        if self.ssh is not None:
            self.ssh.command_log.record(tunnel_argv(self.ssh, self.cfg.lua_port), None,
                                        note=f"[{self.host}] [Lua socket] ")
        wait_for_lua(self.client, self.client.label, ready_timeout_s, self.proc.poll, lambda: _log_tail(self.log_path))
        self.counters = HostCounters(self.processes, self.host, self.cfg.ifnames)
        calmed = self.executor.run(["sh", "-c", CALM_SCRIPT, "sh", str(self.proc.pid), str(CONSOLE_NICE),
                                    str(TIMER_NICE)], check=False, timeout_s=10)
        # Best effort, as on the local lab: without renice/taskset there, pktgen runs as it is.
        log.debug("%s: console and timer threads %s lowered", self.client.label, calmed.stdout.split())
        return self.client

    def check_alive(self) -> None:
        """TrafficGenError when pktgen has exited (HostLostError when the host is gone)."""
        if self.proc is not None and self.proc.poll() is not None:
            raise TrafficGenError(f"{self.client.label} (pid {self.proc.pid}) died: {_log_tail(self.log_path)}")

    def stop(self) -> None:
        """Ask pktgen to quit, stop it by PID if it did not, remove its runtime directory and the
        run's directory on the host. Safe to call twice and before `start`."""
        proc, self.proc = self.proc, None
        counters, self.counters = self.counters, None
        if counters is not None:
            counters.close()
        if proc is not None:
            with contextlib.suppress(TrafficGenError, OSError):
                self.client.call(lua.quit_pktgen(), timeout_s=1.0)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(_STOP_TIMEOUT_S)
            self.processes.stop_process(self.host, proc, timeout_s=_STOP_TIMEOUT_S)
        self.client.close()
        unstage(self.executor, self.run_id, [self.cfg.file_prefix])


def stage(executor: Executor, run_id: str, binary: str) -> None:
    """Check that `binary` on the host is a pktgen with Lua, copy the pty launcher there."""
    # A fixed script: the binary is its argument. `command -v` finds a name on the host's PATH.
    found = executor.run(["sh", "-c", 'p=$(command -v "$1") && grep -q -F "$2" "$p"', "sh", binary, LUA_MARKER],
                         check=False, timeout_s=30)
    if found.returncode != 0:
        raise PrerequisiteError(f"host {executor.host}: {binary} is not a pktgen built with Lua: rebuild "
                                f"Pktgen-DPDK with meson -Denable_lua=true there (docs/trafficgens.rst)")
    directory = remote_dir(run_id)
    try:
        executor.run(["mkdir", "-p", "-m", "700", str(directory)], timeout_s=10)
        executor.put(_PTYEXEC, directory / _PTYEXEC.name, mode=0o600)
    except CommandError as exc:
        raise TrafficGenError(f"host {executor.host}: cannot stage pktgen's launcher: {exc}") from exc


def unstage(executor: Executor, run_id: str, prefixes: Sequence[str]) -> None:
    """Remove the run's directory and the DPDK runtime directories of `prefixes` on the host."""
    paths = [str(remote_dir(run_id)), *(f"/var/run/dpdk/{p}" for p in prefixes)]
    try:
        executor.run(["rm", "-rf", "--", *paths], check=False, timeout_s=10)
    except CommandError as exc:
        log.warning("host %s: could not remove %s: %s", executor.host, " ".join(paths), exc)
