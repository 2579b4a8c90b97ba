"""load_results: what it refuses, and how it says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vsperf.errors import ConfigError
from vsperf.results.load import load_results

MINIMAL = {
    "schema_version": 1,
    "vsperf_version": "0.1.0",
    "run_id": "abc123",
    "status": "finished",
    "started_at": "2024-05-11T07:36:56+00:00",
    "finished_at": "2024-05-11T08:00:00+00:00",
    "command_line": ["vsperf"],
    "simulated": True,
    "environment": {},
    "settings": {},
    "settings_sources": {},
    "tests": [],
}


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    return path


def test_loads_a_file_or_its_directory(tmp_path: Path) -> None:
    path = _write(tmp_path, MINIMAL)
    assert load_results(path) == load_results(tmp_path)
    assert load_results(str(tmp_path)).run_id == "abc123"


def test_newer_schema_is_refused_in_one_line(tmp_path: Path) -> None:
    path = _write(tmp_path, {**MINIMAL, "schema_version": 7})
    with pytest.raises(ConfigError) as info:
        load_results(path)
    message = str(info.value)
    assert message == f"{path} schema_version 7 is newer than this vsperf understands (2); upgrade vsperf"
    assert "\n" not in message


@pytest.mark.parametrize("version", [0, "1", None, True])
def test_invalid_schema_versions_are_refused(tmp_path: Path, version: object) -> None:
    path = _write(tmp_path, {**MINIMAL, "schema_version": version})
    with pytest.raises(ConfigError, match=str(path)):
        load_results(path)


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=f"{tmp_path}/results.json: no such results file"):
        load_results(tmp_path)


def test_garbled_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text('{"schema_version": 1, "tests": [')
    with pytest.raises(ConfigError, match=f"{path}: not valid JSON"):
        load_results(path)
    path.write_text("[1, 2]")
    with pytest.raises(ConfigError, match="not a vsperf results file"):
        load_results(path)


def test_malformed_records_are_config_errors(tmp_path: Path) -> None:
    data = dict(MINIMAL)
    del data["run_id"]
    with pytest.raises(ConfigError, match="missing key 'run_id'"):
        load_results(_write(tmp_path, data))
    with pytest.raises(ConfigError, match="run status 'weird'"):
        load_results(_write(tmp_path, {**MINIMAL, "status": "weird"}))
    bad_test = {"index": 0, "name": "x", "deployment": "p2p", "traffic_type": "t", "bidir": True}
    with pytest.raises(ConfigError, match="missing key 'status'"):
        load_results(_write(tmp_path, {**MINIMAL, "tests": [bad_test]}))


V1_TEST = {
    "index": 0, "name": "phy2phy_tput", "description": "", "deployment": "p2p", "traffic_type": "rfc2544_throughput",
    "bidir": True, "frame_modification": None, "components": [], "parameters": {}, "status": "passed", "error": None,
    "started_at": "2024-05-11T07:36:56+00:00", "finished_at": "2024-05-11T07:40:00+00:00",
    "results": [{"packet_size": 64.0, "metrics": {"throughput_rx_fps": 1.0e6}, "trials": [
        {"kind": "rate", "frame_size_bytes": 64, "requested_rate_fps": 1e6, "duration_s": 1.0, "tx_frames": 1000000,
         "rx_frames": 1000000, "actual_tx_rate_fps": 1e6, "line_rate_fps": 29761904.76,
         "latency": {"min_ns": 1.0, "avg_ns": 2.0, "max_ns": 3.0, "percentiles_ns": {}, "samples": 5}}]}],
}


def test_a_version_1_file_is_migrated_and_still_reports(tmp_path: Path) -> None:
    """Version 2 (frame mixes) reads every version 1 file: integer sizes, trials without the new fields."""
    import subprocess
    import sys

    _write(tmp_path, {**MINIMAL, "tests": [V1_TEST]})
    run = load_results(tmp_path)
    assert run.schema_version == 2 and run.tests[0].packet_sizes == (64,)
    (trial,) = run.tests[0].results[0].trials
    assert (trial.warm_frames, trial.rx_frames_by_size, trial.notes) == (0, (), ())
    assert trial.latency is not None and trial.latency.hdrh == ""
    proc = subprocess.run([sys.executable, "-m", "vsperf", "report", str(tmp_path), "--format", "rst"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Test results for packet size: 64" in (tmp_path / "report.rst").read_text()


def test_a_frame_mix_is_a_packet_size_by_name(tmp_path: Path) -> None:
    test = {**V1_TEST, "results": [{**V1_TEST["results"][0], "packet_size": "aaaaaaaddddg"}]}  # type: ignore[dict-item]
    _write(tmp_path, {**MINIMAL, "schema_version": 2, "tests": [test]})
    assert load_results(tmp_path).tests[0].packet_sizes == ("aaaaaaaddddg",)
    _write(tmp_path, {**MINIMAL, "schema_version": 2, "tests": [{**test, "results": [{"packet_size": 0}]}]})
    with pytest.raises(ConfigError, match="malformed results: packet size must be a positive whole number"):
        load_results(tmp_path)
