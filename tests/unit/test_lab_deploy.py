"""Building deployments: names, backends, VNF resolution, errors before anything is created."""

from pathlib import Path
from typing import Any

import pytest

from vsperf.backends import build_registries
from vsperf.config.loader import load_settings
from vsperf.context import RunContext
from vsperf.errors import ConfigError, PrerequisiteError, UnknownNameError
from vsperf.executor import LocalExecutor
from vsperf.lab.deploy import LabDeployment, build_deployment, mtu_for, resolve_vnf
from vsperf.traffic import Traffic
from vsperf.vnf.netns import NetnsVnf
from vsperf.vswitch.linux_bridge import LinuxBridgeVSwitch, kernel_config_option
from vsperf.vswitch.ovs import OvsVSwitch

REGS = build_registries()
CTX = RunContext("abc123", Path("/nonexistent"), Path("/nonexistent"), LocalExecutor())


def _settings(**overrides: Any) -> dict[str, Any]:
    return {**load_settings(env={}), **overrides}


def _build(name: str, traffic: Traffic | None = None, fm: str | None = None, **overrides: Any) -> Any:
    return build_deployment(name, settings=_settings(**overrides), registries=REGS, ctx=CTX,
                            traffic=traffic or Traffic(), frame_modification=fm)


def test_pvvp3_with_ovs() -> None:
    dep = _build("pvvp3")
    assert isinstance(dep, LabDeployment)
    assert isinstance(dep.vswitch, OvsVSwitch)
    assert len(dep.vnfs) == 3 and all(isinstance(v, NetnsVnf) for v in dep.vnfs)
    assert dep.gen_ports == ()  # nothing exists before deploy()


def test_vsperf_class_names_work_as_aliases() -> None:
    assert isinstance(_build("p2p", VSWITCH="LinuxBridge").vswitch, LinuxBridgeVSwitch)
    assert isinstance(_build("p2p", VSWITCH="OvsVanilla").vswitch, OvsVSwitch)


def test_unknown_names() -> None:
    with pytest.raises(UnknownNameError, match="valid deployments"):
        _build("p2q")
    with pytest.raises(UnknownNameError, match="vswitch"):
        _build("p2p", VSWITCH="vpp")


def test_linux_bridge_cannot_split_streams() -> None:
    with pytest.raises(ConfigError, match="linux-bridge cannot"):
        _build("pvpv", Traffic(multistream=2), VSWITCH="linux-bridge")


def test_vlan_push_and_id() -> None:
    assert _build("p2p", fm="vlan", VSWITCH_VLAN_ID=7).vlan_id == 7
    assert _build("p2p").vlan_id is None


@pytest.mark.skipif(kernel_config_option("CONFIG_BRIDGE_VLAN_FILTERING") is not False,
                    reason="only kernels without bridge VLAN filtering refuse this")
def test_linux_bridge_vlan_on_a_kernel_without_filtering() -> None:
    with pytest.raises(PrerequisiteError, match="CONFIG_BRIDGE_VLAN_FILTERING"):
        _build("p2p", fm="vlan", VSWITCH="linux-bridge")


def test_vnf_auto_follows_the_switch() -> None:
    assert resolve_vnf({"VNF": "auto"}, REGS, OvsVSwitch) is NetnsVnf
    assert resolve_vnf({"VNF": "netns"}, REGS, LinuxBridgeVSwitch) is NetnsVnf
    ovs_dpdk = REGS.vswitches.get("ovs-dpdk").cls
    assert resolve_vnf({"VNF": "auto"}, REGS, ovs_dpdk).NAME == ovs_dpdk.DEFAULT_VNF


def test_incompatible_vnf_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="vhostuser"):
        resolve_vnf({"VNF": "testpmd-vhost"}, REGS, OvsVSwitch)


def test_mtu_carries_the_biggest_frame() -> None:
    assert mtu_for(Traffic(frame_size_bytes=64)) == 1500
    assert mtu_for(Traffic(frame_size_bytes=9018)) == 9000


def test_teardown_before_deploy_is_harmless() -> None:
    dep = _build("pvp")
    dep.teardown()
    assert dep.dut_pids() == {}


def test_a_generator_owning_both_ports_gets_them_in_one_namespace() -> None:
    assert _build("p2p", TRAFFICGEN="trex").one_gen_netns  # TRex: one server owns both ports
    assert _build("p2p", TRAFFICGEN="Trex").one_gen_netns
    assert not _build("p2p", TRAFFICGEN="vsgen").one_gen_netns
