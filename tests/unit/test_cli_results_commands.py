"""`vsperf report` and `vsperf compare` on hostile input: one line, exit 2, nothing written;
a comparison that compared nothing is an error, not a pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_fixtures import make_run

from vsperf.cli.main import main


def _cli(args: list[str]) -> int:
    with pytest.raises(SystemExit) as exc:
        main(args)
    return int(exc.value.code or 0)


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return make_run(tmp_path / "a")


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _results(path: Path, data: dict[str, object]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "results.json").write_text(json.dumps(data))
    return path


def test_nothing_compared_is_an_error(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads((run / "results.json").read_text())
    empty = _results(tmp_path / "empty", {**data, "tests": []})
    assert _cli(["compare", str(run), str(empty)]) == 2
    line = _one_line(capsys)
    assert line.startswith("vsperf: error: nothing compared: no test, frame size and metric measured in both runs")
    assert line.endswith("; compare two runs of the same tests")
    assert _cli(["compare", str(run), str(run), "--metrics", ","]) == 2
    assert "no metric to compare" in _one_line(capsys)


@pytest.mark.parametrize("threshold", ["nan", "inf", "1e308", "-5"])
def test_absurd_thresholds(run: Path, threshold: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(["compare", str(run), str(run), "--threshold", threshold]) == 2
    assert "the compare threshold must be a number above 0 and at most 1000 %" in _one_line(capsys)


def test_settings_from_the_environment_only_with_load_env(run: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COMPARE_THRESHOLD_PERCENT", "999")
    assert _cli(["compare", str(run), str(run)]) == 0
    assert "threshold: 5 %" in capsys.readouterr().out  # the default, not the environment's
    assert _cli(["compare", str(run), str(run), "--load-env"]) == 0
    assert "threshold: 999 %" in capsys.readouterr().out


def test_json_output_is_checked_before_comparing(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(["compare", str(run), str(run), "--json", str(tmp_path)]) == 2
    assert "--json" in _one_line(capsys)
    assert _cli(["compare", str(run), str(run), "--json", str(tmp_path / "no" / "c.json")]) == 2
    assert "does not exist" in _one_line(capsys)
    assert _cli(["compare", str(run), str(run), "--json", str(tmp_path / "c.json")]) == 0
    assert json.loads((tmp_path / "c.json").read_text())["regressed"] is False


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00", "not UTF-8 text (byte 0x89 on line 1)"),
        ('{"schema_version": 1}'.encode("utf-16"), "is UTF-16 text; save it as UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "nested more than 100 levels deep"),
        (b'{"schema_version": NaN}', "NaN is not a JSON number"),
    ],
)
def test_results_files_that_are_not_what_they_claim(tmp_path: Path, content: bytes, message: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "results.json").write_bytes(content)
    for args in (["report", str(tmp_path)], ["compare", str(tmp_path), str(tmp_path)]):
        assert _cli(args) == 2
        line = _one_line(capsys)
        assert line.startswith(f"vsperf: error: results file {tmp_path}/results.json: ") and message in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_report_checks_its_directory_and_formats(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(["report", str(run), "--format", ","]) == 2
    assert "--format ',' names no format" in _one_line(capsys)
    assert _cli(["report", str(run), "--format", "docx"]) == 2
    assert "report format 'docx' is not supported" in _one_line(capsys)
