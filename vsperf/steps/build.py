"""A step-driven test's steps, wired to what the test deployed (vsperf.run.measure calls
`run_test_steps` once its deployment is up and its generator started)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vsperf.deploy.base import Deployment
from vsperf.deploy.deployment import HostDeployment
from vsperf.errors import ConfigError, DeploymentError
from vsperf.host.hosts import RunHosts
from vsperf.registry import Registries
from vsperf.results.steps import StepRecord
from vsperf.steps.macros import StepError
from vsperf.steps.model import Step
from vsperf.steps.runner import StepEnv, StepRunner
from vsperf.steps.tools import TOOLS, StepTools
from vsperf.steps.vswitch import StepVswitch
from vsperf.vnf.base import Vnf
from vsperf.vswitch.ovs import OvsVSwitch

DEFAULT_BRIDGE = "vsperf-br0"  # VSPERF's VSWITCH_BRIDGE_NAME, for a deployment without a bridge
VSWITCHD_LOG_VARIABLE = "_OVSDPDK_VSWITCH_LOG"  # VSPERF's file variable: the ovs-vswitchd log


@dataclass(frozen=True)
class StepTest:
    """The step-driven test, as its plan has it."""

    name: str
    steps: tuple[Step, ...]
    settings: Any  # vsperf.config.Settings of the test
    vswitch: str  # canonical names
    vnf: str  # or "auto"
    mtu_bytes: int  # what its ports carry
    parameters: Mapping[str, Any] = field(default_factory=dict)  # its own Parameters (VSPERF's TEST_PARAMS)


def run_test_steps(pt: StepTest, registries: Registries, results_dir: Path, deployment: Deployment,
                   send_traffic: Callable[[Any], list[dict[str, Any]]], record: Callable[[StepRecord], None],
                   hosts: RunHosts | None, hold: Callable[[str], None] | None = None) -> bool:
    """Run `pt`'s steps; True when they sent traffic. A failed step raises DeploymentError naming it."""
    host = deployment.dut if isinstance(deployment, HostDeployment) else None
    netns = deployment.ports.switch_netns if isinstance(deployment, HostDeployment) else None
    vswitch = deployment.vswitch if isinstance(deployment, HostDeployment) else None
    ovs = vswitch if isinstance(vswitch, OvsVSwitch) else None
    switch = None
    if ovs is not None and isinstance(deployment, HostDeployment):
        vnf_cls = _vnf_class(pt, registries)
        dut = deployment.dut

        def make_vnf(index: int) -> Vnf:
            return vnf_cls(pt.settings, dut)

        # step VNFs take the names after the deployment's own VNFs
        switch = StepVswitch(ovs, deployment, netns, deployment.phy_ports, make_vnf, pt.mtu_bytes,
                             vnf_offset=len(deployment.vnfs))
    bridges = vswitch.bridges() if vswitch is not None else ()
    # ovs_var_tmp: the test's OVS run directory (VSPERF's, where vhost-sock-dir is relative to)
    tools_paths = {**TOOLS, **({"ovs_var_tmp": str(ovs.rundir)} if ovs is not None else {})}
    constants = {"TOOLS": tools_paths, "RESULTS_PATH": str(results_dir),
                 "VSWITCH_BRIDGE_NAME": bridges[0] if bridges else DEFAULT_BRIDGE,
                 "NICS": dut_nics(deployment) if isinstance(deployment, HostDeployment) else []}
    if ovs is not None:
        # upstream's 01b file computes it with Python (os.path.join of RESULTS_PATH and the log's
        # name), which a conf file read safely cannot: the test's ovs-vswitchd log
        constants[VSWITCHD_LOG_VARIABLE] = str(ovs.rundir / "ovs-vswitchd.log")
    tools = StepTools(host, netns, ovs, lab=hosts is None or hosts.is_lab)
    env = StepEnv(pt.name, pt.settings, tools, send_traffic, record, switch,
                  getattr(deployment, "vnfs", ()), constants, hold, pt.parameters)
    try:
        return StepRunner(env, pt.steps).run()
    except StepError as exc:
        raise DeploymentError(f"test {pt.name}: {exc}") from exc


def dut_nics(deployment: HostDeployment) -> list[dict[str, Any]]:
    """VSPERF's `NICS`, its list of the DUT's NICs, as the deployment has them: each port facing
    the generator, in order (`device`: its interface; `pci`: its PCI address, "" for an interface
    the run made; `mac`; `type` and `is_vf` as VSPERF's)."""
    nics = []
    for port in deployment.phy_ports:
        device = port.ifname
        mac = deployment.dut.net.mac(device, deployment.ports.switch_netns) if device else ""
        nics.append({"device": device, "pci": port.pci, "mac": mac, "type": "physical", "is_vf": False})
    return nics


def _vnf_class(pt: StepTest, registries: Registries) -> type[Vnf]:
    """The VNF class of the test's step VNFs: VNF, or its switch's default (VSPERF's VNF setting)."""
    vswitch_cls = registries.vswitches.get(pt.vswitch).cls
    name = vswitch_cls.DEFAULT_VNF if pt.vnf == "auto" else pt.vnf
    try:
        cls: type[Vnf] = registries.vnfs.get(name).cls
    except ConfigError as exc:
        raise DeploymentError(str(exc)) from exc
    return cls
