"""A Pktgen-DPDK process vsperf starts on the generator host: command line, launch, readiness, stop.

One process per network namespace of the generator ports (the local lab puts each generator
port in a namespace of its own, and a DPDK veth driver opens its socket in the namespace of the
process; a testbed's ports are its generator host's own interfaces: one pktgen owns them all),
each with the same EAL isolation as every vsperf DPDK process (vsperf.dpdk.eal.eal_memory_args:
no hugepages, no PCI, a private --file-prefix carrying the run id). It runs through the host
(`vsperf.host.Host`: in the run's journal by PID and start time), under vsperf's pty launcher
(`ptyexec`, standard library only, run with the host's python3: pktgen needs a terminal), which
execs pktgen under the same PID. Its Lua socket listens on the host's loopback, reached through
the host's executor (`open_tcp`: a socket in the port's namespace here, a channel of the SSH
connection on a testbed host). Stopped by PID; its DPDK runtime directory is removed after it
exited.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from vsperf.config.schema_lab import PortDriver
from vsperf.dpdk.eal import eal_memory_args, runtime_dir, veth_vdev
from vsperf.errors import DeploymentError, TrafficGenError
from vsperf.host.host import Host
from vsperf.host.process import HostProcess
from vsperf.trafficgen.pktgen import lua, ptyexec
from vsperf.trafficgen.pktgen.client import LuaClient

log = logging.getLogger(__name__)

_PTYEXEC = Path(ptyexec.__file__)
_STOP_TIMEOUT_S = 5.0
CONSOLE_NICE = 19
TIMER_NICE = 10
LOOPBACK = "127.0.0.1"
# Lower pktgen's console and timer threads (see `PktgenProcess.start`): the console (thread $1)
# to nice $2, the timer thread (another thread named pktgen) to the console's CPUs at nice $3. A
# fixed script: the PID and the values are its arguments. Prints the threads it changed.
CALM_SCRIPT = ('renice -n "$2" -p "$1" >/dev/null || exit 1; echo "$1"; '
               'home=$(taskset -c -p "$1") || exit 1; home=${home##*: }; '
               'for t in /proc/"$1"/task/*; do tid=${t##*/}; [ "$tid" = "$1" ] && continue; '
               'read -r comm <"$t/comm" 2>/dev/null || continue; [ "$comm" = pktgen ] || continue; '
               'taskset -c -p "$home" "$tid" >/dev/null && renice -n "$3" -p "$tid" >/dev/null && echo "$tid"; done')


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
    lua_address: str = LOOPBACK  # where the Lua socket listens: the host's loopback (in the ports' namespace)

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


def pktgen_argv(cfg: PktgenConfig, launcher: Sequence[str]) -> list[str]:
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
    """One running pktgen on `host` (see module doc) and the Lua connection to it."""

    def __init__(self, host: Host, cfg: PktgenConfig, *, netns: str | None, label: str) -> None:
        self.host = host
        self.cfg = cfg
        self.netns = netns
        self.label = label + host.on
        self.proc: HostProcess | None = None
        self.client = LuaClient(LOOPBACK, cfg.lua_port, netns=netns, label=self.label,
                                opener=lambda timeout_s: host.executor.open_tcp(cfg.lua_port, netns=netns,
                                                                                 timeout_s=timeout_s))

    def start(self, ready_timeout_s: float) -> LuaClient:
        """Launch pktgen and connect to its Lua socket; TrafficGenError with its log if it cannot."""
        host = self.host
        launcher = ["python3", str(host.stage_file(_PTYEXEC, _PTYEXEC.name))]
        try:
            self.proc = host.spawn(self.label, pktgen_argv(self.cfg, launcher), netns=self.netns,
                                   log_path=host.log_path(f"{self.label.split(' on ')[0].replace(' ', '-')}.log"))
        except DeploymentError as exc:
            raise TrafficGenError(f"cannot start {self.label}: {exc}") from exc
        log.info("%s started (pid %d) on %s", self.label, self.proc.pid, ", ".join(self.cfg.ifnames))
        proc = self.proc
        wait_for_lua(self.client, self.label, ready_timeout_s, proc.returncode, lambda: proc.log_tail(4))
        # Best effort: without renice/taskset there, pktgen runs as it is.
        calmed = host.executor.run(["sh", "-c", CALM_SCRIPT, "sh", str(proc.pid), str(CONSOLE_NICE), str(TIMER_NICE)],
                                   check=False, timeout_s=10)
        log.debug("%s: console and timer threads %s lowered", self.label, calmed.stdout.split())
        return self.client

    def check_alive(self) -> None:
        """TrafficGenError when pktgen has exited (HostLostError when its host is gone)."""
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
            proc.wait(_STOP_TIMEOUT_S)
        self.client.close()
        if proc is not None:
            self.host.stop_process(proc, timeout_s=_STOP_TIMEOUT_S)  # no-op when it is gone; forgotten
        self.host.remove_dir(runtime_dir(self.cfg.file_prefix))


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


def group_by_netns(netns_of_ports: Sequence[str | None]) -> list[tuple[str | None, list[int]]]:
    """Generator ports grouped by namespace, in order of first appearance: one pktgen each."""
    groups: dict[str | None, list[int]] = {}
    for index, netns in enumerate(netns_of_ports):
        groups.setdefault(netns, []).append(index)
    return list(groups.items())
