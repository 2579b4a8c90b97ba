"""Starting the pktgen processes a trial uses: on the local lab's ports (one per namespace of
the ports, vsperf.trafficgen.pktgen.process) or on a testbed's generator host, over SSH or
`local` (one owning every port, journaled by the session: vsperf.trafficgen.pktgen.remote),
each with the command line the settings give (TRAFFICGEN_PKTGEN_*), and which pktgen port each
generator port is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vsperf.context import RunContext
from vsperf.deployment import GenPort
from vsperf.errors import ConfigError, TrafficGenError
from vsperf.executor import Executor
from vsperf.trafficgen.base import HostProcesses
from vsperf.trafficgen.pktgen.client import LuaClient
from vsperf.trafficgen.pktgen.process import PktgenConfig, PktgenProcess, group_by_netns
from vsperf.trafficgen.pktgen.remote import LOOPBACK, RemotePktgen, file_prefix


@dataclass(frozen=True)
class Endpoint:
    """Where one generator port lives: which pktgen, which of its ports."""

    instance: int
    port: int


@dataclass
class Launched:
    """The pktgens started so far (filled as they start: a failure leaves what to stop)."""

    processes: list[PktgenProcess | RemotePktgen] = field(default_factory=list)
    clients: list[LuaClient] = field(default_factory=list)
    endpoints: list[Endpoint] = field(default_factory=list)  # one per generator port, once all started


def pktgen_config(settings: Mapping[str, Any], index: int, binary: str, ifnames: Sequence[str], prefix: str,
                  lua_address: str) -> PktgenConfig:
    """The command line of pktgen `index` on interfaces `ifnames` (DPDK file prefix `prefix`)."""
    lcores = [str(x) for x in settings["TRAFFICGEN_PKTGEN_LCORES"]]
    if not lcores:
        raise ConfigError("TRAFFICGEN_PKTGEN_LCORES is empty: give the --lcores of each pktgen, e.g. ['0@0,1@1']")
    return PktgenConfig(
        binary=binary,
        file_prefix=prefix,
        memory_mb=int(settings["TRAFFICGEN_PKTGEN_MEMORY_MB"]) * len(ifnames),
        lcores=lcores[index % len(lcores)],
        driver=settings["TRAFFICGEN_PKTGEN_PORT_DRIVER"],
        ifnames=tuple(ifnames),
        lua_port=int(settings["TRAFFICGEN_PKTGEN_PORT"]),
        core_map=str(settings["TRAFFICGEN_PKTGEN_CORE_MAP"]),
        extra_eal_args=tuple(str(a) for a in settings["TRAFFICGEN_PKTGEN_EAL_ARGS"]),
        lua_address=lua_address,
    )


def work_dir(ctx: RunContext) -> Path:
    """Where the pktgens' logs go on this machine."""
    work = ctx.work_dir / "pktgen"
    work.mkdir(parents=True, exist_ok=True)
    return work


def launch_local(settings: Mapping[str, Any], ctx: RunContext, ports: Sequence[GenPort], binary: str,
                 into: Launched) -> None:
    """One pktgen per namespace of the lab's ports, through `ctx.executor`."""
    endpoints: dict[int, Endpoint] = {}
    for index, (netns, members) in enumerate(group_by_netns([p.netns for p in ports])):
        cfg = pktgen_config(settings, index, binary, [ports[m].ifname for m in members], f"vsp{ctx.run_id}pg{index}",
                            "localhost")
        proc = PktgenProcess(ctx.executor, cfg, netns=netns, log_path=work_dir(ctx) / f"pktgen{index}.log",
                             label=f"pktgen {index}")
        into.processes.append(proc)
        into.clients.append(proc.start(float(settings["TRAFFICGEN_PKTGEN_TIMEOUT_S"])))
        for pktgen_port, member in enumerate(members):
            endpoints[member] = Endpoint(index, pktgen_port)
    into.endpoints = [endpoints[i] for i in range(len(ports))]


def launch_on_host(settings: Mapping[str, Any], ctx: RunContext, ports: Sequence[GenPort], executor: Executor,
                   processes: HostProcesses, host: str, into: Launched) -> None:
    """One pktgen on the testbed's generator host (over SSH, or `local`: this machine) owning
    every generator port (the host's own interfaces, in its root namespace), started and
    journaled through the run's testbed session."""
    if any(p.netns for p in ports):
        raise TrafficGenError(f"host {host}: a generator port in a namespace: testbed ports are the host's "
                              f"own interfaces")
    cfg = pktgen_config(settings, 0, str(settings["TRAFFICGEN_PKTGEN_BINARY"]), [p.ifname for p in ports],
                        file_prefix(ctx.run_id, 0), LOOPBACK)
    proc = RemotePktgen(executor, processes, host, cfg, run_id=ctx.run_id, log_path=work_dir(ctx) / "pktgen0.log",
                        label="pktgen 0")
    into.processes.append(proc)
    into.clients.append(proc.start(float(settings["TRAFFICGEN_PKTGEN_TIMEOUT_S"])))
    into.endpoints = [Endpoint(0, i) for i in range(len(ports))]
