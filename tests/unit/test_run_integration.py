"""Planning VSPERF's integration tests: op2p's addresses, the lab's address translation, and what
a test's switch or a simulated DUT cannot do (one line, before anything is deployed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vsperf.catalog import Catalog
from vsperf.catalog import TestCase as CatalogTest
from vsperf.config import load_settings
from vsperf.errors import ConfigError
from vsperf.run.integration import check_integration, integration_settings, translated
from vsperf.vswitch.linux_bridge import LinuxBridgeVSwitch
from vsperf.vswitch.ovs import OvsVSwitch


def test_translation_keeps_the_last_16_bits() -> None:
    assert translated("6.0.0.1", destination=True) == "198.19.0.1"
    assert translated("9.0.1.2", destination=False) == "198.18.1.2"
    assert translated("198.18.7.7", destination=True) == "198.18.7.7"


def catalog_tests(tmp_path: Path, body: str) -> list[CatalogTest]:
    path = tmp_path / "t.conf"
    path.write_text(f"INTEGRATION_TESTS = [{body}]\n")
    return list(Catalog.load([path]).view(integration=True).tests)


def test_op2p_addresses_and_the_lab_translation(tmp_path: Path) -> None:
    test = catalog_tests(tmp_path, "{'Name': 'o', 'Deployment': 'op2p', 'Tunnel Operation': 'encapsulation'}")[0]
    settings = load_settings(env={}, test_params="TRAFFICGEN_PORT1_IP='9.0.0.2';TRAFFICGEN_PORT2_IP='10.0.0.2';"
                                                 "TRAFFICGEN_PORT2_MAC='02:00:00:00:00:02'")
    planned = integration_settings(test, settings, simulated=True)  # a simulated DUT: any address
    assert planned["TRAFFIC"]["l3"]["srcip"] == "9.0.0.2" and planned["TRAFFIC"]["l2"]["dstmac"] == "02:00:00:00:00:02"
    lab = integration_settings(test, settings.merged({"LAB_ADDRESS_TRANSLATION": True}, "t"), simulated=False)
    assert (lab["TRAFFIC"]["l3"]["srcip"], lab["TRAFFIC"]["l3"]["dstip"]) == ("198.18.0.2", "198.19.0.2")
    assert lab["TRAFFICGEN_PORT2_IP"] == "198.19.0.2"
    assert lab.source("TRAFFICGEN_PORT2_IP") == "local lab: LAB_ADDRESS_TRANSLATION of test o"
    testbed = settings.merged({"LAB_ADDRESS_TRANSLATION": True, "TESTBED": "bed.yaml"}, "t")
    assert integration_settings(test, testbed, simulated=False)["TRAFFIC"]["l3"]["srcip"] == "9.0.0.2"


def test_what_the_switch_or_a_simulated_dut_cannot_do(tmp_path: Path) -> None:
    mod, steps = catalog_tests(tmp_path, "{'Name': 'm', 'Deployment': 'p2p', 'Frame Modification': 'mpls'}, "
                                 "{'Name': 's', 'Deployment': 'clean', 'TestSteps': [['vswitch', 'add_switch', 'b']]}")
    settings = load_settings(env={})
    with pytest.raises(ConfigError, match=r"^test m: Frame Modification mpls: vswitch linux-bridge cannot apply it "
                                          r"\(it applies vlan\); use --vswitch ovs or ovs-dpdk$"):
        check_integration(mod, settings, LinuxBridgeVSwitch, simulated=False)
    check_integration(mod, settings, OvsVSwitch, simulated=False)
    check_integration(mod, settings, LinuxBridgeVSwitch, simulated=True)  # nothing is deployed
    with pytest.raises(ConfigError, match=r"test s: step 0 .*: the vswitch steps need Open vSwitch \(VSWITCH ovs or "
                                          r"ovs-dpdk\), not linux-bridge"):
        check_integration(steps, settings, LinuxBridgeVSwitch, simulated=False)
    with pytest.raises(ConfigError, match="vswitch needs a deployed DUT, and dummy simulates it; use --trafficgen"):
        check_integration(steps, settings.merged({"TRAFFICGEN": "dummy"}, "t"), OvsVSwitch, simulated=True)
    capture = settings.merged({"TRAFFIC": {"capture": {"enabled": True, "tx_ports": [0]}}}, "t")
    with pytest.raises(ConfigError, match="TRAFFIC capture tx_ports \\[0\\] \\(test m\\)"):
        check_integration(mod, capture, OvsVSwitch, simulated=False)
