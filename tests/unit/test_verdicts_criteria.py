"""Pass criteria: which apply to a test, how each frame size fares, and what CI sees."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from report_fixtures import make_run

from vsperf.cli.main import main
from vsperf.errors import ConfigError
from vsperf.results.load import load_results
from vsperf.results.model import RunResults
from vsperf.verdicts.criteria import Criterion, check_criteria_names, criteria_for, evaluate_run, evaluate_test


def _run(tmp_path: Path, criteria: object) -> RunResults:
    run = load_results(make_run(tmp_path / "run"))
    return replace(run, settings={**run.settings, "CRITERIA": criteria})


def test_criterion_bounds_are_inclusive() -> None:
    both = Criterion("*", "throughput_rx_percent", 10.0, 20.0)
    assert [both.holds(v) for v in (9.999, 10.0, 20.0, 20.001)] == [False, True, True, False]
    assert both.describe() == "10 <= throughput_rx_percent <= 20"
    assert Criterion("x", "avg_latency_ns", None, 1e4).describe() == "avg_latency_ns <= 10000"
    with pytest.raises(ValueError, match="needs min or max"):
        Criterion("x", "avg_latency_ns")


def test_named_and_wildcard_criteria_apply(tmp_path: Path) -> None:
    run = _run(tmp_path, {
        "*": {"frame_loss_percent": {"max": 0.0}},
        "phy2phy_tput": {"throughput_rx_fps": {"min": 5e6}},
        "back2back": {"b2b_frames": {"min": 20000}},
    })
    tput, b2b, _ = run.tests
    assert [(c.scope, c.metric) for c in criteria_for(tput, run.settings)] == [
        ("*", "frame_loss_percent"), ("phy2phy_tput", "throughput_rx_fps"),
    ]
    verdict = evaluate_test(tput, run.settings)
    assert verdict is not None
    checks = [(c.criterion.metric, c.packet_size, c.value, c.passed) for c in verdict.checks]
    assert checks == [
        ("frame_loss_percent", 64, 0.0, True),
        ("frame_loss_percent", 1518, 0.0, True),
        ("throughput_rx_fps", 64, 10_000_000.0, True),
        ("throughput_rx_fps", 1518, pytest.approx(1_625_487.646), False),
    ]
    assert not verdict.passed
    assert verdict.summary().startswith("pass criteria not met: 1518 B: throughput_rx_fps = 1625487.646")
    # back2back reports no frame_loss_percent: the '*' criterion does not apply to it
    b2b_verdict = evaluate_test(b2b, run.settings)
    assert b2b_verdict is not None and b2b_verdict.passed
    assert [c.criterion.metric for c in b2b_verdict.checks] == ["b2b_frames"]
    assert b2b_verdict.summary() == "pass criteria met (1 check)"


def test_a_named_criterion_on_a_metric_never_reported_fails(tmp_path: Path) -> None:
    run = _run(tmp_path, {"back2back": {"b2b_frame": {"min": 1}}})  # typo of b2b_frames
    verdict = evaluate_test(run.tests[1], run.settings)
    assert verdict is not None and not verdict.passed
    assert verdict.failures[0].describe() == "b2b_frame >= 1: NOT met, the test reported no b2b_frame"


def test_no_criteria_no_verdict_and_parameters_override(tmp_path: Path) -> None:
    run = _run(tmp_path, {})
    assert evaluate_run(run) == [None, None, None]
    own = {"phy2phy_tput": {"throughput_rx_fps": {"min": 1.0}}}
    test = replace(run.tests[0], parameters={"CRITERIA": own})
    judged = replace(run, settings={**run.settings, "CRITERIA": {"*": {"throughput_rx_fps": {"min": 1e9}}}})
    verdict = evaluate_test(test, judged.settings)
    assert verdict is not None and verdict.passed  # the test's own CRITERIA replaced the run's


def _cli(args: list[str]) -> int:
    with pytest.raises(SystemExit) as exc:
        main(args)
    return int(exc.value.code or 0)


def test_missed_criteria_fail_the_run_and_xunit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    common = ["phy2phy_tput", "--trafficgen", "dummy", "--xunit", "--report-format", "rst"]
    params = "TRAFFICGEN_PKT_SIZES=(64,);CRITERIA={'phy2phy_tput': {'throughput_rx_fps': {'min': %s}}}"
    assert _cli([*common, "--results-dir", str(tmp_path / "ok"), "--test-params", params % "1e6"]) == 0
    assert _cli([*common, "--results-dir", str(tmp_path / "bad"), "--test-params", params % "6e6"]) == 1
    out = capsys.readouterr().out
    assert "pass criteria not met: 64 B: throughput_rx_fps = 4999069.940, needs throughput_rx_fps >= 6000000" in out
    suite = ET.parse(tmp_path / "bad" / "xunit.xml").getroot()
    assert suite.get("failures") == "1"
    failure = suite.find("testcase/failure")
    assert failure is not None and "pass criteria not met" in (failure.get("message") or "")
    # results.json keeps what ran; the report shows the verdict
    assert load_results(tmp_path / "bad").tests[0].status == "passed"
    report = (tmp_path / "bad" / "report.rst").read_text()
    assert "Pass criteria not met: 64 B: throughput\\_rx\\_fps" not in report  # never double-escaped
    assert "Pass criteria\n~~~~~~~~~~~~~" in report
    assert "- 64 B: throughput_rx_fps = 4999069.940, needs throughput_rx_fps >= 6000000: NOT met" in report


def test_criteria_naming_no_test_are_refused() -> None:
    known = ["phy2phy_tput", "back2back"]
    check_criteria_names({"*": {}, "phy2phy_tput": {}}, known, "CRITERIA (from x)")
    message = (r"^CRITERIA \(from x\): no test is called 'phy2phy_tptu' \(did you mean 'phy2phy_tput'\?\); "
               r"name a test of `vsperf --list` or '\*' for every test$")
    with pytest.raises(ConfigError, match=message):
        check_criteria_names({"phy2phy_tptu": {}}, known, "CRITERIA (from x)")


def test_the_cli_refuses_them_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["phy2phy_tput", "--trafficgen", "dummy", "--results-dir", str(tmp_path / "out"),
              "--test-params", "CRITERIA={'nosuchtest': {'throughput_rx_fps': {'min': 1}}}"])
    assert exc.value.code == 2
    assert "vsperf: error: CRITERIA (from --test-params): no test is called 'nosuchtest'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
