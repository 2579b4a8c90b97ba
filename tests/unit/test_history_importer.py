"""vsperf.history.importer: run directories, or a folder of them, recorded once each."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from history_runs import START, write_run
from history_store import sqlite_store

from vsperf.history.importer import import_dirs


def test_a_folder_of_runs_and_a_run_are_imported_once(tmp_path: Path) -> None:
    runs = [write_run(tmp_path / "logs", run_id=f"r{i}", started=START + timedelta(days=i),
                      throughput={("phy2phy_tput", 64): 1e6}) for i in range(3)]
    (tmp_path / "logs" / "notes").mkdir()
    with sqlite_store(tmp_path) as store:
        seen: list[str] = []
        report = import_dirs(store, [tmp_path / "logs", runs[0]], lambda d, r: seen.append(f"{d.name} {r.action}"))
        assert seen == ["results_r0 recorded", "results_r1 recorded", "results_r2 recorded", "results_r0 unchanged"]
        assert report.summary() == "import: 3 recorded, 0 updated, 1 unchanged"
        again = import_dirs(store, [tmp_path / "logs"])
        assert again.summary() == "import: 0 recorded, 0 updated, 3 unchanged" and not again.problems


def test_folders_that_are_not_runs_are_reported_and_the_rest_imported(tmp_path: Path) -> None:
    run = write_run(tmp_path, run_id="r0", started=START, throughput={("phy2phy_tput", 64): 1e6})
    (tmp_path / "empty").mkdir()
    with sqlite_store(tmp_path / "store") as store:
        report = import_dirs(store, [tmp_path / "empty", tmp_path / "missing", run])
    assert report.count("recorded") == 1
    assert report.problems == [f"{tmp_path / 'empty'} is not a vsperf run directory (no results.json in it or in its "
                               f"folders)", f"{tmp_path / 'missing'} is not a vsperf run directory (no such directory)"]
    assert report.summary().endswith(", 2 not run directories")
