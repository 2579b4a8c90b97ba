"""Integration tests need root, Linux and real components: they skip, saying why, otherwise."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest

from vsperf.backends import build_registries
from vsperf.config.loader import load_settings
from vsperf.deploy.build import DeploymentSpec, build_deployment
from vsperf.deploy.deployment import HostDeployment
from vsperf.executor import CommandLog
from vsperf.host import netlink as netdev
from vsperf.host.hosts import RunHosts, local_lab
from vsperf.host.journal import DEFAULT_STATE_ROOT
from vsperf.host.workdir import RunContext, new_run_id
from vsperf.registry import Registries
from vsperf.traffic import Traffic
from vsperf.trafficgen.trafgen.backend import TrafgenTrafficGenerator

LAB_TOOLS = {"ip": "iproute2", "tc": "iproute2", "trafgen": "netsniff-ng"}


def lab_skip_reason(tools: dict[str, str] | None = None) -> str | None:
    """Why the local lab cannot run here (None: it can)."""
    if not sys.platform.startswith("linux"):
        return "needs Linux (network namespaces, veth)"
    if os.geteuid() != 0:
        return "needs root (namespaces, switches, traffic)"
    for tool, package in (tools or LAB_TOOLS).items():
        if shutil.which(tool) is None:
            return f"{tool} missing: apt-get install {package}"
    return None


@pytest.fixture
def lab_root() -> None:
    """Skip the test unless the local lab can run: root, Linux, iproute2 and trafgen."""
    reason = lab_skip_reason()
    if reason:
        pytest.skip(reason)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Tests marked `root` skip with a clear reason when not run as root on Linux."""
    if item.get_closest_marker("root") is None:
        return
    if not sys.platform.startswith("linux"):
        pytest.skip("needs Linux")
    if os.geteuid() != 0:
        pytest.skip("needs root")


# --- the local lab, for tests/integration/test_lab_*.py ---------------------------------------


def lab_leftovers(run_id: str, work_dir: Path) -> list[str]:
    """Everything of run `run_id` still on the machine: namespaces, processes, journal, the run's
    directories (/tmp/vsperf-RUNID-*), DPDK runtime directories, work files."""
    tag = f"vsp{run_id}"
    found = [f"netns {n}" for n in netdev.list_netns() if n.startswith(tag)]
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmdline = " ".join(proc.info.get("cmdline") or [])
        if str(work_dir) in cmdline or tag in cmdline or f"vsperf-{run_id}-" in cmdline:
            found.append(f"process {proc.info['pid']}: {cmdline[:80]}")
    if (DEFAULT_STATE_ROOT / run_id).exists():
        found.append(f"journal dir {DEFAULT_STATE_ROOT / run_id}")
    found += [f"run dir {p}" for p in Path("/tmp").glob(f"vsperf-{run_id}-*") if p != work_dir]
    found += [f"dpdk runtime dir {p}" for p in Path("/var/run/dpdk").glob(f"{tag}*")]
    return found


@dataclass
class LabRun:
    """One test's run on the local lab: its hosts, settings, and the generators it made."""

    hosts: RunHosts
    work_dir: Path
    settings: dict[str, Any]
    registries: Registries
    generators: list[TrafgenTrafficGenerator] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        return self.hosts.journal.run_id

    def ctx(self) -> RunContext:
        """The run's context on the controller (what collectors are handed)."""
        return RunContext(self.run_id, self.work_dir, self.work_dir, self.hosts.dut.executor)

    def deployment(self, name: str, traffic: Traffic | None = None, frame_modification: str | None = None,
                   **settings: Any) -> HostDeployment:
        merged = {**self.settings, **settings}
        vnf = str(merged["VNF"])
        spec = DeploymentSpec(name=name, vswitch=self.registries.vswitches.resolve(str(merged["VSWITCH"])),
                              vnf=vnf if vnf == "auto" else self.registries.vnfs.resolve(vnf), settings=merged,
                              frame_modification=frame_modification)
        deployment = build_deployment(spec, self.registries, self.hosts, traffic or Traffic())
        assert isinstance(deployment, HostDeployment)
        return deployment

    def generator(self, **settings: Any) -> TrafgenTrafficGenerator:
        gen = TrafgenTrafficGenerator({**self.settings, **settings}, self.hosts.trafficgen)
        self.generators.append(gen)
        return gen


@pytest.fixture
def lab_run(lab_root: None) -> Iterator[LabRun]:
    """A fresh run on the local lab; after the test, asserts nothing of the run is left."""
    run_id = new_run_id()
    work_dir = Path(tempfile.mkdtemp(prefix=f"vsperf-{run_id}-"))  # short: unix socket paths
    hosts = local_lab(run_id, CommandLog(work_dir / "commands.log"))
    settings = dict(load_settings(env={}))
    settings["TRAFFICGEN_RESIDUAL_WAIT_S"] = 0.2
    run = LabRun(hosts, work_dir, settings, build_registries())
    try:
        yield run
    finally:
        for gen in run.generators:
            gen.stop()
        hosts.close()
        left = lab_leftovers(run_id, work_dir)
        shutil.rmtree(work_dir, ignore_errors=True)
    assert left == [], f"run {run_id} left: {left}"
