"""VSPERF's step-driven tests (TestSteps) on the local lab through `vsperf --integration` (root):
a bridge, its ports and a flow made by steps really exist in Open vSwitch mid-test (asked by
later steps, through the run's executor: commands.log) and are gone after, with traffic through
them; upstream's vswitch tests from its own file; a failing step fails its test, saying why; shell
steps (pipes, `sudo`, `$((...))`) reach the test's own Open vSwitch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import leftovers, params_text, results, vsperf
from conftest import lab_skip_reason

pytestmark = pytest.mark.root

UPSTREAM = Path("/work/shared/vsperf-upstream/conf/integration")
SHORT = params_text({"TRAFFICGEN_DURATION": "1", "TRAFFICGEN_PKT_SIZES": "(64,)"})

STEPS = """INTEGRATION_TESTS = [
    {"Name": "steps_ovs", "Deployment": "clean", "Description": "bridge, ports, flows by steps", "TestSteps": [
        ['vswitch', 'add_switch', 'stepbr'],
        ['#p0', 'vswitch', 'add_phy_port', 'stepbr'],
        ['#p1', 'vswitch', 'add_phy_port', 'stepbr'],
        ['vswitch', 'add_flow', 'stepbr', {'in_port': '#STEP[p0][1]', 'actions': ['output:#STEP[p1][1]'],
                                           'idle_timeout': '0'}],
        ['vswitch', 'add_flow', 'stepbr', {'in_port': '#STEP[p1][1]', 'actions': ['output:#STEP[p0][1]'],
                                           'idle_timeout': '0'}],
        ['#bridges', 'tools', 'exec_shell', '$TOOLS["ovs-vsctl"] list-br'],
        ['#ports', 'tools', 'exec_shell', '$TOOLS["ovs-vsctl"] list-ports stepbr'],
        ['#flows', 'vswitch', 'dump_flows', 'stepbr'],
        # a first send warms the userspace datapath (its first frames of a new flow can be lost
        # on a loaded machine); the second is the one checked
        ['trafficgen', 'send_traffic', {'traffic_type': 'rfc2544_continuous', 'frame_rate': 0.1}],
        ['#sent', 'trafficgen', 'send_traffic', {'traffic_type': 'rfc2544_continuous', 'frame_rate': 0.1}],
        ['tools', 'assert', '#STEP[sent][0]["frame_loss_percent"] == 0'],
        ['vswitch', 'del_flow', 'stepbr'],
        ['vswitch', 'del_port', 'stepbr', '#STEP[p0][0]'],
        ['vswitch', 'del_port', 'stepbr', '#STEP[p1][0]'],
        ['#left', 'tools', 'exec_shell', '$TOOLS["ovs-vsctl"] list-ports stepbr'],
        ['vswitch', 'del_switch', 'stepbr'],
        ['#after', 'tools', 'exec_shell', '$TOOLS["ovs-vsctl"] list-br'],
    ]},
    {"Name": "steps_fail", "Deployment": "clean", "Description": "a check that fails", "TestSteps": [
        ['vswitch', 'add_switch', 'stepbr'],
        ['tools', 'assert', '1 + 1 == 3'],
        ['vswitch', 'del_switch', 'stepbr'],
    ]},
]
"""


SHELL_STEPS = """INTEGRATION_TESTS = [
    {"Name": "steps_shell", "Deployment": "clean", "Description": "shell steps", "TestSteps": [
        ['vswitch', 'add_switch', 'shellbr'],
        ['tools', 'exec_shell', 'sudo $TOOLS["ovs-vsctl"] show | grep -c "Bridge shellbr"'],
        ['tools', 'exec_shell', 'sudo -E ovs-appctl dpif/show | grep -o "shellbr:" | sort -u'],
        ['tools', 'exec_shell', 'sudo $TOOLS["ovs-appctl"] -t ovs-vswitchd version | head -1'],
        ['tools', 'exec_shell', 'echo $((1+`wc -l < $_OVSDPDK_VSWITCH_LOG`)) $OVS_RUNDIR', '|^(\\d+) (\\S+)$'],
        ['vswitch', 'del_switch', 'shellbr'],
    ]},
]
"""


@pytest.fixture(autouse=True)
def _lab() -> None:
    reason = lab_skip_reason()
    if reason:
        pytest.skip(reason)


def step_results(test: dict[str, object]) -> list[str]:
    steps = test["steps"]
    assert isinstance(steps, list)
    return [str(s["result"]) for s in steps]


def test_bridge_ports_and_flows_exist_mid_test_and_are_gone_after(tmp_path: Path) -> None:
    tests = tmp_path / "steps.conf"
    tests.write_text(STEPS)
    out = tmp_path / "run"
    proc = vsperf("--integration", "-f", str(tests), "steps_ovs", "steps_fail", "--vswitch", "ovs", "--trafficgen",
                  "vsgen", "--results-dir", str(out), "--test-params", SHORT)
    assert proc.returncode == 1, proc.stderr[-3000:]  # steps_fail failed
    data = results(out)
    ok, failed = data["tests"]
    assert ok["status"] == "passed", ok["error"]
    assert [s["status"] for s in ok["steps"]] == ["passed"] * 17
    found = step_results(ok)
    p0, p1 = (json.loads(found[i]) for i in (1, 2))
    assert "stepbr" in found[5].split()  # the bridge, mid-test
    assert sorted(found[6].split()) == sorted([p0[0], p1[0]])  # its two ports
    assert f"in_port={p0[1]}" in found[7] and f"actions=output:{p1[1]}" in found[7]  # the flows
    sent = ok["results"][-1]["metrics"]
    assert sent["frame_loss_percent"] == 0 and sent["throughput_rx_fps"] > 0
    assert found[14].split() == [] and "stepbr" not in found[16].split()  # ports, then the bridge, gone
    commands = (out / "commands.log").read_text()
    assert "list-ports stepbr" in commands and "del-br stepbr" in commands
    assert failed["status"] == "failed"
    assert [s["status"] for s in failed["steps"]] == ["passed", "failed"]  # the steps after it do not run
    assert "1 + 1 == 3" in failed["error"]
    assert "steps_fail" in (out / "report.rst").read_text()
    assert leftovers(data["run_id"]) == []


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="upstream's integration files are not on this machine")
def test_upstream_vswitch_tests_from_its_file(tmp_path: Path) -> None:
    # (bridges, phy ports and flows: the test above; the others run in docs/from-vsperf.rst's command)
    names = ["vswitch_add_del_vports", "vswitch_vports_add_del_flow", "vswitch_p2p_cont", "vswitch_pvp"]
    out = tmp_path / "run"
    proc = vsperf("--integration", "-f", str(UPSTREAM / "01_testcases.conf"), *names, "--vswitch", "ovs",
                  "--trafficgen", "vsgen", "--results-dir", str(out), "--test-params", SHORT, timeout_s=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = results(out)
    assert [(t["name"], t["status"]) for t in data["tests"]] == [(n, "passed") for n in names]
    for test in data["tests"]:
        assert test["steps"] and all(s["status"] == "passed" for s in test["steps"]), test["name"]
    cont = data["tests"][2]["results"][0]["metrics"]
    assert cont["throughput_rx_fps"] > 0
    assert leftovers(data["run_id"]) == []


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="upstream's integration files are not on this machine")
def test_upstream_l4_multi_flow_test_with_lab_address_translation(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = vsperf("--integration", "-f", str(UPSTREAM / "01_testcases.conf"), "-f",
                  str(UPSTREAM / "01a_testcases_l34_vxlan.conf"), "p2p_l4_multi_PORT_mask_ovs", "--vswitch", "ovs",
                  "--trafficgen", "vsgen", "--results-dir", str(out),
                  "--test-params", params_text({"TRAFFICGEN_DURATION": "1", "TRAFFICGEN_PKT_SIZES": "(64,)",
                                                "LAB_ADDRESS_TRANSLATION": "True"}), timeout_s=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = results(out)
    test = data["tests"][0]
    assert test["status"] == "passed", test["error"]
    assert test["results"][0]["metrics"]["throughput_rx_fps"] > 0
    # upstream's flow for 6.0.0.1/8 matches the address sent here (198.19.0.1): the frames went through it
    dump = next(s["result"] for s in test["steps"] if '"dump_flows"' in s["step"])
    flow = next(line for line in dump.splitlines() if "nw_dst=198.0.0.0/8" in line)
    assert int(flow.split("n_packets=")[1].split(",")[0]) > 0, flow
    assert leftovers(data["run_id"]) == []


def upstream_dpdk_test(tmp_path: Path, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Upstream's OVS-DPDK test `name`, run from its own files: the results and the test, passed."""
    out = tmp_path / "run"
    proc = vsperf("--integration", "-f", str(UPSTREAM / "01_testcases.conf"), "-f",
                  str(UPSTREAM / "01b_dpdk_regression_tests.conf"), name, "--trafficgen", "vsgen",
                  "--results-dir", str(out), timeout_s=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = results(out)
    test = data["tests"][0]
    assert test["status"] == "passed", test["error"]
    return data, test


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="upstream's integration files are not on this machine")
def test_upstream_vhost_sock_dir_on_ovs_dpdk(tmp_path: Path) -> None:
    # $TOOLS["ovs_var_tmp"] is the test's OVS run directory: the vhost-user socket appears in its test_dir
    data, test = upstream_dpdk_test(tmp_path, "ovsdpdk_vhostuser_sock_dir")
    assert json.loads(test["steps"][5]["result"]) == ["dpdkvhostuser0"]
    assert leftovers(data["run_id"]) == []


def test_shell_steps_reach_the_tests_own_open_vswitch(tmp_path: Path) -> None:
    # no system Open vSwitch runs here: a bridge seen by these commands is the test's
    tests = tmp_path / "shell.conf"
    tests.write_text(SHELL_STEPS)
    out = tmp_path / "run"
    proc = vsperf("--integration", "-f", str(tests), "--vswitch", "ovs", "--trafficgen", "vsgen",
                  "--results-dir", str(out), "--test-params", SHORT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = results(out)
    test = data["tests"][0]
    assert test["status"] == "passed", test["error"]
    found = step_results(test)
    assert found[1].strip() == "1"  # ovs-vsctl show | grep -c
    assert found[2].strip() == "shellbr:"  # ovs-appctl reached this ovs-vswitchd
    assert found[3].startswith("ovs-vswitchd (Open vSwitch)")
    [[lines, rundir]] = json.loads(found[4])
    assert int(lines) > 1 and rundir.startswith("/") and rundir.endswith("ovs")  # the log has lines
    commands = (out / "commands.log").read_text()
    assert 'grep -c "Bridge shellbr"' in commands
    assert leftovers(data["run_id"]) == []


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="upstream's integration files are not on this machine")
def test_upstream_rate_test_with_shell_steps_on_ovs_dpdk(tmp_path: Path) -> None:
    data, test = upstream_dpdk_test(tmp_path, "ovsdpdk_rate_create_phy_port")
    listed = next(s["result"] for s in test["steps"] if "list interface" in s["step"])
    assert "ingress_policing_burst: 8000" in listed and "ingress_policing_rate: 10000" in listed
    assert leftovers(data["run_id"]) == []


POLICED = """INTEGRATION_TESTS = [
    {"Name": "police_dpdk0", "Deployment": "p2p", "Description": "the deployment's port policed by VSPERF's name",
     "vSwitch": "OvsDpdkVhost",
     "Parameters": {"TRAFFIC": {"traffic_type": "rfc2544_continuous", "frame_rate": 100, "bidir": "False"}},
     "TestSteps": [
        ['#ports', 'tools', 'exec_shell', '$TOOLS["ovs-vsctl"] list-ifaces $VSWITCH_BRIDGE_NAME'],
        ['tools', 'exec_shell', '$TOOLS["ovs-vsctl"] set Interface dpdk0 ingress_policing_rate=20000 '
                                'ingress_policing_burst=200'],
        ['trafficgen', 'send_traffic', {}],
        ['#policed', 'trafficgen', 'get_results'],
    ]},
]
"""


def test_the_ovs_dpdk_deployments_own_ports_take_vsperfs_names(tmp_path: Path) -> None:
    # upstream's rate and QoS tests police the p2p deployment's ports as dpdk0 and dpdk1
    tests = tmp_path / "policed.conf"
    tests.write_text(POLICED)
    out = tmp_path / "run"
    proc = vsperf("--integration", "-f", str(tests), "--trafficgen", "vsgen", "--results-dir", str(out),
                  "--test-params", params_text({"TRAFFICGEN_DURATION": "2", "TRAFFICGEN_PKT_SIZES": "(64,)"}))
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = results(out)
    test = data["tests"][0]
    assert test["status"] == "passed", test["error"]
    found = step_results(test)
    assert found[0].split() == ["dpdk0", "dpdk1"]
    [policed] = json.loads(found[3])
    # OVS polices 20,000 kbit/s of what follows the Ethernet header: 46 of a 64-byte frame's bytes
    payload_mbps = policed["throughput_rx_mbps"] * (64 - 18) / 64
    assert abs(payload_mbps / 20 - 1) < 0.1, policed
    assert policed["tx_rate_fps"] > 10 * policed["throughput_rx_fps"], policed  # the generator offered far more
    assert leftovers(data["run_id"]) == []
