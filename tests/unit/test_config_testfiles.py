"""Test-case files read together share their names, as VSPERF's files did; each file adds its tests
to PERFORMANCE_TESTS or INTEGRATION_TESTS."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vsperf.config.testfiles import read_test_files
from vsperf.errors import ConfigError

UPSTREAM = Path(__file__).resolve().parents[3] / "shared" / "vsperf-upstream" / "conf" / "integration"


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_files_share_their_names_and_add_their_tests(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    first = write(tmp_path / "01.conf", "STEP = [['log', 'info', 'x']]\nINTEGRATION_TESTS = "
                                        "[{'Name': 'a', 'Deployment': 'clean', 'TestSteps': STEP}]\n")
    second = write(tmp_path / "01a.conf", "INTEGRATION_TESTS = INTEGRATION_TESTS + "
                                          "[{'Name': 'b', 'Deployment': 'clean', 'TestSteps': STEP * 2}]\n")
    third = write(tmp_path / "02.conf", "VTEP_IP1 = '198.18.0.1/24'\n")
    found = read_test_files([first, second, third])
    assert [[t["Name"] for t in f.integration] for f in found] == [["a"], ["b"], []]
    assert found[1].integration[0]["TestSteps"] == [["log", "info", "x"]] * 2
    assert "02.conf: holds no PERFORMANCE_TESTS nor INTEGRATION_TESTS (settings? give them with --conf-file)" \
        in caplog.text


def test_a_file_that_assigns_a_list_afresh_adds_all_of_it(tmp_path: Path) -> None:
    a = write(tmp_path / "a.conf", "PERFORMANCE_TESTS = [{'Name': 'a', 'Deployment': 'p2p'}]\n")
    b = write(tmp_path / "b.conf", "PERFORMANCE_TESTS = [{'Name': 'b', 'Deployment': 'p2p'}]\n")
    assert [[t["Name"] for t in f.performance] for f in read_test_files([a, b])] == [["a"], ["b"]]


def test_a_test_list_that_cannot_be_computed(tmp_path: Path) -> None:
    bad = write(tmp_path / "x.conf", "INTEGRATION_TESTS = STEPS + []\n")
    with pytest.raises(ConfigError, match=re.escape("x.conf: INTEGRATION_TESTS is not computed: line 1: the name "
                                                    "'STEPS' is not defined earlier")):
        read_test_files([bad])
    yaml_map = write(tmp_path / "y.yaml", "Name: x\n")
    with pytest.raises(ConfigError, match="expected a list of test cases, got dict"):
        read_test_files([yaml_map])


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason=f"upstream VSPERF's integration files not found in {UPSTREAM}")
def test_upstream_integration_files_load_unchanged() -> None:
    found = read_test_files(sorted([*UPSTREAM.glob("*.conf")]))
    counts = {f.path.name: len(f.integration) for f in found}
    assert counts == {"01_testcases.conf": 44, "01a_testcases_l34_vxlan.conf": 21,
                      "01b_dpdk_regression_tests.conf": 60, "01c_trex_vm_tests.conf": 4,
                      "02_vswitch.conf": 0, "03_traffic.conf": 0}
    regression = next(f for f in found if f.path.name.startswith("01b"))
    nic = next(t for t in regression.integration if t["Name"] == "ovsdpdk_nic_p2p_two_pmd_bidir_cont")
    assert nic["Parameters"]["VSWITCH_PMD_CPU_MASK"] == "30"  # str(hex((1 << 4) + (1 << 5)))[2:], computed


def test_a_tests_steps_take_the_file_variables_they_read(tmp_path: Path) -> None:
    first = write(tmp_path / "01.conf", "_PORT = 'dpdk'\n_UNUSED = 1\n")
    second = write(tmp_path / "01b.conf", "_NIC = '0'\nINTEGRATION_TESTS = [\n"
                   "  {'Name': 'a', 'Deployment': 'clean', 'Parameters': {'_NIC': '1'},\n"
                   "   'TestSteps': [['tools', 'exec_shell', 'ovs-vsctl list interface $_PORT$_NIC']]},\n"
                   "  {'Name': 'b', 'Deployment': 'clean', 'TestSteps': [['tools', 'eval', '$_NIC']]},\n"
                   "  {'Name': 'c', 'Deployment': 'p2p'}]\n")
    a, b, c = read_test_files([first, second])[1].integration
    assert a["Parameters"] == {"_PORT": "dpdk", "_NIC": "1"}  # the test's own Parameters win
    assert b["Parameters"] == {"_NIC": "0"}
    assert "Parameters" not in c
