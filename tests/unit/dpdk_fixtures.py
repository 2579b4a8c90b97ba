"""Shared fixtures of the DPDK backend tests: a complete settings mapping and a host to run on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vsperf.executor import Executor, LocalExecutor
from vsperf.host.host import Host
from vsperf.host.journal import Journal
from vsperf.host.names import RunNames

RUN_ID = "ab12"


def dpdk_settings(**overrides: Any) -> dict[str, Any]:
    """Every DPDK setting with the defaults requested for conf/02_vswitch.yaml and 03_vnf.yaml."""
    settings: dict[str, Any] = {
        "VSWITCH_PMD_CPU_MASK": "0x2",
        "VSWITCHD_DPDK_CONFIG": {"dpdk-lcore-mask": "0x1"},
        "VSWITCH_DPDK_MEMORY_MB": 1024,
        "OVS_DPDK_VSWITCHD": "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk",
        "DPDK_PORT_DRIVER": "af_xdp",
        "LAB_PORT_QUEUES": 1,
        "VSWITCH_VHOSTUSER_SERVER_MODE": False,
        "TESTPMD_FWD_MODE": "io",
        "TESTPMD_ARGS": [],
        "GUEST_TESTPMD_FWD_MODE": "io",
        "GUEST_TESTPMD_CPU": 0,
        "GUEST_TESTPMD_ARGS": [],
        "TESTPMD_MEMORY_MB": 128,
        "TESTPMD_NB_MBUFS": 16384,
        "TESTPMD_DESCRIPTORS": 1024,
    }
    settings.update(overrides)
    return settings


def make_host(tmp_path: Path, executor: Executor | None = None, *, name: str = "local") -> Host:
    """Host `name` of run RUN_ID on `executor` (this machine by default), its journal under `tmp_path`."""
    return Host(name, executor or LocalExecutor(), RunNames(RUN_ID), Journal(RUN_ID, root=tmp_path / "state"))
