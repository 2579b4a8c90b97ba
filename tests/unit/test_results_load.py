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
    assert message == f"{path} schema_version 7 is newer than this vsperf understands (1); upgrade vsperf"
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
