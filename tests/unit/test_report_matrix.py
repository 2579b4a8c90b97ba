"""The performance matrix (--matrix): every test against the first one."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_fixtures import make_run

from vsperf.cli.main import main
from vsperf.report.matrix import MATRIX_FILE, performance_matrix, write_matrix
from vsperf.results.load import load_results


def test_changes_against_the_first_test(tmp_path: Path) -> None:
    run = load_results(make_run(tmp_path / "run"))
    sizes, rows = performance_matrix(run, "throughput_rx_fps")
    assert sizes == [64, 1518]
    assert [r.name for r in rows] == ["phy2phy_tput", "back2back", "pvp_tput"]
    assert rows[0].values == {64: 10_000_000.0, 1518: pytest.approx(1_625_487.646)}
    assert rows[0].changes_percent == {64: 0.0, 1518: 0.0}
    assert rows[1].values == {64: None, 1518: None}  # back2back reports no throughput
    assert rows[1].changes_percent == {64: None, 1518: None}
    _, b2b = performance_matrix(run, "b2b_frames")
    assert b2b[1].values[64] == 21713 and b2b[1].changes_percent[64] is None  # the reference has none


def test_matrix_of_a_run_with_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    params = "TRAFFICGEN_PKT_SIZES=(64,);TRAFFICGEN_DUMMY_DUT={'capacity_fps': %s}"
    conf = tmp_path / "tests.yaml"
    conf.write_text(
        "- Name: slow_tput\n  Deployment: p2p\n  Description: the same DUT, 20 % slower\n"
        "  Parameters:\n    TRAFFIC: {traffic_type: rfc2544_throughput}\n"
        "    TRAFFICGEN_DUMMY_DUT: {capacity_fps: 4.0e6}\n"
    )
    with pytest.raises(SystemExit) as exc:
        main(["phy2phy_tput", "slow_tput", "--trafficgen", "dummy", "--matrix", "--report-format", "rst",
              "--results-dir", str(tmp_path / "r"), "--test-params",
              (params % "5e6") + f";TEST_CASE_FILES=['{conf}']"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "Performance matrix: throughput_rx_fps, every test against test #0" in out
    row = next(line for line in out.splitlines() if "slow_tput" in line)
    cells = row.split()
    assert cells[:3] == ["1", "slow_tput", "p2p"]
    assert float(cells[3]) == pytest.approx(4.0e6, rel=0.01)
    assert float(cells[4]) == pytest.approx(-20.0, abs=1.0)
    rst = (tmp_path / "r" / MATRIX_FILE).read_text()
    assert "|  1 | slow_tput    | p2p        |" in rst and "\\-20." in rst  # RST escapes a leading '-'


def test_empty_matrix(tmp_path: Path) -> None:
    run = load_results(make_run(tmp_path / "run"))
    _, text = write_matrix(run, tmp_path / "run", "no_such_metric")
    assert "No test reported no_such_metric." in text
