"""vsperf.deploy.build: what a test deploys (`DeploymentSpec`) and the deployment built from it on
the run's hosts: backends by name, VNF resolution, generator ports, errors before anything is created."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_machine import FakeMachine, cabled_hosts, lab_hosts
from settings_util import make_settings

from vsperf.backends import build_registries
from vsperf.deploy.base import NoDeployment, SimulatedDeployment
from vsperf.deploy.build import DeploymentSpec, build_deployment, resolve_vnf
from vsperf.deploy.deployment import HostDeployment
from vsperf.deploy.ports import CabledPorts, VethPorts
from vsperf.errors import ConfigError, PrerequisiteError, UnknownNameError
from vsperf.host.hosts import RunHosts
from vsperf.testbed.model import Cable, DutPort, GenPortSpec
from vsperf.traffic import Traffic
from vsperf.vnf.netns import NetnsVnf
from vsperf.vswitch.linux_bridge import LinuxBridgeVSwitch
from vsperf.vswitch.ovs import OvsVSwitch

REGS = build_registries()


def _spec(name: str = "p2p", vswitch: str = "ovs", vnf: str = "auto", fm: str | None = None,
          **kw: Any) -> DeploymentSpec:
    flags = {k: kw.pop(k) for k in ("simulated", "traffic_only", "locations") if k in kw}
    return DeploymentSpec(name, vswitch, vnf, make_settings(kw), frame_modification=fm, **flags)


def _build(hosts: RunHosts | None, name: str = "p2p", vswitch: str = "ovs", traffic: Traffic | None = None,
           fm: str | None = None, **kw: Any) -> Any:
    return build_deployment(_spec(name, vswitch, fm=fm, **kw), REGS, hosts, traffic or Traffic())


def test_pvvp3_with_ovs_on_the_lab(tmp_path: Path) -> None:
    hosts, machine = lab_hosts(tmp_path)
    dep = _build(hosts, "pvvp3", LAB_PORT_QUEUES=2)
    assert isinstance(dep, HostDeployment) and dep.name == "pvvp3"
    assert isinstance(dep.vswitch, OvsVSwitch) and dep.vswitch.host is hosts.dut
    assert len(dep.vnfs) == 3 and all(isinstance(v, NetnsVnf) and v.host is hosts.dut for v in dep.vnfs)
    assert isinstance(dep.ports, VethPorts) and dep.ports.queues == 2
    assert dep.gen_ports == () and not dep.label_hosts
    assert machine.calls == []  # nothing exists before deploy()


def test_a_testbed_deployment_uses_its_cables_and_names_hosts(tmp_path: Path) -> None:
    hosts, dut, gen = cabled_hosts(tmp_path)
    dep = _build(hosts, "pvp", "linux-bridge")
    assert isinstance(dep.ports, CabledPorts) and dep.label_hosts and dep.hugepages is None
    assert dep.dut is hosts.dut and dep.vswitch.host is hosts.dut and dep.vnfs[0].host is hosts.dut
    assert dut.calls == [] and gen.calls == []


def test_ovs_dpdk_on_a_pci_port_gets_its_hugepages(tmp_path: Path) -> None:
    cables = (Cable(DutPort(None, "0000:3b:00.0", "vfio-pci"), GenPortSpec("p0", None)),
              Cable(DutPort("ens2", None, "kernel"), GenPortSpec("p1", None)))
    hosts, _dut, _gen = cabled_hosts(tmp_path, cables)
    dep = _build(hosts, "p2p", "ovs-dpdk", DPDK_SOCKET_MEM=["512", "0"], HUGEPAGE_RAM_ALLOCATION=1048576)
    assert dep.hugepages is not None and dep.hugepages.socket_mem_mb == (512, 0)
    kernel_ports, _dut, _gen = cabled_hosts(tmp_path / "b")
    assert _build(kernel_ports, "p2p", "ovs-dpdk").hugepages is None  # kernel interfaces: no hugepages
    assert _build(kernel_ports, "p2p", "ovs-dpdk", VSWITCH_DPDK_HUGEPAGES=True).hugepages is not None


def test_vsperf_class_names_work_as_aliases(tmp_path: Path) -> None:
    hosts, _machine = lab_hosts(tmp_path)
    assert isinstance(_build(hosts, "p2p", "LinuxBridge").vswitch, LinuxBridgeVSwitch)
    assert isinstance(_build(hosts, "p2p", "OvsVanilla").vswitch, OvsVSwitch)


def test_unknown_names(tmp_path: Path) -> None:
    hosts, _machine = lab_hosts(tmp_path)
    with pytest.raises(UnknownNameError, match="valid deployments"):
        _build(hosts, "p2q")
    with pytest.raises(UnknownNameError, match="vswitch"):
        _build(hosts, "p2p", "vpp")


def test_linux_bridge_cannot_split_streams(tmp_path: Path) -> None:
    hosts, _machine = lab_hosts(tmp_path)
    with pytest.raises(ConfigError, match="needs a switch that matches on headers; linux-bridge cannot"):
        _build(hosts, "pvpv", "linux-bridge", Traffic(multistream=2))
    with pytest.raises(ConfigError, match="multistream >= 2"):
        _build(hosts, "pvpv", "ovs", Traffic(multistream=1))


def test_vlan_push_and_id(tmp_path: Path) -> None:
    hosts, _machine = lab_hosts(tmp_path)
    assert _spec(fm="vlan", VSWITCH_VLAN_ID=7).vlan_id == 7 and _spec().vlan_id is None
    assert _build(hosts, "p2p", fm="vlan", VSWITCH_VLAN_ID=7).vlan_id == 7
    assert _build(hosts, "p2p").vlan_id is None
    assert _spec(fm="mac").vlan_id is None  # a modification without a VLAN push
    with pytest.raises(ConfigError, match="unknown Frame Modification 'nat'"):
        _spec(fm="nat").vlan_id  # noqa: B018


@pytest.mark.parametrize(("host", "kernel"), [("local", "this kernel"), ("dut", "the kernel of host dut")])
def test_linux_bridge_vlan_push_is_refused_by_the_dut_hosts_kernel(tmp_path: Path, host: str, kernel: str) -> None:
    if host == "local":
        hosts, machine = lab_hosts(tmp_path)
    else:
        hosts, machine, _gen = cabled_hosts(tmp_path)
    machine.files["/boot/config-6.1.0-test"] = "#\nCONFIG_BRIDGE=y\n"  # without CONFIG_BRIDGE_VLAN_FILTERING
    with pytest.raises(PrerequisiteError, match=f"linux-bridge cannot push VLAN tags on {kernel} "):
        _build(hosts, "p2p", "linux-bridge", fm="vlan")
    _build(hosts, "p2p", "linux-bridge")  # no tag: no question


def test_vnf_auto_follows_the_switch() -> None:
    assert resolve_vnf(_spec(vnf="auto"), REGS, OvsVSwitch) is NetnsVnf
    assert resolve_vnf(_spec(vnf="netns"), REGS, LinuxBridgeVSwitch) is NetnsVnf
    ovs_dpdk = REGS.vswitches.get("ovs-dpdk").cls
    assert resolve_vnf(_spec(vnf="auto"), REGS, ovs_dpdk).NAME == ovs_dpdk.DEFAULT_VNF == "testpmd-vhost"


def test_incompatible_vnf_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as err:
        resolve_vnf(_spec(vnf="testpmd-vhost"), REGS, OvsVSwitch)
    assert str(err.value) == ("VNF 'testpmd-vhost' needs vhostuser ports, which vswitch 'ovs' cannot attach (it "
                              "takes veth); choose another --vnf or --vswitch")


def test_what_deploys_nothing(tmp_path: Path) -> None:
    simulated = _spec("pvp", simulated=True)
    assert simulated.deploys is None and _spec("pvp").deploys == "pvp"
    assert _spec("pvp", traffic_only=True).deploys == "wire"
    hosts, machine = lab_hosts(tmp_path)
    assert type(build_deployment(simulated, REGS, hosts, Traffic())) is SimulatedDeployment
    # --mode trafficgen without hosts of the run's own (a generator that has its own ports)
    assert type(build_deployment(_spec("pvp", traffic_only=True), REGS, None, Traffic())) is NoDeployment
    wire = build_deployment(_spec("pvp", traffic_only=True), REGS, hosts, Traffic())
    assert isinstance(wire, HostDeployment) and wire.vswitch is None and wire.topology.layout == "wire"
    assert isinstance(machine, FakeMachine) and machine.calls == []
