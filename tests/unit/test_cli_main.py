"""The vsperf command as a user runs it: exit codes, one-line errors, files written."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vsperf.units import line_rate_fps

ROOT = Path(__file__).resolve().parents[2]


def vsperf(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("TRAFFIC", "VSWITCH", "VNF"))}
    full_env["PYTHONPATH"] = str(ROOT)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "vsperf", *args], capture_output=True, text=True, env=full_env, timeout=120
    )


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0]


def test_list_shows_every_seed_test_with_description() -> None:
    proc = vsperf("--list")
    assert proc.returncode == 0
    for name, desc in [
        ("phy2phy_tput", "LTD.Throughput.RFC2544.PacketLossRatio"),
        ("back2back", "LTD.Throughput.RFC2544.BackToBackFrames"),
        ("phy2phy_mem_load", "LTD.Memory.RFC2544.0PacketLoss"),
    ]:
        line = next(line for line in proc.stdout.splitlines() if line.split()[:1] == [name])
        assert desc in line


@pytest.mark.parametrize(
    "option, expected",
    [
        ("--list-trafficgens", "dummy"),
        ("--list-vswitches", "ovs-dpdk"),
        ("--list-vnfs", "testpmd-vhost"),
        ("--list-loadgens", "stress-ng"),
        ("--list-collectors", "Available collectors"),
    ],
)
def test_list_backends(option: str, expected: str) -> None:
    proc = vsperf(option)
    assert proc.returncode == 0
    assert expected in proc.stdout


def test_list_settings_says_where_each_value_came_from(tmp_path: Path) -> None:
    conf = tmp_path / "my.yaml"
    conf.write_text("TRAFFICGEN_DURATION: 7\n")
    proc = vsperf("--list-settings", "--conf-file", str(conf), "--test-params", "TRAFFICGEN_LOSSRATE=0.5",
                  "--trafficgen", "dummy", "--load-env", env={"TRAFFICGEN_RFC2544_TESTS": "3"})
    assert proc.returncode == 0, proc.stderr
    lines = {line.split(" = ")[0]: line for line in proc.stdout.splitlines() if " = " in line}
    assert str(conf) in lines["TRAFFICGEN_DURATION"] and "7" in lines["TRAFFICGEN_DURATION"]
    assert "--test-params" in lines["TRAFFICGEN_LOSSRATE"]
    assert "environment" in lines["TRAFFICGEN_RFC2544_TESTS"]
    assert "--trafficgen" in lines["TRAFFICGEN"]
    assert "default" in lines["TRAFFICGEN_PKT_SIZES"]


def test_dummy_run_writes_results_csv_and_report(tmp_path: Path) -> None:
    out = tmp_path / "run"
    capacity = 3_000_000
    proc = vsperf(
        "phy2phy_tput", "back2back", "--trafficgen", "dummy", "--results-dir", str(out), "--xunit",
        "--test-params",
        "TRAFFICGEN_PKT_SIZES=(64,128,512,1024,1518);"
        f"TRAFFICGEN_DUMMY_DUT={{'capacity_fps': {capacity}, 'buffer_frames': 50000}}",
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads((out / "results.json").read_text())
    assert data["schema_version"] == 2
    assert data["simulated"] is True
    tput, b2b = data["tests"]
    assert [r["packet_size"] for r in tput["results"]] == [64, 128, 512, 1024, 1518]
    for r in tput["results"]:
        line2 = 2 * line_rate_fps(r["packet_size"], 10e9)
        truth = min(capacity, line2)
        found = r["metrics"]["throughput_rx_fps"]
        assert found <= truth * (1 + 1e-9)
        assert found >= truth - 0.001 * line2  # default resolution: 0.1 % of line rate
        assert r["trials"], "every trial is kept"
    for r in b2b["results"]:
        line2 = 2 * line_rate_fps(r["packet_size"], 10e9)
        if capacity >= line2:
            continue  # no loss at line rate: the burst is as long as the trial allows
        truth = 50000 / (1 - capacity / line2)
        assert abs(r["metrics"]["b2b_frames"] - truth) <= 100 + 1  # default granularity 100 frames
    rows = list(csv.DictReader((out / "result_0_phy2phy_tput_p2p.csv").open()))
    assert [int(r["packet_size"]) for r in rows] == [64, 128, 512, 1024, 1518]
    assert float(rows[0]["throughput_rx_fps"]) == pytest.approx(tput["results"][0]["metrics"]["throughput_rx_fps"])
    assert (out / "result_1_back2back_p2p.csv").exists()
    reports = list(out.glob("*.rst"))
    assert reports and "phy2phy_tput" in reports[0].read_text().lower()
    assert (out / "xunit.xml").exists()
    assert (out / "overall.log").exists()


def test_report_rerenders_a_past_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert vsperf("phy2phy_cont", "--trafficgen", "dummy", "--results-dir", str(out),
                  "--test-params", "TRAFFICGEN_PKT_SIZES=(64,)").returncode == 0
    for report in out.glob("*.rst"):
        report.unlink()
    proc = vsperf("report", str(out))
    assert proc.returncode == 0, proc.stderr
    assert list(out.glob("*.rst"))


@pytest.mark.parametrize(
    "args, needles",
    [
        (["phy2phy_tput", "--trafficgen", "dummy", "--test-params", "TRAFFICGEN_DURATON=10"],
         ["TRAFFICGEN_DURATON", "TRAFFICGEN_DURATION"]),
        (["phy2phy_tput", "--trafficgen", "dummy", "--test-params", "TRAFFICGEN_DURATION=ten"],
         ["TRAFFICGEN_DURATION", "ten"]),
        (["phy2phy_tput", "--trafficgen", "dummy", "--test-params", "TRAFFIC={'bidir': 'on'}"],
         ["bidir"]),
        (["phy2phy_tpt", "--trafficgen", "dummy"], ["phy2phy_tpt", "phy2phy_tput"]),
        (["phy2phy_tput", "--trafficgen", "ixia-magic"], ["ixia-magic", "dummy"]),
        (["phy2phy_tput", "--trafficgen", "dummy", "--vswitch", "ovz"], ["ovz", "ovs"]),
        (["--no-such-option"], ["--no-such-option"]),
    ],
)
def test_user_errors_are_one_line_with_exit_2(tmp_path: Path, args: list[str], needles: list[str]) -> None:
    out = tmp_path / "run"
    proc = vsperf(*args, "--results-dir", str(out))
    assert_one_line_error(proc, *needles)
    assert not out.exists(), "nothing is created for a usage error"


def test_malformed_conf_file(tmp_path: Path) -> None:
    conf = tmp_path / "bad.yaml"
    conf.write_text("TRAFFICGEN_DURATION: [10\n")
    assert_one_line_error(vsperf("--list", "--conf-file", str(conf)), str(conf))
    assert_one_line_error(vsperf("--list", "--conf-file", str(tmp_path / "missing.yaml")), "missing.yaml")


def test_results_dir_of_another_run_is_not_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["phy2phy_cont", "--trafficgen", "dummy", "--results-dir", str(out), "--test-params",
            "TRAFFICGEN_PKT_SIZES=(64,)"]
    assert vsperf(*args).returncode == 0
    assert_one_line_error(vsperf(*args), "already holds a run")


@pytest.mark.parametrize(
    ("test", "params", "setting"),
    [
        ("phy2phy_tput", "TRAFFICGEN_LOSSRATE=100", "TRAFFICGEN_LOSSRATE"),
        ("phy2phy_tput", "TRAFFICGEN_LOSSRATE=0.5;TRAFFICGEN_PDR_LOSSRATE=0.1", "TRAFFICGEN_PDR_LOSSRATE"),
        ("phy2phy_reset", "TRAFFICGEN_RESET_AT_S=70", "TRAFFICGEN_RESET_AT_S"),
    ],
)
def test_search_settings_are_refused_before_anything_is_deployed(
    tmp_path: Path, test: str, params: str, setting: str
) -> None:
    # The lab generator (vsgen) and switch: nothing may be created before the plan is valid.
    out = tmp_path / "run"
    proc = vsperf(test, "--vswitch", "ovs", "--test-params", params, "--results-dir", str(out))
    assert_one_line_error(proc, setting)
    assert not out.exists()


# --- VSPERF's integration tests (--integration, INTEGRATION_TESTS) -----------------------------------

STEP_TESTS = """INTEGRATION_TESTS = [
    {"Name": "sim", "Deployment": "clean", "TestSteps": [
        ['settings', 'setValue', 'TRAFFICGEN_PKT_SIZES', (64,)],
        ['#sent', 'trafficgen', 'send_traffic', {'traffic_type': 'rfc2544_continuous', 'frame_rate': 1}],
        ['tools', 'assert', '#STEP[sent][0]["frame_loss_percent"] == 0'],
        ['tools', 'eval', 'round(#STEP[1][0]["throughput_rx_fps"])'],
    ]},
    {"Name": "bad_object", "Deployment": "clean", "TestSteps": [['vswich', 'add_switch', 'b']]},
    {"Name": "bad_action", "Deployment": "clean", "TestSteps": [['vswitch', 'add_swich', 'b']]},
    {"Name": "bad_ref", "Deployment": "clean", "TestSteps": [['vswitch', 'add_switch', 'b'],
                                                             ['vswitch', 'del_port', 'b', '#STEP[7][0]']]},
]
"""


def test_step_driven_test_on_the_simulated_dut(tmp_path: Path) -> None:
    tests = tmp_path / "steps.conf"
    tests.write_text(STEP_TESTS)
    out = tmp_path / "run"
    proc = vsperf("--integration", "-f", str(tests), "sim", "--trafficgen", "dummy", "--results-dir", str(out),
                  "--report-format", "rst")
    assert proc.returncode == 0, proc.stderr[-2000:]
    test = json.loads((out / "results.json").read_text())["tests"][0]
    assert [s["status"] for s in test["steps"]] == ["passed"] * 4
    assert [r["packet_size"] for r in test["results"]] == [64]  # the step's setValue, then its traffic
    assert float(test["steps"][3]["result"]) == round(test["results"][0]["metrics"]["throughput_rx_fps"])
    assert "sim" in (out / "report.rst").read_text()
    listing = vsperf("--integration", "-f", str(tests), "--list")
    assert "bad_ref" in listing.stdout and "#STEP[7] refers to step 7" in listing.stdout
    assert "sim" not in vsperf("-f", str(tests), "--list").stdout  # not a performance test


@pytest.mark.parametrize(
    ("test", "needles"),
    [
        ("bad_object", ("test bad_object: step 0", "unknown object 'vswich' (did you mean 'vswitch'?)")),
        ("bad_action",
         ("test bad_action: step 0", "unknown action 'add_swich' of vswitch (did you mean 'add_switch'?)")),
        ("bad_ref", ("test bad_ref: step 1", "#STEP[7] refers to step 7, which does not come before step 1")),
    ],
)
def test_bad_steps_are_one_line_exit_2_nothing_run(tmp_path: Path, test: str, needles: tuple[str, ...]) -> None:
    tests = tmp_path / "steps.conf"
    tests.write_text(STEP_TESTS)
    out = tmp_path / "run"
    assert_one_line_error(vsperf("--integration", "-f", str(tests), test, "--trafficgen", "dummy", "--results-dir",
                                 str(out)), *needles)
    assert not out.exists()


def test_an_integration_test_named_without_integration(tmp_path: Path) -> None:
    tests = tmp_path / "steps.conf"
    tests.write_text(STEP_TESTS)
    assert_one_line_error(vsperf("-f", str(tests), "sim", "--trafficgen", "dummy"),
                          "test 'sim' is an integration test (INTEGRATION_TESTS): add --integration")


def test_search_without_an_answer_exits_1_with_the_reason_not_passed_with_0(tmp_path: Path) -> None:
    # Issue 22: a simulated DUT forwarding less than ndr_pdr's lowest load printed "passed ... 0".
    out = tmp_path / "run"
    proc = vsperf("phy2phy_tput", "--trafficgen", "dummy", "--results-dir", str(out), "--test-params",
                  "TRAFFICGEN_SEARCH=ndr_pdr;TRAFFICGEN_PKT_SIZES=(64,);REPORT_FORMATS=[];"
                  "TRAFFICGEN_DUMMY_DUT={'capacity_fps': 100}")
    assert proc.returncode == 1, proc.stderr
    row = next(line for line in proc.stdout.splitlines() if line.startswith("phy2phy_tput"))
    assert row.split()[1] == "failed"
    assert "64 B: no load met ndr (loss at most 0 %): even the lowest load tried, 298 fps" in row
    assert "(the DUT forwarded 100 fps)" in row and "passed" not in proc.stdout
    assert "Traceback" not in proc.stderr
    test = json.loads((out / "results.json").read_text())["tests"][0]
    assert test["status"] == "failed" and test["results"][0]["trials"]


def test_mlr_with_the_recommended_exceed_ratio_answers_on_a_plain_cliff(tmp_path: Path) -> None:
    # docs/searches.rst's settings for bursty DUTs ran into the 300-trial guard and said "passed ... 0".
    out = tmp_path / "run"
    proc = vsperf("phy2phy_tput", "--trafficgen", "dummy", "--results-dir", str(out), "--test-params",
                  "TRAFFICGEN_SEARCH=mlr;TRAFFICGEN_MLR_EXCEED_RATIO_PERCENT=50;TRAFFICGEN_DURATION=60;"
                  "TRAFFICGEN_PKT_SIZES=(64,);REPORT_FORMATS=[];TRAFFICGEN_DUMMY_DUT={'capacity_fps': 5000000}")
    assert proc.returncode == 0, proc.stderr
    result = json.loads((out / "results.json").read_text())["tests"][0]["results"][0]
    assert 5_000_000 * 0.995 <= result["metrics"]["ndr_tx_rate_fps"] <= 5_000_000
    assert len(result["trials"]) < 30
