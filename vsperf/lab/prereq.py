"""What the local lab needs, checked before anything is created (one line per problem: the fix)."""

from __future__ import annotations

import ipaddress
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vsperf.config.schema_core import BENCHMARK_NETWORK
from vsperf.context import RunContext
from vsperf.errors import ConfigError, PrerequisiteError
from vsperf.executor import LocalExecutor
from vsperf.lab.deploy import resolve_vnf
from vsperf.lab.state import DEFAULT_STATE_ROOT
from vsperf.lab.topology import check_streams, parse_deployment
from vsperf.registry import Registries
from vsperf.vswitch.linux_bridge import kernel_config_option

# Commands the lab runs besides the switch's and VNF's own (which they check themselves).
_TOOLS = {"ip": "iproute2", "tc": "iproute2", "sysctl": "procps"}
_KERNEL_OPTIONS = {
    "CONFIG_NET_NS": "network namespaces",
    "CONFIG_VETH": "veth interfaces",
    "CONFIG_NET_CLS_BPF": "tc BPF classifier (receive counters)",
    "CONFIG_NET_SCH_TBF": "TBF qdisc (generator pacing)",
}


def check_prerequisites(*, settings: Mapping[str, Any], registries: Registries, deployment: str) -> None:
    """See `vsperf.lab.check_prerequisites`."""
    if not sys.platform.startswith("linux"):
        raise PrerequisiteError("the local lab needs Linux (namespaces, veth): use --trafficgen dummy")
    if os.geteuid() != 0:
        raise PrerequisiteError("vsperf needs root for the local lab: run as root, or use --trafficgen dummy")
    topology = parse_deployment(deployment)
    check_lab_addresses(settings["TRAFFIC"])
    for tool, package in _TOOLS.items():
        if shutil.which(tool) is None:
            raise PrerequisiteError(f"{tool} is missing: apt-get install {package}")
    for option, what in _KERNEL_OPTIONS.items():
        if kernel_config_option(option) is False:
            raise PrerequisiteError(f"the kernel lacks {what} ({option}): use a kernel built with it")
    if not Path("/proc/self/ns/net").exists():
        raise PrerequisiteError("network namespaces are not available (/proc/self/ns/net missing)")
    _check_state_dir(DEFAULT_STATE_ROOT)

    if not topology.has_switch:
        return
    vswitch_cls = registries.vswitches.get(str(settings["VSWITCH"])).cls
    if settings["VSWITCH_DPDK_HUGEPAGES"] and vswitch_cls.NAME == "ovs-dpdk":  # a testbed's DUT host only
        raise PrerequisiteError("VSWITCH_DPDK_HUGEPAGES: the local lab runs OVS-DPDK without hugepages "
                                "(--no-huge); set it false, or run on a testbed (--testbed)")
    probe_ctx = _probe_context()
    vswitch_cls(settings, probe_ctx).check_prerequisites()
    if topology.layout == "parallel" and not vswitch_cls.SUPPORTS_MATCH:
        raise PrerequisiteError(
            f"deployment {topology.name} splits streams between VNFs by header fields, which "
            f"{vswitch_cls.NAME} cannot do: use --vswitch ovs"
        )
    traffic = settings["TRAFFIC"]
    try:
        check_streams(topology, int(traffic.get("multistream", 0)))
    except ConfigError as exc:
        raise PrerequisiteError(str(exc)) from exc
    if topology.vnfs:
        try:
            vnf_cls = resolve_vnf(settings, registries, vswitch_cls)
        except ConfigError as exc:
            raise PrerequisiteError(str(exc)) from exc
        vnf_cls(settings, probe_ctx).check_prerequisites()


def check_lab_addresses(traffic: Mapping[str, Any]) -> None:
    """The local lab sends only to the RFC 2544 benchmarking range (a real testbed may use others)."""
    network = ipaddress.IPv4Network(BENCHMARK_NETWORK)
    for key in ("srcip", "dstip"):
        address = str(traffic["l3"][key])
        if ipaddress.IPv4Address(address) not in network:
            raise ConfigError(
                f"TRAFFIC l3 {key} {address} is outside {network}: the local lab sends only there; "
                f"set TRAFFIC l3 srcip/dstip inside it (e.g. 198.18.0.1, 198.18.1.1) or use a testbed")


def _check_state_dir(root: Path) -> None:
    """The run state files must be writable (they make cleanup after a kill possible)."""
    existing = root
    while not existing.exists():
        existing = existing.parent
    if not os.access(existing, os.W_OK):
        raise PrerequisiteError(f"cannot write run state under {root}: run as root")


def _probe_context() -> Any:
    """A context for prerequisite checks: they may run read-only commands, never create."""

    return RunContext("check", Path("/nonexistent"), Path("/nonexistent"), LocalExecutor())
