"""VSPERF's jumbo frames on OVS-DPDK through `vsperf --integration` (root): VSWITCH_JUMBO_FRAMES_SIZE
is the MTU the ports steps add ask for and really get (OVSDB and the datapath; a vhost-user port
once its guest connected: OVS 3.1 reports 0 before), and upstream's own jumbo test asks for 9000
(net_af_xdp on a veth refuses 9000 here: its device max MTU is 3542)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_helpers import leftovers, params_text, results, vsperf
from conftest import lab_skip_reason

pytestmark = pytest.mark.root

OVS_DPDK = Path("/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk")
UPSTREAM = Path("/work/shared/vsperf-upstream/conf/integration")
SHORT = params_text({"TRAFFICGEN_DURATION": "1", "TRAFFICGEN_PKT_SIZES": "(64,)"})

JUMBO = """INTEGRATION_TESTS = [
    {"Name": "jumbo_3000", "Deployment": "clean", "Description": "jumbo MTU on the ports steps add",
     "vSwitch": "OvsDpdkVhost",
     "Parameters": {"VSWITCH_JUMBO_FRAMES_ENABLED": 'True', "VSWITCH_JUMBO_FRAMES_SIZE": 3000,
                    "VSWITCH_VHOSTUSER_SERVER_MODE": False},
     "TestSteps": [
        ['vswitch', 'add_switch', 'int_br0'],
        ['vswitch', 'add_phy_port', 'int_br0'],
        ['vswitch', 'add_vport', 'int_br0'],
        ['vswitch', 'add_vport', 'int_br0'],
        ['#phy', 'tools', 'exec_shell', '$TOOLS["ovs-vsctl"] get Interface dpdk0 mtu'],
        ['#before', 'tools', 'exec_shell', '$TOOLS["ovs-vsctl"] get Interface dpdkvhostuserclient0 mtu'],
        ['vnf1', 'start'],
        ['sleep', '2'],
        ['#vport', 'tools', 'exec_shell', '$TOOLS["ovs-vsctl"] get Interface dpdkvhostuserclient0 mtu'],
        ['#datapath', 'tools', 'exec_shell', '$TOOLS["ovs-appctl"] dpctl/show', '|mtu=\\\\d+'],
        ['vnf1', 'stop'],
    ]},
]
"""


@pytest.fixture(autouse=True)
def _lab() -> None:
    reason = lab_skip_reason() or (None if OVS_DPDK.exists() else "OVS-DPDK missing: apt-get install "
                                                                  "openvswitch-switch-dpdk")
    if reason:
        pytest.skip(reason)


def test_jumbo_size_is_the_mtu_of_the_ports_steps_add(tmp_path: Path) -> None:
    tests = tmp_path / "jumbo.conf"
    tests.write_text(JUMBO)
    out = tmp_path / "run"
    proc = vsperf("--integration", "-f", str(tests), "jumbo_3000", "--trafficgen", "vsgen", "--results-dir", str(out),
                  "--test-params", SHORT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = results(out)
    test = data["tests"][0]
    assert test["status"] == "passed", test["error"]
    found = {s["step"]: s["result"] for s in test["steps"]}
    by_label = {label: next(v for k, v in found.items() if want in k) for label, want in (
        ("phy", "dpdk0 mtu"), ("datapath", "dpctl/show"))}
    assert by_label["phy"].strip() == "3000"
    # the datapath carries it: dpdk0 and both vhost-user ports (their guest connected)
    assert sorted(re.findall(r"mtu=\d+", by_label["datapath"])) == ["mtu=3000"] * 3
    vport = [s["result"].strip() for s in test["steps"] if "dpdkvhostuserclient0 mtu" in s["step"]]
    assert vport == ["0", "3000"]  # OVS 3.1: 0 until the guest connects, then the MTU asked for
    assert leftovers(data["run_id"]) == []


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="upstream's integration files are not on this machine")
def test_upstream_reduce_mtu_phy_port_asks_for_9000(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = vsperf("--integration", "-f", str(UPSTREAM / "01_testcases.conf"), "-f",
                  str(UPSTREAM / "01b_dpdk_regression_tests.conf"), "ovsdpdk_jumbo_reduce_mtu_phy_port_ovsdb",
                  "--trafficgen", "vsgen", "--results-dir", str(out), "--test-params", SHORT)
    data = results(out)
    test = data["tests"][0]
    add_port = [line for line in (out / "commands.log").read_text().splitlines() if " add-port int_br0 dpdk0 " in line]
    assert len(add_port) == 1 and "mtu_request=9000" in add_port[0], add_port  # VSWITCH_JUMBO_FRAMES_SIZE
    if test["status"] != "passed":  # net_af_xdp on a veth: device max MTU 3542 here, the port is refused
        assert proc.returncode == 1 and "add_phy_port" in test["error"] and "dpdk0" in test["error"], test["error"]
    assert leftovers(data["run_id"]) == []
