"""A run's outputs checked before anything runs, and the files written after it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from report_fixtures import make_run

from vsperf.cli.main import main
from vsperf.cli.run_outputs import MatrixMetricError, check_run_outputs, write_matrix_file
from vsperf.config import load_settings
from vsperf.outputs import OutputError


def _opts(**changes: Any) -> dict[str, Any]:
    return {"results_dir": None, "xunit": False, "xunit_dir": None, **changes}


def test_the_results_directory_and_xunit_directory(tmp_path: Path) -> None:
    settings = load_settings(env={}, test_params=f"LOG_DIR={tmp_path / 'logs'}")
    outputs = check_run_outputs(_opts(), settings)
    assert outputs.results_dir.parent == tmp_path / "logs" and outputs.results_dir.name.startswith("results_")
    assert outputs.xunit_dir is None
    outputs = check_run_outputs(_opts(results_dir=tmp_path / "run", xunit=True), settings)
    assert outputs.results_dir == outputs.xunit_dir == tmp_path / "run"
    assert not (tmp_path / "run").exists() and not (tmp_path / "logs").exists()  # nothing created


def test_places_refused_before_the_run(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    settings = load_settings(env={}, test_params=f"LOG_DIR={tmp_path / 'file'}")
    with pytest.raises(OutputError, match=r"^LOG_DIR \(from --test-params\) .*/file is a regular file, not a "):
        check_run_outputs(_opts(), settings)
    with pytest.raises(OutputError, match=r"^--xunit-dir .*/file is a regular file"):
        check_run_outputs(_opts(results_dir=tmp_path / "run", xunit_dir=tmp_path / "file"), settings)
    (tmp_path / "x" / "xunit.xml").mkdir(parents=True)
    with pytest.raises(OutputError, match=r"^--xunit-dir .*/x: xunit\.xml there is a directory"):
        check_run_outputs(_opts(results_dir=tmp_path / "run", xunit_dir=tmp_path / "x"), settings)
    make_run(tmp_path / "old")
    with pytest.raises(OutputError, match=r"already holds a run \(results\.json\); choose an empty directory$"):
        check_run_outputs(_opts(results_dir=tmp_path / "old"), settings)


def test_a_matrix_metric_no_test_reported(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run")
    assert "throughput_rx_fps" in write_matrix_file(run, "throughput_rx_fps")
    with pytest.raises(MatrixMetricError, match=r"^MATRIX_METRIC 'nosuch': no test of this run reported it; "
                                                r"metrics reported: .*throughput_rx_fps"):
        write_matrix_file(run, "nosuch")


def test_the_cli_exits_1_when_the_matrix_metric_is_a_typo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["phy2phy_tput", "--trafficgen", "dummy", "--results-dir", str(tmp_path / "run"), "--matrix",
              "--report-format", "rst", "--test-params", "TRAFFICGEN_PKT_SIZES=(64,);MATRIX_METRIC=throughput_fps"])
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert "vsperf: error: --matrix: MATRIX_METRIC 'throughput_fps': no test of this run reported it" in err
    assert "Traceback" not in err
