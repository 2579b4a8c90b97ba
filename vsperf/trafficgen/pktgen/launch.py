"""Starting the pktgen processes a trial uses, on the generator host: one per network namespace
of the generator ports (vsperf.trafficgen.pktgen.process), each with the command line the
settings give (TRAFFICGEN_PKTGEN_*), and which pktgen port each generator port is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vsperf.errors import ConfigError, PrerequisiteError
from vsperf.host.host import Host
from vsperf.traffic.ports import GenPort
from vsperf.trafficgen.pktgen.client import LuaClient
from vsperf.trafficgen.pktgen.process import LOOPBACK, PktgenConfig, PktgenProcess, group_by_netns

LUA_MARKER = "Pktgen_Version"  # a string only pktgen's Lua library carries


@dataclass(frozen=True)
class Endpoint:
    """Where one generator port lives: which pktgen, which of its ports."""

    instance: int
    port: int


@dataclass
class Launched:
    """The pktgens started so far (filled as they start: a failure leaves what to stop)."""

    processes: list[PktgenProcess] = field(default_factory=list)
    clients: list[LuaClient] = field(default_factory=list)
    endpoints: list[Endpoint] = field(default_factory=list)  # one per generator port, once all started


def pktgen_config(settings: Mapping[str, Any], index: int, binary: str, ifnames: Sequence[str], prefix: str,
                  lua_address: str = LOOPBACK) -> PktgenConfig:
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


def check_binary(host: Host, binary: str) -> None:
    """PrerequisiteError unless `binary` on `host` is a pktgen built with Lua."""
    host.require(binary, "build Pktgen-DPDK >= 23.06 with Lua (docs/trafficgens.rst) and set "
                         "TRAFFICGEN_PKTGEN_BINARY to its path")
    # A fixed script: the binary is its argument. `command -v` finds a name on the host's PATH.
    found = host.executor.run(["sh", "-c", 'p=$(command -v "$1") && grep -q -F "$2" "$p"', "sh", binary, LUA_MARKER],
                              check=False, timeout_s=30)
    if found.returncode != 0:
        where = host.prefix
        raise PrerequisiteError(f"{where}{binary} was built without Lua: rebuild Pktgen-DPDK with meson "
                                f"-Denable_lua=true (see docs/trafficgens.rst)")


def launch(settings: Mapping[str, Any], host: Host, ports: Sequence[GenPort], into: Launched) -> None:
    """One pktgen per namespace of the generator ports on `host`, started through it."""
    endpoints: dict[int, Endpoint] = {}
    binary = str(settings["TRAFFICGEN_PKTGEN_BINARY"])
    for index, (netns, members) in enumerate(group_by_netns([p.netns for p in ports])):
        cfg = pktgen_config(settings, index, binary, [ports[m].ifname for m in members],
                            host.dpdk_file_prefix(f"pg{index}"))
        proc = PktgenProcess(host, cfg, netns=netns, label=f"pktgen {index}")
        into.processes.append(proc)
        into.clients.append(proc.start(float(settings["TRAFFICGEN_PKTGEN_TIMEOUT_S"])))
        for pktgen_port, member in enumerate(members):
            endpoints[member] = Endpoint(index, pktgen_port)
    into.endpoints = [endpoints[i] for i in range(len(ports))]
