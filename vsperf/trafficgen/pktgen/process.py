"""A Pktgen-DPDK process vsperf starts on lab ports: command line, launch, readiness, stop.

One process per network namespace of the generator ports (the lab puts each generator port
in a namespace of its own, and a DPDK veth driver opens its socket in the namespace of the
process), each with the same EAL isolation as every vsperf DPDK process
(vsperf.dpdk.eal.eal_memory_args: no hugepages, no PCI, a private --file-prefix carrying the
run id). Stopped by PID; its DPDK runtime directory is removed after it exited.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from vsperf.dpdk.eal import PortDriver, eal_memory_args, remove_runtime_dir, runtime_dir, veth_vdev
from vsperf.errors import TrafficGenError
from vsperf.executor import Executor
from vsperf.lab.process import ManagedProcess, spawn_process
from vsperf.trafficgen.pktgen import lua
from vsperf.trafficgen.pktgen.client import LuaClient

log = logging.getLogger(__name__)

PTYEXEC_MODULE = "vsperf.trafficgen.pktgen.ptyexec"
_STOP_TIMEOUT_S = 5.0
CONSOLE_NICE = 19
TIMER_NICE = 10


@dataclass(frozen=True)
class PktgenConfig:
    """Command line of one pktgen owning some of the generator ports."""

    binary: str  # absolute path of the pktgen executable
    file_prefix: str  # DPDK runtime directory name, carries the run id
    memory_mb: int  # EAL -m (no hugepages: pktgen's mbuf pools need ~1.5 GiB per port)
    lcores: str  # EAL --lcores: lcore 0 runs pktgen's console and timers, the others its ports
    driver: PortDriver  # DPDK driver attaching each veth (net_af_packet or net_af_xdp)
    ifnames: tuple[str, ...]  # kernel interfaces, in pktgen port order
    lua_port: int  # TCP port of pktgen's Lua socket
    core_map: str = ""  # pktgen -m; empty: lcore 1 handles every port
    extra_eal_args: tuple[str, ...] = ()
    lua_address: str = "localhost"  # where the Lua socket listens (a testbed host: its loopback, 127.0.0.1)

    def __post_init__(self) -> None:
        if not self.ifnames:
            raise ValueError("a pktgen process needs at least one port")
        if not 0 < self.lua_port < 65536:
            raise ValueError(f"Lua socket port {self.lua_port} outside 1..65535")
        if not re.fullmatch(r"[0-9@,()\-]+", self.lcores):
            raise ValueError(f"bad EAL --lcores {self.lcores!r}")

    @property
    def port_map(self) -> str:
        """pktgen's -m: which lcores serve which ports."""
        if self.core_map:
            return self.core_map
        last = len(self.ifnames) - 1
        return "1.0" if last == 0 else f"1.[0-{last}]"


def pktgen_argv(cfg: PktgenConfig, launcher: Sequence[str] = (sys.executable, "-m", PTYEXEC_MODULE)) -> list[str]:
    """The full command line: pktgen under vsperf's pty launcher (`launcher`, see ptyexec), with
    the EAL arguments, one --vdev per interface, and pktgen's own: -P (promiscuous: frames for
    other MACs count too), -T off (no colours), -g (the Lua socket, on `cfg.lua_address`)."""
    eal = [
        "--lcores", cfg.lcores,
        *eal_memory_args(cfg.memory_mb, cfg.file_prefix),
    ]
    for index, ifname in enumerate(cfg.ifnames):
        eal += ["--vdev", veth_vdev(cfg.driver, index, ifname)]
    eal += list(cfg.extra_eal_args)
    app = ["-P", "-g", f"{cfg.lua_address}:{cfg.lua_port}", "-m", cfg.port_map]
    return [*launcher, cfg.binary, *eal, "--", *app]


class PktgenProcess:
    """One running pktgen (see module doc) and the Lua connection to it."""

    def __init__(
        self, executor: Executor, cfg: PktgenConfig, *, netns: str | None, log_path: Path, label: str
    ) -> None:
        self.executor = executor
        self.cfg = cfg
        self.netns = netns
        self.log_path = log_path
        self.label = label
        self.proc: ManagedProcess | None = None
        self.client = LuaClient("127.0.0.1", cfg.lua_port, netns=netns, label=label)

    def start(self, ready_timeout_s: float) -> LuaClient:
        """Launch pktgen and connect to its Lua socket; TrafficGenError with its log if it cannot."""
        self.proc = spawn_process(
            self.executor, self.label, pktgen_argv(self.cfg), netns=self.netns, log_path=self.log_path
        )
        log.info("%s started (pid %d) on %s", self.label, self.proc.pid, ", ".join(self.cfg.ifnames))
        proc = self.proc
        wait_for_lua(self.client, self.label, ready_timeout_s, proc.returncode, lambda: proc.log_tail(4))
        log.debug("%s: console and timer threads %s lowered", self.label, calm_housekeeping(self.proc.pid))
        return self.client

    def check_alive(self) -> None:
        """TrafficGenError when pktgen has exited."""
        if self.proc is not None and not self.proc.alive():
            raise TrafficGenError(f"{self.label} (pid {self.proc.pid}) died: {self.proc.log_tail(4)}")

    def stop(self) -> None:
        """Ask pktgen to quit, then stop it by PID if it did not; remove its runtime directory.
        Safe to call twice and before `start`."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.alive():
            with contextlib.suppress(TrafficGenError, OSError):
                # Closing the connection is enough to end a request; quit() makes pktgen
                # restore its terminal and exit by itself.
                self.client.call(lua.quit_pktgen(), timeout_s=1.0)
            if proc.wait(_STOP_TIMEOUT_S) is None:
                proc.stop(timeout_s=_STOP_TIMEOUT_S)
        self.client.close()
        if proc is not None:
            proc.stop(timeout_s=_STOP_TIMEOUT_S)  # no-op when it is gone; reaps the child
        remove_runtime_dir(self.cfg.file_prefix)

    @property
    def runtime_dir(self) -> Path:
        return runtime_dir(self.cfg.file_prefix)


def wait_for_lua(client: LuaClient, label: str, ready_timeout_s: float, returncode: Callable[[], int | None],
                 log_tail: Callable[[], str]) -> None:
    """Connect `client` to a pktgen that is starting (`returncode`: None while it runs) and turn
    its screen off; TrafficGenError with the end of its log when it exits or stays closed."""
    # The socket appears only once every port is initialised; until then, refused.
    deadline = time.monotonic() + ready_timeout_s
    while True:
        code = returncode()
        if code is not None:
            raise TrafficGenError(f"{label} exited (code {code}) while starting: {log_tail()}")
        try:
            client.connect(2.0)
            break
        except TrafficGenError as exc:
            if time.monotonic() > deadline:
                raise TrafficGenError(
                    f"{label} did not open its Lua socket within {ready_timeout_s:g} s: {log_tail()}"
                ) from exc
            time.sleep(0.3)
    with contextlib.suppress(TrafficGenError):
        client.call(lua.screen_off())


def calm_housekeeping(pid: int, task_root: Path = Path("/proc")) -> list[int]:
    """Lower pktgen's console and timer threads so that its port lcores get the CPUs.

    Both spin: the console (the main thread, lcore 0) polls its terminal with a zero timeout,
    the timer thread (also named "pktgen", started by the main thread with every CPU allowed)
    loops between its once-a-second jobs. Measured on a 2-CPU machine: the timer thread ran on
    the receiving port's CPU and halved it. The console goes to nice CONSOLE_NICE; the timer
    thread is confined to the console's CPUs at nice TIMER_NICE: it still refreshes the
    counters vsperf reads every second (vsperf waits for a refresh, see the backend). Returns
    the thread ids it changed.
    """
    changed = []
    try:
        home = os.sched_getaffinity(pid)
        os.setpriority(os.PRIO_PROCESS, pid, CONSOLE_NICE)
        changed.append(pid)
    except OSError:
        return changed
    for task in sorted((task_root / str(pid) / "task").glob("*")):
        try:
            tid = int(task.name)
            if tid != pid and (task / "comm").read_text().strip() == "pktgen":
                os.sched_setaffinity(tid, home)
                os.setpriority(os.PRIO_PROCESS, tid, TIMER_NICE)
                changed.append(tid)
        except (OSError, ValueError):
            continue  # the thread ended meanwhile
    return changed


def group_by_netns(netns_of_ports: Sequence[str | None]) -> list[tuple[str | None, list[int]]]:
    """Generator ports grouped by namespace, in order of first appearance: one pktgen each."""
    groups: dict[str | None, list[int]] = {}
    for index, netns in enumerate(netns_of_ports):
        groups.setdefault(netns, []).append(index)
    return list(groups.items())
