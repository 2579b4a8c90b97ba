import pytest

from vsperf.backends import build_registries
from vsperf.catalog import Catalog
from vsperf.config import load_settings
from vsperf.errors import UnknownNameError
from vsperf.run.plan import plan_tests


def plan_one(name: str, **layers: str) -> object:
    settings = load_settings(env={}, test_params="TRAFFICGEN=dummy")
    for source, value in layers.items():
        settings = settings.merged({"LOADGEN": value}, source.replace("_", "-"))
    return plan_tests([Catalog.load().get(name)], settings, build_registries())[0]


def test_load_tool_of_the_test_names_the_loadgen() -> None:
    pt = plan_one("phy2phy_cpu_load")
    assert pt.loadgen == "stress-ng"  # type: ignore[attr-defined]
    assert plan_one("phy2phy_tput").loadgen is None  # type: ignore[attr-defined]


def test_loadgen_option_overrides_and_is_validated() -> None:
    with pytest.raises(UnknownNameError, match="unknown loadgen 'stresz'"):
        plan_one("phy2phy_cpu_load", __loadgen="stresz")
    # The LOADGEN setting from a conf file does not override the test's own tool.
    assert plan_one("phy2phy_cpu_load", conf_file="nosuch").loadgen == "stress-ng"  # type: ignore[attr-defined]


def test_simulated_and_traffic_only_deploy_nothing_on_the_lab() -> None:
    settings = load_settings(env={}, test_params="TRAFFICGEN=dummy")
    catalog, regs = Catalog.load(), build_registries()
    simulated = plan_tests([catalog.get("pvp_tput")], settings, regs)[0]
    assert simulated.deployment.deploys is None and not simulated.deploys
    real = load_settings(env={}, test_params="TRAFFICGEN=vsgen;VSWITCH=OvsVanilla")
    deployed = plan_tests([catalog.get("pvp_tput")], real, regs)[0]
    assert deployed.deployment.deploys == "pvp" and deployed.deploys
    assert (deployed.deployment.vswitch, deployed.deployment.vnf) == ("ovs", "auto")  # canonical names
    wire = plan_tests([catalog.get("pvp_tput")], real, regs, traffic_only=True)[0]
    assert wire.deployment.deploys == "wire" and wire.deploys
    vlan = plan_tests([catalog.get("phy2phy_tput_mod_vlan")], real, regs)[0].deployment
    assert vlan.frame_modification == "vlan" and vlan.vlan_id == real["VSWITCH_VLAN_ID"]


def test_a_generator_owning_both_ports_deploys_them_in_one_namespace() -> None:
    catalog, regs = Catalog.load(), build_registries()
    for trafficgen, one in (("trex", True), ("Trex", True), ("vsgen", False)):
        settings = load_settings(env={}, test_params=f"TRAFFICGEN={trafficgen}")
        spec = plan_tests([catalog.get("phy2phy_tput")], settings, regs)[0].deployment
        assert spec.one_gen_netns is one, trafficgen
        assert spec.locations is one  # trex also drives a testbed cable's location (a PCI address)
