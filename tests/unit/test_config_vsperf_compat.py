"""A VSPERF user's files work unchanged: upstream's own 01_testcases.conf and 10_custom.conf, and a
10_custom.conf written with VSPERF's spellings, through --conf-file on the dummy generator.

Upstream's files are read from ../shared/vsperf-upstream/conf next to the repository (never copied
into it); the tests that need them skip when they are absent.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from vsperf.backends import build_registries
from vsperf.catalog import Catalog
from vsperf.config import Settings, load_settings
from vsperf.config.pyconf import read_pyconf
from vsperf.errors import ConfigError, PrerequisiteError
from vsperf.run.plan import plan_tests

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = ROOT.parent / "shared" / "vsperf-upstream" / "conf"
needs_upstream = pytest.mark.skipif(not (UPSTREAM / "01_testcases.conf").is_file(),
                                    reason=f"upstream VSPERF conf files not found in {UPSTREAM}")
# VSPERF's 29 performance tests: 20 run here, the 9 VPP ones are listed and refused.
UPSTREAM_RUNNABLE = [
    "phy2phy_tput", "phy2phy_forwarding", "phy2phy_learning", "phy2phy_caching", "back2back",
    "phy2phy_tput_mod_vlan", "phy2phy_tput_mod_vlan_cont", "phy2phy_cont", "phy2phy_burst", "pvp_cont",
    "pvvp_cont", "pvpv_cont", "phy2phy_scalability", "phy2phy_scalability_cont", "pvp_tput",
    "pvp_back2back", "pvvp_tput", "pvvp_back2back", "phy2phy_cpu_load", "phy2phy_mem_load",
]
UPSTREAM_VPP = [
    "phy2phy_tput_vpp", "phy2phy_cont_vpp", "phy2phy_back2back_vpp", "pvp_tput_vpp", "pvp_cont_vpp",
    "pvp_back2back_vpp", "pvvp_tput_vpp", "pvvp_cont_vpp", "pvvp_back2back_vpp",
]
FAST = "TRAFFICGEN_DURATION=1;TRAFFICGEN_PKT_SIZES=(64,)"


def vsperf(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRAFFIC", "VSWITCH", "VNF"))}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "vsperf", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    # one error line, last; warnings before it (settings of VSPERF's that are ignored) are fine
    assert [line for line in lines if line.startswith("vsperf: error:")] == lines[-1:], proc.stderr
    return lines[-1]


def results(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "results.json").read_text())
    return data


@pytest.fixture(scope="module")
def upstream_conf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Upstream's 10_custom.conf followed by its 01_testcases.conf, as one user conf file."""
    if not (UPSTREAM / "01_testcases.conf").is_file():
        pytest.skip(f"upstream VSPERF conf files not found in {UPSTREAM}")
    path = tmp_path_factory.mktemp("upstream") / "custom.conf"
    path.write_text((UPSTREAM / "10_custom.conf").read_text() + "\n" + (UPSTREAM / "01_testcases.conf").read_text())
    return path


@needs_upstream
def test_upstream_custom_conf_loads_unchanged() -> None:
    settings = load_settings(UPSTREAM / "10_custom.conf", env={})
    assert settings["TRAFFICGEN"] == "dummy"  # VSPERF's 'Dummy'
    assert settings.source("TRAFFICGEN") == f"conf file {UPSTREAM / '10_custom.conf'}"


@needs_upstream
def test_upstream_testcases_become_catalog_tests() -> None:
    settings = load_settings(UPSTREAM / "01_testcases.conf", env={})
    catalog = Catalog.load(performance_tests=settings["PERFORMANCE_TESTS"])
    assert list(catalog.default_names) == [n for n in UPSTREAM_RUNNABLE[:20] + UPSTREAM_VPP
                                           if n in catalog.default_names]
    assert set(catalog.default_names) == set(UPSTREAM_RUNNABLE) | set(UPSTREAM_VPP)
    assert catalog.get("pvvp_tput").parameters["COLLECTOR"] == "cpu"  # VSPERF's "Collector" keyword
    assert catalog.get("phy2phy_cpu_load").parameters["LOADGEN"] == "stress-ng"  # VSPERF's 'StressNg'
    for name in UPSTREAM_VPP:
        with pytest.raises(PrerequisiteError, match="VPP is not packaged for Debian 12"):
            catalog.get(name).check_available()
    # the shipped definitions are upstream's: the same traffic for every test both have
    shipped = Catalog.load()
    for name in UPSTREAM_RUNNABLE + UPSTREAM_VPP:
        theirs, ours = catalog.get(name), shipped.get(name)
        assert ours.deployment == theirs.deployment, name
        assert ours.frame_modification == theirs.frame_modification, name
        assert ours.parameters["TRAFFIC"] == theirs.parameters["TRAFFIC"], name
        assert ours.unavailable == theirs.unavailable, name
    upstream_load = dict(catalog.get("phy2phy_cpu_load").load or {})
    assert shipped.get("phy2phy_cpu_load").load == {"tool": "stress-ng", **upstream_load}


def test_shipped_definitions_match_upstream_values() -> None:
    shipped = Catalog.load()
    assert shipped.get("phy2phy_scalability").parameters["TRAFFIC"]["multistream"] == 8000
    assert shipped.get("phy2phy_scalability_cont").parameters["TRAFFIC"]["multistream"] == 8000
    assert shipped.get("phy2phy_burst").parameters["TRAFFIC"]["burst_size"] == 1000
    assert (shipped.get("phy2phy_cpu_load").load or {})["reserved"] == 4
    assert "multistream" not in shipped.get("pvpv_cont").parameters["TRAFFIC"]
    assert shipped.get("phy2phy_tput_mod_vlan_cont").frame_modification == "vlan"
    assert [t.name for t in shipped.tests if t.name.endswith("_vpp")] == UPSTREAM_VPP


def test_upstream_test_set_runs_on_the_dummy_generator(upstream_conf: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = vsperf("--conf-file", str(upstream_conf), "--trafficgen", "dummy", "--test-params", FAST,
                  "--results-dir", str(out), "--report-format", "rst")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "left out 9 test(s) vsperf cannot run here: phy2phy_tput_vpp" in proc.stderr
    data = results(out)
    assert [t["name"] for t in data["tests"]] == UPSTREAM_RUNNABLE  # upstream's order
    assert all(t["status"] == "passed" for t in data["tests"])
    by_name = {t["name"]: t for t in data["tests"]}
    assert by_name["phy2phy_scalability"]["parameters"]["TRAFFIC"]["multistream"] == 8000
    assert by_name["phy2phy_burst"]["parameters"]["TRAFFIC"]["burst_size"] == 1000
    for index, name in enumerate(UPSTREAM_RUNNABLE):
        deployment = by_name[name]["deployment"]
        with (out / f"result_{index}_{name}_{deployment}.csv").open() as f:
            rows = list(csv.DictReader(f))
        assert [r["packet_size"] for r in rows] == ["64"]
    tput = by_name["phy2phy_tput"]["results"][0]["metrics"]
    assert tput["throughput_rx_fps"] > 0

    def row(name: str) -> dict[str, str]:
        index = UPSTREAM_RUNNABLE.index(name)
        with (out / f"result_{index}_{name}_{by_name[name]['deployment']}.csv").open() as f:
            return next(csv.DictReader(f))
    # VSPERF's result keys, as scripts parsing VSPERF's CSVs read them
    assert (row("phy2phy_tput")["type"], row("phy2phy_tput")["test_type"]) == ("rfc2544", "rfc2544_throughput")
    assert row("phy2phy_caching")["type"] == "rfc2889" and int(row("phy2phy_caching")["caching_capacity_addrs"]) > 0
    assert float(row("phy2phy_forwarding")["forwarding_rate_fps"]) > 0
    assert float(row("phy2phy_learning")["optimal_learning_rate_fps"]) > 0
    b2b = row("back2back")
    for key in ("b2b_rx_fps", "b2b_tx_fps", "b2b_rx_percent", "b2b_tx_percent", "b2b_tx_count",
                "b2b_frame_loss_frames"):
        assert b2b[key] != "", key
    scal = row("phy2phy_scalability")
    assert (scal["stream_count"], scal["match_type"], scal["pre-installed_flows"]) == ("8000", "L4", "No")
    assert row("pvp_tput")["guest_loopback"] == "linux_bridge"
    assert float(b2b["test_execution_time"]) >= 0 and b2b["start_time"] and b2b["stop_time"]


def test_upstream_vpp_test_is_refused_in_one_line(upstream_conf: Path) -> None:
    line = one_line_error(vsperf("--conf-file", str(upstream_conf), "pvp_tput_vpp"))
    assert line == ("vsperf: error: test pvp_tput_vpp: needs VSWITCH 'VppDpdkVhost': VPP is not packaged "
                    "for Debian 12 and vsperf has no VPP backend yet")


CUSTOM = '''\
# a user's 10_custom.conf, VSPERF style
"""My lab."""
TRAFFICGEN = 'Dummy'
TRAFFICGEN_PKT_SIZES = (64, 128)
TRAFFICGEN_STC_LAB_SERVER_ADDR = "10.134.156.93"   # a Spirent setting: ignored
TRAFFICGEN_TREX_PORT_SPEED = 10000 # 10G
TRAFFIC = {
    'traffic_type' : 'rfc2544_throughput',
    'bidir' : 'False',
    'multistream' : 0,
    'stream_type' : 'l3',
    'pre_installed_flows' : 'No',
    'flow_control' : False,
    'l2': {'framesize': 64, 'srcmac': '00:00:00:00:00:00', 'dstmac': '00:00:00:00:00:00'},
    'l3': {'enabled': True, 'proto': 'UDP', 'srcip': '1.1.1.1', 'dstip': '90.90.90.90'},
    'capture': {'enabled': False, 'tx_ports' : [0], 'rx_ports' : [1], 'count': 1, 'filter': ''},
    'scapy': {'enabled': False, '0': 'Ether(src={Ether_src})'},
    'latency_histogram': {'enabled': False, 'type': 'Default'},
    'imix': {'enabled': False, 'type': 'genome', 'genome': 'aaaaaaaddddg'},
}
TESTPMD_FWD_MODE = 'csum'
GUEST_TESTPMD_FWD_MODE = ['csum']
VSWITCH = 'OvsVanilla'
TEST_PARAMS = {'TRAFFICGEN_DURATION': 2, 'TRAFFIC': {'bidir': 'Yes'}}
PERFORMANCE_TESTS = [
    {
        "Name": "my_tput",
        "Deployment": "p2p",
        "Description": "mine",
        "vSwitch" : "OvsDpdkVhost",
        "Trafficgen" : "Dummy",
        "Parameters" : {"TRAFFICGEN_PKT_SIZES" : (512,), "TRAFFIC": {"traffic_type": "rfc2544_back2back"}},
    },
    {
        "Name": "my_cont",
        "Deployment": "pvp",
        "Parameters" : {"TRAFFIC" : {"traffic_type" : "rfc2544_continuous", "frame_rate": 50}},
    },
    {
        "Name": "my_vxlan",
        "Deployment": "op2p",
        "Tunnel Type": "vxlan",
        "Tunnel Operation": "encapsulation",
        "Parameters" : {"TRAFFIC" : {"traffic_type" : "rfc2544_continuous", "bidir": "False"}},
    },
]
'''


def test_vsperf_spellings_through_conf_file(tmp_path: Path) -> None:
    conf = tmp_path / "10_custom.conf"
    conf.write_text(CUSTOM)
    settings = load_settings(conf, env={})
    traffic = settings["TRAFFIC"]
    assert traffic["bidir"] is True  # TEST_PARAMS 'Yes' over TRAFFIC's 'False'
    assert traffic["stream_type"] == "L3" and traffic["l3"]["proto"] == "udp"
    assert traffic["pre_installed_flows"] is False
    assert traffic["l3"]["srcip"] == "1.1.1.1" and traffic["l3"]["dstip"] == "90.90.90.90"
    assert traffic["capture"]["enabled"] is False and "scapy" not in traffic  # capture is vsperf's too (disabled)
    assert settings["TRAFFICGEN_DURATION"] == 2.0
    assert settings.source("TRAFFICGEN_DURATION") == f"TEST_PARAMS of conf file {conf}"
    assert settings["TRAFFICGEN_PKT_SIZES"] == [64, 128]
    assert settings["VSWITCH"] == "ovs" and settings["TRAFFICGEN"] == "dummy"
    assert settings["TESTPMD_FWD_MODE"] == "csum" and settings["GUEST_TESTPMD_FWD_MODE"] == ["csum"]

    out = tmp_path / "run"
    proc = vsperf("--conf-file", str(conf), "--results-dir", str(out), "--report-format", "rst")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ignored 2 VSPERF settings vsperf does not use: TRAFFICGEN_STC_* (1), TRAFFICGEN_TREX_* (1)" in proc.stderr
    data = results(out)
    assert [t["name"] for t in data["tests"]] == ["my_tput", "my_cont", "my_vxlan"]  # PERFORMANCE_TESTS only
    my_tput, my_cont, my_vxlan = data["tests"]
    assert my_vxlan["deployment"] == "op2p" and my_vxlan["status"] == "passed"
    assert [r["packet_size"] for r in my_tput["results"]] == [512]
    assert my_tput["results"][0]["metrics"]["b2b_frames"] > 0
    assert [r["packet_size"] for r in my_cont["results"]] == [64, 128]
    assert data["settings"]["TRAFFIC"]["l3"]["srcip"] == "1.1.1.1"  # any IPv4 on a simulated DUT

    listing = vsperf("--conf-file", str(conf), "--list")
    vxlan_line = next(line for line in listing.stdout.splitlines() if "my_vxlan" in line)
    assert " op2p " in vxlan_line and "cannot run here" not in vxlan_line
    conf.write_text(CUSTOM.replace('"Tunnel Operation": "encapsulation",', ""))
    line = one_line_error(vsperf("--conf-file", str(conf), "my_vxlan"))
    assert line.endswith("(my_vxlan): Deployment op2p needs a Tunnel Operation (encapsulation, decapsulation)")


def test_param_macro_refers_to_another_setting(tmp_path: Path) -> None:
    conf = tmp_path / "p.conf"
    conf.write_text("TRAFFICGEN_DURATION = 7\nTRAFFICGEN_RFC2544_VERIFY_DURATION_S = '#PARAM(TRAFFICGEN_DURATION)'\n"
                    "LOG_DIR = \"/tmp/#PARAM(TRAFFIC['l3']['dstip'])/x\"\n")
    settings = load_settings(conf, env={})
    assert settings["TRAFFICGEN_RFC2544_VERIFY_DURATION_S"] == 7.0
    assert settings["LOG_DIR"] == f"/tmp/{settings['TRAFFIC']['l3']['dstip']}/x"
    conf.write_text("LOG_DIR = '#PARAM(NO_SUCH)'\n")
    with pytest.raises(ConfigError, match=r"#PARAM\(NO_SUCH\) names no setting 'NO_SUCH'"):
        load_settings(conf, env={})


@pytest.mark.parametrize(
    "body, message",
    [
        ("import os\nTRAFFICGEN = 'Dummy'\nLOG_DIR = os.path.join('x')\n",
         "line 3: LOG_DIR: it uses os, not computed (line 1: an import (the file is never run))"),
        ("TRAFFICGEN = 'Dummy'\nLOG_DIR = os.path.join(ROOT_DIR, 'x')\n",
         "line 2: LOG_DIR: the name 'ROOT_DIR' is not defined earlier (\"os.path.join(ROOT_DIR, 'x')\")"),
        ("PATHS['dpdk'] = {}\n", "line 1: an assignment to an item"),
        ("TRAFFICGEN = 'Dummy'\n\nTRAFFICGEN_DURATION = 10 +\n", "line 3: Python syntax error"),
        ("TRAFFICGEN_DURATON = 10\n", "unknown setting 'TRAFFICGEN_DURATON'"),
        ("TRAFFIC = {'bidirr': 'True'}\n", "did you mean 'TRAFFIC.bidir'?"),
        ("TRAFFIC = {'capture': {'enabled': True, 'count': 0}}\n", "TRAFFIC.capture.count: expected an integer"),
        ("TRAFFIC = {'imix': {'enabled': True, 'genome': 'aaaxg'}}\n", "TRAFFIC.imix.genome: IMIX genome 'aaaxg'"),
    ],
)
def test_conf_file_errors_are_one_line_naming_file_and_line(tmp_path: Path, body: str, message: str) -> None:
    conf = tmp_path / "bad.conf"
    conf.write_text(body)
    line = one_line_error(vsperf("--conf-file", str(conf), "--list"))
    assert message in line
    if "line " in message:
        assert f"conf file {conf}: " in line


def test_yaml_conf_file_may_hold_performance_tests(tmp_path: Path) -> None:
    conf = tmp_path / "c.yaml"
    conf.write_text("PERFORMANCE_TESTS:\n  - {Name: y_tput, Deployment: p2p, Trafficgen: Dummy,\n"
                    "     Parameters: {TRAFFIC: {bidir: 'False'}}}\n")
    settings = load_settings(conf, env={})
    catalog = Catalog.load(performance_tests=settings["PERFORMANCE_TESTS"])
    assert [t.name for t in catalog.select()] == ["y_tput"]
    assert catalog.get("y_tput").parameters["TRAFFICGEN"] == "dummy"
    assert settings.merged(catalog.get("y_tput").parameters, "test case y_tput")["TRAFFIC"]["bidir"] is False


def test_read_pyconf_keeps_vsperf_semantics() -> None:
    text = "A = 1\nlower = 2\nB = None\nA = (1, 2)\nC = {'x': -3, 'y': [True, None]}\n"
    assert read_pyconf(text, "f") == {"A": [1, 2], "C": {"x": -3, "y": [True, None]}}


def test_lab_settings_not_definitions_carry_the_local_labs_needs() -> None:
    catalog, regs = Catalog.load(), build_registries()
    lab = load_settings(env={}, test_params="TRAFFICGEN=vsgen")
    simulated = load_settings(env={}, test_params="TRAFFICGEN=dummy")

    def planned(name: str, settings: Settings) -> Settings:
        return plan_tests([catalog.get(name)], settings, regs)[0].settings

    # pvpv_cont sends VSPERF's single stream; the lab splits N streams between its N VNFs
    assert planned("pvpv_cont", simulated)["TRAFFIC"]["multistream"] == 0
    traffic = planned("pvpv_cont", lab)["TRAFFIC"]
    assert (traffic["multistream"], traffic["stream_type"]) == (2, "L3")
    assert planned("pvpv_cont", lab).source("TRAFFIC").startswith("local lab: pvpv needs 2 streams")
    # ovs learns addresses only with a NORMAL flow: VSWITCH_FLOW_MODE auto picks it for RFC 2889's
    assert planned("phy2phy_learning", lab)["VSWITCH_FLOW_MODE"] == "normal"
    assert planned("phy2phy_caching", lab)["VSWITCH_FLOW_MODE"] == "normal"
    assert planned("phy2phy_tput", lab)["VSWITCH_FLOW_MODE"] == "ports"
    forced = load_settings(env={}, test_params="TRAFFICGEN=vsgen;VSWITCH_FLOW_MODE=ports")
    assert planned("phy2phy_learning", forced)["VSWITCH_FLOW_MODE"] == "ports"


@needs_upstream
def test_upstream_testcases_file_as_a_test_case_file() -> None:
    # -f/--test-spec (TEST_CASE_FILES) reads a file holding PERFORMANCE_TESTS too
    catalog = Catalog.load([UPSTREAM / "01_testcases.conf"])
    names = set(catalog.names())
    assert set(UPSTREAM_RUNNABLE + UPSTREAM_VPP) <= names
    assert catalog.get("phy2phy_burst").source == str(UPSTREAM / "01_testcases.conf")
    assert catalog.get("pvp_cont_vpp").unavailable_prerequisite


def test_settings_in_a_test_case_file_are_ignored_with_a_warning(tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "t.conf"
    path.write_text("TRAFFICGEN = 'Dummy'\nPERFORMANCE_TESTS = [{'Name': 'z', 'Deployment': 'p2p'}]\n")
    assert Catalog.load([path]).get("z").deployment == "p2p"
    assert ("ignoring TRAFFICGEN: a test-case file is read for PERFORMANCE_TESTS and INTEGRATION_TESTS only"
            in caplog.text)


@needs_upstream
def test_upstream_trex_settings_are_trex_settings_or_the_searchs() -> None:
    settings = load_settings(UPSTREAM / "10_custom.conf", env={})
    assert settings["TRAFFICGEN_TREX_LATENCY_PPS"] == 1000 and settings["TRAFFICGEN_TREX_PROMISCUOUS"] is False
    assert settings["TRAFFICGEN_TREX_LEARNING_MODE"] is True and settings["TRAFFICGEN_TREX_LEARNING_DURATION"] == 5
    # VSPERF's TRex verification is vsperf's one search's: off and 60 s in that file, as vsperf's defaults
    assert settings["TRAFFICGEN_RFC2544_VERIFY"] is False
    assert settings.source("TRAFFICGEN_RFC2544_VERIFY") == f"conf file {UPSTREAM / '10_custom.conf'}"
    assert settings["TRAFFICGEN_RFC2544_VERIFY_DURATION_S"] == 60


def test_trex_search_settings_become_the_searchs(tmp_path: Path) -> None:
    conf = tmp_path / "10_custom.conf"
    conf.write_text("TRAFFICGEN_TREX_VERIFICATION_MODE = True\nTRAFFICGEN_TREX_VERIFICATION_DURATION = 120\n"
                    "TRAFFICGEN_TREX_FORCE_PORT_SPEED = True\nTRAFFICGEN_TREX_PORT_SPEED = 40000 # 40G\n"
                    "TRAFFICGEN_TREX_LIVE_RESULTS = True\n")
    settings = load_settings(conf, env={})
    assert settings["TRAFFICGEN_RFC2544_VERIFY"] is True
    assert settings["TRAFFICGEN_RFC2544_VERIFY_DURATION_S"] == 120
    assert settings["TRAFFICGEN_PORT_SPEED_GBPS"] == 40.0


def test_a_port_speed_not_forced_is_ignored_and_vsperfs_own_name_wins(tmp_path: Path) -> None:
    conf = tmp_path / "10_custom.conf"
    conf.write_text("TRAFFICGEN_TREX_FORCE_PORT_SPEED = False\nTRAFFICGEN_TREX_PORT_SPEED = 40000\n"
                    "TRAFFICGEN_TREX_VERIFICATION_MODE = True\nTRAFFICGEN_RFC2544_VERIFY = False\n")
    settings = load_settings(conf, env={})
    assert settings["TRAFFICGEN_PORT_SPEED_GBPS"] == 10.0 and settings["TRAFFICGEN_RFC2544_VERIFY"] is False


def test_a_forced_port_speed_needs_its_speed(tmp_path: Path) -> None:
    conf = tmp_path / "10_custom.conf"
    conf.write_text("TRAFFICGEN_TREX_FORCE_PORT_SPEED = True\n")
    with pytest.raises(ConfigError, match="TRAFFICGEN_TREX_FORCE_PORT_SPEED needs TRAFFICGEN_TREX_PORT_SPEED"):
        load_settings(conf, env={})


@needs_upstream
def test_upstream_imix_and_latency_histogram_switched_on_work_unchanged(tmp_path: Path) -> None:
    """VSPERF's own TRAFFIC of 03_traffic.conf with imix and latency_histogram enabled: the genome
    is the test's frame size, every latency keeps its whole distribution."""
    import ast

    source = (UPSTREAM / "03_traffic.conf").read_text()
    (node,) = [n for n in ast.parse(source).body
               if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "TRAFFIC"]
    traffic = ast.get_source_segment(source, node)
    assert traffic is not None and "'imix'" in traffic and "'latency_histogram'" in traffic
    # as a user switches them on: the last two 'enabled': False of TRAFFIC are latency_histogram's and imix's
    head, hist, imix = traffic.rsplit("'enabled': False", 2)
    conf = tmp_path / "on.conf"
    conf.write_text("'enabled': True".join((head, hist, imix)) + "\nTRAFFICGEN = 'Dummy'\nTRAFFICGEN_DURATION = 1\n"
                    "HISTORY = False\n")
    assert "'imix': {\n        'enabled': True" in conf.read_text()
    out = tmp_path / "run"
    proc = vsperf("--conf-file", str(conf), "phy2phy_cont", "--results-dir", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    (result,) = json.loads((out / "results.json").read_text())["tests"][0]["results"]
    assert result["packet_size"] == "aaaaaaaddddg"
    assert result["metrics"]["imix_genome"] == "aaaaaaaddddg" and result["metrics"]["imix_avg_framesize"] == 334.5
    assert result["metrics"]["p99.999_latency_ns"] is not None
    (trial,) = result["trials"]
    assert trial["latency"]["hdrh"] and dict(trial["rx_frames_by_size"]).keys() == {64, 512, 1518}
