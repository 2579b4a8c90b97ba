import re
from pathlib import Path

import pytest

from vsperf.catalog import Catalog, load_file
from vsperf.errors import ConfigError, UnknownNameError

SEED_TESTS = {
    "phy2phy_tput": ("p2p", "LTD.Throughput.RFC2544.PacketLossRatio"),
    "back2back": ("p2p", "LTD.Throughput.RFC2544.BackToBackFrames"),
    "phy2phy_tput_mod_vlan": ("p2p", "LTD.Throughput.RFC2544.PacketLossRatioFrameModification"),
    "phy2phy_cont": ("p2p", "Phy2Phy Continuous Stream"),
    "pvp_cont": ("pvp", "PVP Continuous Stream"),
    "pvvp_cont": ("pvvp", "PVVP Continuous Stream"),
    "phy2phy_scalability": ("p2p", "LTD.Scalability.Flows.RFC2544.0PacketLoss"),
    "pvp_tput": ("pvp", "LTD.Throughput.RFC2544.PacketLossRatio"),
    "pvp_back2back": ("pvp", "LTD.Throughput.RFC2544.BackToBackFrames"),
    "pvvp_tput": ("pvvp", "LTD.Throughput.RFC2544.PacketLossRatio"),
    "pvvp_back2back": ("pvvp", "LTD.Throughput.RFC2544.BackToBackFrames"),
    "phy2phy_cpu_load": ("p2p", "LTD.CPU.RFC2544.0PacketLoss"),
    "phy2phy_mem_load": ("p2p", "LTD.Memory.RFC2544.0PacketLoss"),
}


def test_catalog_has_every_seed_test_with_its_meaning() -> None:
    catalog = Catalog.load()
    for name, (deployment, description) in SEED_TESTS.items():
        test = catalog.get(name)
        assert test.deployment == deployment
        assert test.description == description


def test_traffic_types_follow_vsperf() -> None:
    catalog = Catalog.load()
    assert catalog.get("phy2phy_tput").traffic_type == "rfc2544_throughput"
    assert catalog.get("back2back").traffic_type == "rfc2544_back2back"
    assert catalog.get("pvp_cont").traffic_type == "rfc2544_continuous"
    assert catalog.get("phy2phy_tput_mod_vlan").frame_modification == "vlan"
    assert catalog.get("phy2phy_scalability").parameters["TRAFFIC"]["multistream"] >= 1000
    assert catalog.get("phy2phy_cpu_load").load is not None


def test_select_by_name_and_filters() -> None:
    catalog = Catalog.load()
    assert [t.name for t in catalog.select(["back2back", "phy2phy_tput"])] == ["back2back", "phy2phy_tput"]
    names = [t.name for t in catalog.select(filters="tput,!pvvp,!mod")]
    assert "phy2phy_tput" in names and "pvp_tput" in names
    assert not any("pvvp" in n or "mod" in n for n in names)
    # every test but those vsperf cannot run here (the VPP ones)
    assert [t.name for t in catalog.select()] == [t.name for t in catalog.tests if not t.unavailable]
    assert [t.name for t in catalog.select(filters="PHY2PHY_TPUT,!VLAN,!vpp")] == ["phy2phy_tput"]


def test_unknown_test_name_suggests_the_closest() -> None:
    with pytest.raises(UnknownNameError, match=r"unknown test 'phy2phy_tpt' \(did you mean 'phy2phy_tput'\?\)"):
        Catalog.load().select(["phy2phy_tpt"])


def test_filter_matching_nothing_is_an_error() -> None:
    with pytest.raises(UnknownNameError, match="no test matches"):
        Catalog.load().select(filters="nosuchthing")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("- Name: x\n  Description: d\n", "missing required key 'Deployment'"),
        ("- Name: x\n  Deploymnet: p2p\n  Description: d\n", "unknown key 'Deploymnet' (did you mean 'Deployment'?)"),
        ("- Name: x\n  Deployment: p3p\n  Description: d\n", "unknown Deployment 'p3p'"),
        ("- Name: x\n  Deployment: p2p\n  Description: d\n  Parameters: 3\n", "Parameters must be a mapping"),
        ("- Name: x\n  Deployment: p2p\n  Description: d\n  Load: {tool: stress-ng, load: 150}\n", "between 0 and 100"),
        ("- Name: [x\n", "line 2, column 1"),
        ("Name: x\n", "expected a list of test cases"),
        # caught before anything runs, even on the simulated DUT
        ("- Name: x\n  Deployment: pvvp0\n", "deployment 'pvvp0': the local lab supports 1..9 VNFs"),
        ("- Name: x\n  Deployment: pvvp99999999\n", "unknown Deployment 'pvvp99999999'"),
        ("- Name: x\n  Deployment: pvpv10\n", "deployment 'pvpv10': the local lab supports 1..9 VNFs"),
        (f"- Name: {'t' * 101}\n  Deployment: p2p\n", "Name is 101 characters long; at most 100 (it becomes part "
                                                      "of file names)"),
        ('- Name: "x\\n"\n  Deployment: p2p\n', "Name 'x\\n' may only hold letters, digits"),
        (f"- Name: x\n  Deployment: p2p\n  Description: {'d' * 2001}\n", "Description is 2,001 characters long"),
        ("- Name: x\n  Deployment: p2p\n- Name: y\n  Deployment: p2p\n- Name: x\n  Deployment: pvp\n",
         "test #3 (x): test #1 has the same Name; give each test its own"),
    ],
)
def test_bad_test_files_name_file_and_key(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(body)
    with pytest.raises(ConfigError) as err:
        load_file(path)
    assert message in str(err.value)
    assert str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_user_files_add_and_redefine_tests(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(
        "- Name: my_tput\n  Deployment: pvvp4\n  Description: four VNFs\n"
        "- Name: phy2phy_tput\n  Deployment: p2p\n  Description: mine\n"
    )
    catalog = Catalog.load([tmp_path])
    assert catalog.get("my_tput").deployment == "pvvp4"
    assert catalog.get("phy2phy_tput").description == "mine"
    assert len([t for t in catalog.tests if t.name == "phy2phy_tput"]) == 1


def test_a_name_in_two_user_files_is_an_error(tmp_path: Path) -> None:
    for name in ("a.yaml", "b.yaml"):
        (tmp_path / name).write_text("- Name: mine\n  Deployment: p2p\n")
    with pytest.raises(ConfigError, match=r"b\.yaml: test mine is also defined in .*a\.yaml; give each test its own"):
        Catalog.load([tmp_path])


@pytest.mark.parametrize("filters", ["", ",", "!", " , !"])
def test_a_filter_naming_nothing_is_an_error(filters: str) -> None:
    # An empty $TESTS in a CI job used to run every test.
    with pytest.raises(UnknownNameError, match=r"--tests .* names no test; give substrings such as 'tput,!vpp'"):
        Catalog.load().select(filters=filters)


def test_missing_user_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        Catalog.load([tmp_path / "nope.yaml"])


# --- VSPERF's integration tests (INTEGRATION_TESTS, --integration) ---------------------------------

INTEGRATION = """INTEGRATION_TESTS = [
    {"Name": "steps_ok", "Deployment": "clean", "TestSteps": [['vswitch', 'add_switch', 'b'],
                                                               ['vswitch', 'del_switch', 'b']]},
    {"Name": "steps_bad", "Deployment": "clean", "TestSteps": [['vswitch', 'add_switch', 'b'],
                                                                ['vswitch', 'del_port', 'b', '#STEP[3][0]']]},
    {"Name": "tunnel", "Deployment": "op2p", "Tunnel Type": "GRE", "Tunnel Operation": "decapsulation",
     "Test Modifier": "FrameMod", "Frame Modification": "TTL"},
]
PERFORMANCE_TESTS = [{"Name": "perf", "Deployment": "p2p"}]
"""


def test_the_two_sets(tmp_path: Path) -> None:
    path = tmp_path / "t.conf"
    path.write_text(INTEGRATION)
    catalog = Catalog.load([path])
    integration = catalog.view(integration=True)
    assert [t.name for t in integration.tests] == ["steps_ok", "steps_bad", "tunnel"]
    performance = catalog.view(integration=False)
    assert "perf" in performance.names() and "steps_ok" not in performance.names()
    with pytest.raises(UnknownNameError, match="test 'steps_ok' is an integration test \\(INTEGRATION_TESTS\\): add "
                                               "--integration"):
        performance.get("steps_ok")
    with pytest.raises(UnknownNameError, match="test 'perf' is a performance test: run it without --integration"):
        integration.get("perf")
    ok, bad, tunnel = integration.tests
    assert ok.integration and ok.steps is not None and len(ok.steps) == 2 and not ok.unavailable
    assert bad.unavailable == ('step 1 ["vswitch", "del_port", "b", "#STEP[3][0]"]: #STEP[3] refers to step 3, '
                               'which does not come before step 1')
    assert (tunnel.tunnel_type, tunnel.tunnel_operation, tunnel.frame_modification) == ("gre", "decapsulation", "TTL")
    with pytest.raises(ConfigError, match=r"^test steps_bad: step 1"):
        integration.select(["steps_bad"])
    assert [t.name for t in integration.select()] == ["steps_ok", "tunnel"]  # the bad one left out, with a warning


GUESTS = """INTEGRATION_TESTS = [
    {'Name': 'nics', 'Deployment': 'clean', 'Parameters': {'NICS': []}, 'TestSteps': [['log', 'info', 'x']]},
    {'Name': 'trex_vm', 'Deployment': 'clean', 'Parameters': {'GUEST_NICS_NR': [2, 4]},
     'TestSteps': [['log', 'info', 'x']]},
    {'Name': 'two', 'Deployment': 'clean', 'Parameters': {'GUEST_NICS_NR': [2]}, 'TestSteps': [['log', 'info', 'x']]},
]
"""


def test_step_tests_needing_four_guest_nics_are_left_out_not_those_setting_nics(tmp_path: Path) -> None:
    path = tmp_path / "t.conf"
    path.write_text(GUESTS)
    nics, trex_vm, two = Catalog.load([path]).view(integration=True).tests
    assert nics.unavailable == ""  # NICS is accepted, not used: steps get the DUT's ports as $NICS
    assert trex_vm.unavailable.startswith("GUEST_NICS_NR [2, 4]: vsperf's guests have exactly 2 NICs")
    assert two.unavailable == ""


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{'Name': 'x', 'Deployment': 'op2p'}", "Deployment op2p needs a Tunnel Operation (encapsulation, "
                                                "decapsulation)"),
        ("{'Name': 'x', 'Deployment': 'op2p', 'Tunnel Operation': 'encapsulate'}",
         "unknown Tunnel Operation 'encapsulate' (did you mean 'encapsulation'?)"),
        ("{'Name': 'x', 'Deployment': 'op2p', 'Tunnel Operation': 'encapsulation', 'Tunnel Type': 'ipip'}",
         "unknown Tunnel Type 'ipip'; valid: vxlan, gre, geneve"),
        ("{'Name': 'x', 'Deployment': 'p2p', 'Tunnel Type': 'vxlan'}",
         "Tunnel Type goes with Deployment op2p or ptunp, not p2p"),
        ("{'Name': 'x', 'Deployment': 'p2p', 'Test Modifier': 'x'}", "unknown Test Modifier 'x'"),
        ("{'Name': 'x', 'Deployment': 'p2p', 'Frame Modification': 'nat'}", "unknown Frame Modification 'nat'"),
    ],
)
def test_integration_keys_are_checked(tmp_path: Path, entry: str, message: str) -> None:
    path = tmp_path / "t.conf"
    path.write_text(f"INTEGRATION_TESTS = [{entry}]\n")
    with pytest.raises(ConfigError, match=re.escape(message)):
        Catalog.load([path])
