"""Shared fixtures of the DPDK backend tests: a complete settings mapping and a lab handle."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vsperf.lab.env import LabEnv
from vsperf.lab.state import RunState

from vsperf.executor import Executor, LocalExecutor
from vsperf.host.names import RunNames
from vsperf.host.workdir import RunContext

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


def make_ctx(tmp_path: Path, executor: Executor | None = None) -> RunContext:
    return RunContext(RUN_ID, tmp_path, tmp_path, executor or LocalExecutor())


def make_lab(ctx: RunContext, tmp_path: Path) -> LabEnv:
    return LabEnv(ctx, RunNames(RUN_ID), RunState(RUN_ID, root=tmp_path / "state"))
