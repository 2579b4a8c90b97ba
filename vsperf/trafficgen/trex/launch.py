"""Where vsperf finds TRex's server: one it starts on the generator host, or one already running.

- vsperf starts it (TRAFFICGEN_TREX_START_SERVER, the default) on the generator `Host` (the
  local lab, or a testbed's generator host: the same calls either way), from
  TRAFFICGEN_TREX_BASE_DIR or the directory of `t-rex-64` on that host's PATH, in the namespace
  of the generator ports (the local lab puts both there: `PORTS_IN_ONE_NAMESPACE`);
- one already runs on the generator host (TRAFFICGEN_TREX_START_SERVER false): its RPC ports are
  reached through the host's executor (`open_tcp`);
- one runs at TRAFFICGEN_TREX_HOST_IP_ADDR, a machine outside the run's hosts: this machine's
  own loopback, or another host through an SSH connection vsperf opens to it
  (TRAFFICGEN_TREX_USER).

TRex listens on every address of its host: vsperf reaches it only through the host's loopback.
"""

from __future__ import annotations

import importlib.util
import os
import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

from vsperf.errors import PrerequisiteError, VsperfError
from vsperf.executor import CommandLog, Executor, LocalExecutor
from vsperf.host.host import Host
from vsperf.remote.connection import SshHost
from vsperf.remote.ssh import SshExecutor
from vsperf.traffic.ports import GenPort
from vsperf.trafficgen.trex.forward import Forwarder
from vsperf.trafficgen.trex.server import BINARY, LAUNCHER, ServerConfig, forward, vdev

INSTALL_HINT = ("build TRex v3.0.7 from its source (docs/trafficgens.rst) and set TRAFFICGEN_TREX_BASE_DIR to its "
                "scripts directory, or put its t-rex-64 on PATH")
_PROBE_TIMEOUT_S = 5.0


def base_dir(settings: Mapping[str, Any], host: Host) -> str:
    """TRAFFICGEN_TREX_BASE_DIR, or the directory of `t-rex-64` on `host`'s PATH, its link
    resolved as TRex's script runs from there ("" when neither names one)."""
    configured = str(settings["TRAFFICGEN_TREX_BASE_DIR"]).strip()
    if configured:
        return configured
    try:  # a fixed script: the program's name is its argument
        found = host.executor.run(["sh", "-c", 'p=$(command -v "$1") && readlink -f "$p"', "sh", LAUNCHER],
                                  check=False, timeout_s=10.0)
    except VsperfError:
        return ""
    path = found.stdout.strip() if found.returncode == 0 else ""
    return posixpath.dirname(path) if path else ""


def running_host(settings: Mapping[str, Any]) -> str:
    """TRAFFICGEN_TREX_HOST_IP_ADDR ("" : none)."""
    return str(settings["TRAFFICGEN_TREX_HOST_IP_ADDR"]).strip()


def is_loopback(address: str) -> bool:
    """Whether `address` names this machine's loopback (a server reached without SSH)."""
    return address in ("localhost", "::1") or address.startswith("127.")


def running_executor(settings: Mapping[str, Any], host: Host, command_log: CommandLog | None) -> Executor:
    """The executor whose `open_tcp` reaches an already running server: the generator host's,
    or (TRAFFICGEN_TREX_HOST_IP_ADDR) this machine's or an SSH connection to that address, which
    the caller closes."""
    address = running_host(settings)
    if not address:
        return host.executor
    if is_loopback(address):
        return LocalExecutor(command_log)
    user = str(settings["TRAFFICGEN_TREX_USER"]).strip() or "root"
    ssh = SshExecutor(SshHost(address, address, user=user), command_log)
    ssh.connect()
    return ssh


def running_forwards(executor: Executor, settings: Mapping[str, Any]) -> list[Forwarder]:
    """Ports of this machine's loopback reaching a running server's RPC and event ports."""
    where = "" if executor.host == "local" else f" on {executor.host}"
    return [forward(executor, int(settings[key]), None, f"TRex port {settings[key]}{where}")
            for key in ("TRAFFICGEN_TREX_SYNC_PORT", "TRAFFICGEN_TREX_ASYNC_PORT")]


def check_running_server(settings: Mapping[str, Any], host: Host) -> None:
    """PrerequisiteError unless the running server's RPC port answers (through SSH for another
    host: the connection's own errors name the host and the fix)."""
    address = running_host(settings) or host.name
    port = int(settings["TRAFFICGEN_TREX_SYNC_PORT"])
    executor: Executor | None = None
    try:
        executor = running_executor(settings, host, None)
        executor.open_tcp(port, timeout_s=_PROBE_TIMEOUT_S).close()
    except OSError as exc:
        fix = ("leave TRAFFICGEN_TREX_HOST_IP_ADDR empty to let vsperf start one" if running_host(settings)
               else "set TRAFFICGEN_TREX_START_SERVER true to let vsperf start one")
        raise PrerequisiteError(f"no TRex server answers on port {port} of {address} ({exc}): start it there "
                                f"(./t-rex-64 -i), or {fix}") from exc
    finally:
        if isinstance(executor, SshExecutor) and executor is not host.executor:
            executor.close()


def check_prerequisites(settings: Mapping[str, Any], host: Host) -> None:
    """PrerequisiteError naming what to install or do: the server (on `host`, a probe of the
    generator host, or the running one) and TRex's client (on this machine)."""
    if running_host(settings) or not settings["TRAFFICGEN_TREX_START_SERVER"]:
        check_running_server(settings, host)
    else:
        directory = base_dir(settings, host)
        binary = posixpath.join(directory, BINARY)
        if not directory or host.executor.run(["test", "-x", binary], check=False, timeout_s=10.0).returncode:
            where = f" ({binary} missing)" if directory else ""
            raise PrerequisiteError(f"{host.prefix}TRex is not installed{where}: {INSTALL_HINT}")
        host.require("ss", "apt-get install iproute2")  # its RPC ports, checked free before it starts
    client_path = str(settings["TRAFFICGEN_TREX_CLIENT_PATH"]).strip()
    if client_path:
        if not os.path.isdir(os.path.join(client_path, "trex")):
            raise PrerequisiteError(f"TRAFFICGEN_TREX_CLIENT_PATH {client_path} holds no TRex client (no trex/): "
                                    f"give a TRex tree's automation/trex_control_plane/interactive")
    elif not str(settings["TRAFFICGEN_TREX_PYTHON"]).strip() and importlib.util.find_spec("lbr_trex_client") is None:
        raise PrerequisiteError("TRex's Python client is not installed: pip install 'vsperf[trex]' "
                                "(lbr-trex-client), or set TRAFFICGEN_TREX_CLIENT_PATH to a TRex tree's client")


def server_config(settings: Mapping[str, Any], ports: Sequence[GenPort], prefix: str) -> ServerConfig:
    """The server's config for generator ports `ports` (kernel interfaces as vdevs, PCI port
    locations as they are) and DPDK file prefix `prefix`."""
    options = str(settings["TRAFFICGEN_TREX_VDEV_ARGS"]).strip()
    cores = tuple(int(c) for c in str(settings["TRAFFICGEN_TREX_CORES"]).replace(" ", "").split(",") if c)
    return ServerConfig(
        interfaces=tuple(p.location or vdev(i, p.ifname, options) for i, p in enumerate(ports)),
        src_macs=tuple(p.mac for p in ports), dest_macs=tuple(p.peer_mac for p in ports), prefix=prefix,
        sync_port=int(settings["TRAFFICGEN_TREX_SYNC_PORT"]), async_port=int(settings["TRAFFICGEN_TREX_ASYNC_PORT"]),
        low_end=bool(settings["TRAFFICGEN_TREX_LOW_END"]), cores=cores,
    )
