"""vsperf.history.recorder: a run recorded from its results.json, whole or not at all, once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from history_runs import START, write_run
from history_store import sqlite_store
from sqlalchemy import func, select

from vsperf.history import recorder, schema
from vsperf.history.model import store_run_id
from vsperf.history.query import find_run, list_runs, run_results
from vsperf.history.recorder import NotARunError, record_dir


def _count(store: object, table: object) -> int:
    with store.connect() as c:  # type: ignore[attr-defined]
        return int(c.execute(select(func.count()).select_from(table)).scalar_one())


def test_a_run_is_recorded_with_its_tests_values_tags_and_versions(tmp_path: Path) -> None:
    run = write_run(tmp_path, run_id="abc123", started=START, tags={"lab": "rack3"},
                    throughput={("phy2phy_tput", 64): 1e6, ("phy2phy_tput", 1518): 8e5, ("back2back", 64): 5e5})
    with sqlite_store(tmp_path) as store:
        recorded = record_dir(store, run)
        assert (recorded.run_id, recorded.action, recorded.tests) == (store_run_id("abc123", START.replace(
            tzinfo=None)), "recorded", 2)
        assert recorded.measurements == 3 * 6  # six numeric metrics per frame size; text ones left out
        with store.connect() as c:
            summary = find_run(c, "abc123")
            results = run_results(c, summary.run_id)
        assert summary.tags == {"lab": "rack3"} and summary.report == "report.html"
        assert summary.results_dir == run.resolve()
        assert [t.name for t in results.tests] == ["phy2phy_tput", "back2back"]
        assert results.tests[0].results[1].metrics["throughput_rx_fps"] == 8e5
        assert results.tests[0].component("vswitch").version == "3.1.0"  # type: ignore[union-attr]


def test_recording_again_is_idempotent_and_a_changed_run_replaces_its_copy(tmp_path: Path) -> None:
    run = write_run(tmp_path, run_id="abc123", started=START, throughput={("phy2phy_tput", 64): 1e6})
    with sqlite_store(tmp_path) as store:
        record_dir(store, run)
        assert record_dir(store, run).action == "unchanged"
        before = _count(store, schema.measurements)
        write_run(tmp_path, run_id="abc123", started=START, throughput={("phy2phy_tput", 64): 9e5})
        assert record_dir(store, run).action == "updated"
        assert _count(store, schema.runs) == 1 and _count(store, schema.measurements) == before
        with store.connect() as c:
            assert run_results(c, find_run(c, "abc123").run_id).tests[0].results[0].metrics[
                "throughput_rx_fps"] == 9e5


def test_two_runs_with_the_same_short_id_stay_apart(tmp_path: Path) -> None:
    first = write_run(tmp_path, run_id="abc123", started=START, throughput={("t", 64): 1.0}, name="a")
    second = write_run(tmp_path, run_id="abc123", started=START.replace(day=2), throughput={("t", 64): 2.0}, name="b")
    with sqlite_store(tmp_path) as store:
        record_dir(store, first)
        record_dir(store, second)
        with store.connect() as c:
            assert len(list_runs(c)) == 2


@pytest.mark.parametrize("content, words", [
    (None, "is not a vsperf run directory"),
    ("{not json", "not valid JSON"),
    (json.dumps({"schema_version": 99}), "newer than this vsperf understands"),
])
def test_a_folder_that_is_not_a_run_is_one_line(tmp_path: Path, content: str | None, words: str) -> None:
    if content is not None:
        (tmp_path / "results.json").write_text(content, encoding="utf-8")
    with sqlite_store(tmp_path / "store") as store, pytest.raises(NotARunError, match=words) as caught:
        record_dir(store, tmp_path)
    assert "\n" not in str(caught.value)


def test_testbed_names() -> None:
    assert recorder.testbed_name({"TESTBED": ""}) == "local"
    assert recorder.testbed_name({"TESTBED": "/etc/vsperf/rack3.yaml"}) == "rack3"


_KILLED_CHILD = """
import sys, time
from pathlib import Path
sys.path.insert(0, {unit!r})
from history_store import sqlite_store
import vsperf.history.recorder as recorder
real = recorder._series_ids
def slow(*args):
    ids = real(*args)  # the run, its tests and series are written by now
    Path({ready!r}).write_text("in the transaction")
    time.sleep(60)
    return ids
recorder._series_ids = slow
with sqlite_store(Path({folder!r})) as store:
    recorder.record_dir(store, Path({run!r}))
"""


def test_a_recorder_killed_in_its_transaction_leaves_no_half_run(tmp_path: Path) -> None:
    run = write_run(tmp_path, run_id="abc123", started=START, throughput={("phy2phy_tput", 64): 1e6})
    ready = tmp_path / "ready"
    code = _KILLED_CHILD.format(unit=str(Path(__file__).parent), ready=str(ready), folder=str(tmp_path), run=str(run))
    child = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.exists(), "the recorder never reached its transaction"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    with sqlite_store(tmp_path) as store:
        assert [_count(store, t) for t in (schema.runs, schema.tests, schema.measurements, schema.series)] == [0] * 4
        assert record_dir(store, run).action == "recorded"  # and the store still takes it


def test_a_frame_mix_is_its_own_series_named_by_the_mix(tmp_path: Path) -> None:
    """A mix's series: its name beside the mix's mean size; series of one frame size keep their keys."""
    run = write_run(tmp_path, run_id="abc124", started=START,
                    throughput={("phy2phy_tput", 64): 1e6, ("phy2phy_tput", "aaaaaaaddddg"): 9e5})
    with sqlite_store(tmp_path) as store:
        record_dir(store, run)
        with store.connect() as c:
            rows = c.execute(select(schema.series.c.packet_size, schema.series.c.frame_mix, schema.series.c.key)
                             .where(schema.series.c.metric == "throughput_rx_fps")).all()
            results = run_results(c, find_run(c, "abc124").run_id)
    assert sorted((r.packet_size, r.frame_mix) for r in rows) == [(64, ""), (334, "aaaaaaaddddg")]
    one_size = next(r.key for r in rows if not r.frame_mix)
    assert one_size == '["phy2phy_tput","p2p",64,"throughput_rx_fps","ovs","","dummy","local",""]'
    assert [r.packet_size for r in results.tests[0].results] == [64, "aaaaaaaddddg"]
