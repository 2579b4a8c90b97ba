"""What the local lab needs, checked before anything is created (one line per problem: the fix)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

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
    vswitch_cls = registries.vswitches.get(str(settings.get("VSWITCH", "ovs"))).cls
    probe_ctx = _probe_context()
    vswitch_cls(settings, probe_ctx).check_prerequisites()
    if topology.layout == "parallel" and not vswitch_cls.SUPPORTS_MATCH:
        raise PrerequisiteError(
            f"deployment {topology.name} splits streams between VNFs by header fields, which "
            f"{vswitch_cls.NAME} cannot do: use --vswitch ovs"
        )
    traffic = settings.get("TRAFFIC") or {}
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
