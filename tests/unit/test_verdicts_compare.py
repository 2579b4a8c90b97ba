"""vsperf compare: regressions between two runs, from their results files, for CI."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from report_fixtures import make_run

from vsperf.cli.main import main
from vsperf.errors import ConfigError
from vsperf.results.load import load_results
from vsperf.verdicts.compare import RULES, check_threshold, compare_runs, compare_values, format_comparison

SIZES = "TRAFFICGEN_PKT_SIZES=(64,128,1518)"


def _cli(args: list[str]) -> int:
    with pytest.raises(SystemExit) as exc:
        main(args)
    return int(exc.value.code or 0)


def _simulated_run(path: Path, capacity_fps: float) -> Path:
    params = f"{SIZES};TRAFFICGEN_DUMMY_DUT={{'capacity_fps': {capacity_fps}}}"
    code = _cli(["phy2phy_tput", "back2back", "--trafficgen", "dummy", "--results-dir", str(path),
                 "--report-format", "rst", "--test-params", params])
    assert code == 0
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("compare")
    return {
        "a": _simulated_run(base / "a", 5e6),
        "same": _simulated_run(base / "same", 5e6),
        "slower": _simulated_run(base / "slower", 4.5e6),
    }


def test_a_dut_10_percent_slower_is_a_regression(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(["compare", str(runs["a"]), str(runs["slower"]), "--json", str(runs["a"].parent / "c.json")]) == 1
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "REGRESSION" in line]
    # 64 B was limited by the DUT (5 -> 4.5 Mfps); at 128 B (8.4 Mfps line rate) too; 1518 B is
    # line rate (1.6 Mfps) in both runs: no change.
    assert any(line.split()[:4] == ["phy2phy_tput", "p2p", "64", "throughput_rx_fps"] for line in lines), out
    assert not any(" 1518 " in line and "throughput_rx_fps" in line for line in lines)
    assert out.rstrip().endswith("run B is worse than run A")
    data = json.loads((runs["a"].parent / "c.json").read_text())
    assert data["regressed"] is True
    change = next(c for c in data["changes"]
                  if c["test"] == "phy2phy_tput" and c["packet_size"] == 64 and c["metric"] == "throughput_rx_fps")
    assert change["change"] == pytest.approx(-10.0, abs=1.0)  # the search's resolution is 0.1 % of line rate
    assert change["regression"] is True


def test_identical_runs_pass(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(["compare", str(runs["a"]), str(runs["same"])]) == 0
    out = capsys.readouterr().out
    assert "REGRESSION" not in out
    assert out.rstrip().endswith("no regression beyond 5 %")


def test_the_threshold_decides(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    # -10 % is within a 15 % threshold; throughput only (latency changed too, by other amounts)
    assert _cli(["compare", str(runs["a"]), str(runs["slower"]), "--threshold", "15",
                 "--metrics", "throughput_rx_fps,b2b_frames"]) == 0
    # faster B is an improvement, not a regression
    assert _cli(["compare", str(runs["slower"]), str(runs["a"]), "--metrics", "throughput_rx_fps"]) == 0
    assert "improved" in capsys.readouterr().out


def test_usage_errors_exit_2(runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(["compare", str(runs["a"]), str(tmp_path / "nothing")]) == 2
    assert _cli(["compare", str(runs["a"]), str(runs["a"]), "--metrics", "speed"]) == 2
    err = capsys.readouterr().err
    assert "no such results file" in err and "cannot compare metric 'speed'" in err


def test_compare_values_directions_and_points() -> None:
    fps, loss, latency = RULES["throughput_rx_fps"], RULES["frame_loss_percent"], RULES["avg_latency_ns"]
    assert compare_values(fps, 100.0, 94.0, 5.0) == (pytest.approx(-6.0), True, False)
    assert compare_values(fps, 100.0, 96.0, 5.0) == (pytest.approx(-4.0), False, False)
    assert compare_values(fps, 100.0, 106.0, 5.0) == (pytest.approx(6.0), False, True)
    assert compare_values(latency, 100.0, 106.0, 5.0) == (pytest.approx(6.0), True, False)
    # loss is compared in percentage points: 0 % -> 6 % is +6 pp
    assert compare_values(loss, 0.0, 6.0, 5.0) == (pytest.approx(6.0), True, False)
    assert compare_values(loss, 1.0, 0.5, 5.0) == (pytest.approx(-0.5), False, False)
    assert compare_values(fps, 0.0, 5.0, 5.0) == (None, False, True)
    assert compare_values(latency, 0.0, 5.0, 5.0) == (None, True, False)
    assert compare_values(fps, None, 5.0, 5.0) == (None, False, False)


def test_status_regressions_and_unmatched_tests(tmp_path: Path) -> None:
    a = load_results(make_run(tmp_path / "a"))
    tests = list(a.tests)
    tests[1] = replace(tests[1], status="failed", error="ovs-vswitchd died")
    b = replace(a, tests=(tests[0], tests[1]))
    comparison = compare_runs(a, b)
    assert comparison.status_regressions == (
        "back2back (p2p) passed in run A but is failed in run B: ovs-vswitchd died",
    )
    assert comparison.notes == ("pvp_tput (pvp) is only in run A",)
    assert comparison.regressed and not comparison.regressions  # no metric moved
    text = format_comparison(comparison)
    assert "REGRESSION: back2back (p2p) passed in run A" in text
    with pytest.raises(ConfigError, match="above 0"):
        compare_runs(a, b, 0.0)


@pytest.mark.parametrize("threshold", [math.nan, math.inf, -math.inf, 0.0, -1.0, 1e308, 1000.5])
def test_thresholds_that_guard_nothing_are_refused(threshold: float) -> None:
    with pytest.raises(ConfigError, match=r"^the compare threshold must be a number above 0 and at most 1000 %, got "):
        check_threshold(threshold)
    assert check_threshold(1000) == 1000.0


def test_nothing_compared_is_known(tmp_path: Path) -> None:
    a = load_results(make_run(tmp_path / "a"))
    empty = replace(a, tests=())
    assert compare_runs(a, a).compared
    assert not compare_runs(a, empty).compared  # a run with no tests
    renamed = replace(a, tests=tuple(replace(t, name=f"other_{t.name}") for t in a.tests))
    assert not compare_runs(a, renamed).compared  # an unrelated run
    with pytest.raises(ConfigError, match=r"^no metric to compare; comparable metrics: throughput_rx_fps, "):
        compare_runs(a, a, metrics=[])


def test_a_metric_that_is_not_a_number_is_refused(tmp_path: Path) -> None:
    a = load_results(make_run(tmp_path / "a"))
    test = a.tests[0]
    broken = replace(test.results[0], metrics={**test.results[0].metrics, "throughput_rx_fps": math.nan})
    b = replace(a, tests=(replace(test, results=(broken, *test.results[1:])), *a.tests[1:]))
    with pytest.raises(ConfigError, match=r"^B: test phy2phy_tput 64 B: throughput_rx_fps is nan, not a measurement"):
        compare_runs(a, b)
