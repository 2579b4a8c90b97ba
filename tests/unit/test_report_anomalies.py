"""Anomalies are computed from the data: each kind appears when, and only when, the data shows it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from report_fixtures import WARNING, make_run

from vsperf.report.anomalies import anomalies_of, parse_log_warnings, read_log_warnings
from vsperf.results.load import load_results
from vsperf.results.model import FrameSizeResult, RunResults, TestResult


def _run(tmp_path: Path) -> RunResults:
    return load_results(make_run(tmp_path / "run"))


def _findings(run: RunResults, index: int, warnings: tuple[str, ...] = ()) -> list[str]:
    return anomalies_of(run.tests[index], run, warnings)


def test_every_kind_of_finding_of_a_troubled_test(tmp_path: Path) -> None:
    run = _run(tmp_path)
    findings = _findings(run, 0, (WARNING, WARNING))
    text = "\n".join(findings)
    # generator under-delivery: trial 1 sent half the requested rate
    assert "Packet size 64: 1 of 4 trials flagged generator_under_delivery (trial 1 of the trial log)" in text
    assert "the lowest sent/offered rate was 50.000 %" in text
    # loss in the verification trial (trial 4 lost 0.2 %)
    assert "the verification trial (trial 4) lost 0.2000 % of 100000000 frames" in text
    # repetitions spread 1e6 / 1e7 = 10 % > 5 %
    assert "the 3 repetitions of throughput_rx_fps spread 10.00 % of their mean" in text
    assert "from 9500000.000 to 10500000.000" in text
    # warnings logged while it ran, counted once each
    assert f"2 warning(s) were logged while the test ran: {WARNING} (x2)." in text
    assert len(findings) == 4
    assert not any("1518" in f for f in findings)  # the clean frame size has none


def test_a_clean_test_has_none_and_thresholds_come_from_the_settings(tmp_path: Path) -> None:
    run = _run(tmp_path)
    assert _findings(run, 1) == []  # back2back: b2b spread 20 / 21713 is tiny
    lenient = replace(run, settings={**run.settings, "REPORT_SPREAD_THRESHOLD_PERCENT": 15.0})
    assert not any("spread" in f for f in _findings(lenient, 0))
    strict = replace(run, settings={**run.settings, "REPORT_SPREAD_THRESHOLD_PERCENT": 0.05})
    assert any("b2b_frames spread" in f for f in _findings(strict, 1))


def test_verification_loss_within_the_allowed_loss_is_no_finding(tmp_path: Path) -> None:
    run = _run(tmp_path)
    result = run.tests[0].results[0]
    search = {**result.details["search"], "loss_rate_percent": 0.5}
    allowed = replace(result, details={**result.details, "search": search})
    test = replace(run.tests[0], results=(allowed,))
    assert not any("verification" in f for f in anomalies_of(test, run))
    # The search reporting it already: said once, in the search's words.
    said = replace(result, anomalies=("verification trial at 33.600 % of line rate lost 0.2000 %",))
    test = replace(run.tests[0], results=(said,))
    findings = anomalies_of(test, run)
    assert sum("verification" in f for f in findings) == 1


def test_statuses_and_empty_results(tmp_path: Path) -> None:
    run = _run(tmp_path)
    assert _findings(run, 2) == ["The test failed: testpmd died."]
    empty = replace(run.tests[1], results=())
    assert anomalies_of(empty, run) == ["The test passed but recorded no packet size."]
    unmeasured = replace(run.tests[1], results=(FrameSizeResult(128, {"b2b_frames": None}),))
    assert anomalies_of(unmeasured, run) == ["Packet size 128: no metric could be measured."]


def test_failed_pass_criteria_are_findings(tmp_path: Path) -> None:
    run = _run(tmp_path)
    criteria = {"phy2phy_tput": {"throughput_rx_fps": {"min": 5_000_000.0}}}
    judged = replace(run, settings={**run.settings, "CRITERIA": criteria})
    failed = [f for f in _findings(judged, 0) if f.startswith("Pass criterion")]
    # 64 B forwards 10 Mfps (met); 1518 B is at line rate, 1.6 Mfps (not met)
    assert failed == [
        "Pass criterion not met: 1518 B: throughput_rx_fps = 1625487.646, needs throughput_rx_fps >= 5000000: NOT met."
    ]
    assert not any(f.startswith("Pass criterion") for f in _findings(run, 0))


def test_log_warnings_are_attributed_to_the_test_that_ran(tmp_path: Path) -> None:
    make_run(tmp_path / "run")
    logged = read_log_warnings(tmp_path / "run" / "overall.log")
    assert logged.outside_tests == ("removed leftover of a killed run: netns vspdead",)
    # test 0 logged one warning; the runner's own "failed" line of test 2 is not repeated
    assert logged.by_test == ((WARNING,), (), ())
    assert read_log_warnings(tmp_path / "missing.log").by_test == ()


def test_lines_after_a_test_finished_belong_to_no_test() -> None:
    text = (
        "2026-01-01 10:00:01,000 INFO    vsperf.ui.progress: test a (p2p): 1 frame size(s)\n"
        "2026-01-01 10:00:02,000 INFO    vsperf.run.runner: test a finished\n"
        "2026-01-01 10:00:03,000 ERROR   weasyprint: No anchor #top\n"
    )
    logged = parse_log_warnings(text)
    assert logged.by_test == ((),)
    assert logged.outside_tests == ("No anchor #top",)


def test_logs_of_runs_from_before_the_restructure_are_read() -> None:
    # vsperf report DIR re-renders past runs: their progress lines came from "vsperf.progress".
    text = (
        "2026-01-01 10:00:01,000 INFO    vsperf.progress: test a (p2p): 1 frame size(s)\n"
        "2026-01-01 10:00:02,000 WARNING vsperf.run.runner: a: Load not applied: the DUT is simulated\n"
        "2026-01-01 10:00:03,000 INFO    vsperf.run.runner: test a finished\n"
    )
    logged = parse_log_warnings(text)
    assert logged.by_test == (("a: Load not applied: the DUT is simulated",),)
    assert logged.outside_tests == ()


def test_findings_name_test_results_only(tmp_path: Path) -> None:
    run = _run(tmp_path)
    test: TestResult = run.tests[0]
    assert anomalies_of(test) == anomalies_of(test, None, ())  # settings optional: defaults apply
    assert any("spread 10.00 %" in f for f in anomalies_of(test))
