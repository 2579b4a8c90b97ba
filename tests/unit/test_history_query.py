"""vsperf.history.query: series and points under filters, runs, a run back as RunResults."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from history_runs import START, write_run
from history_store import sqlite_store

from vsperf.history.importer import import_dirs
from vsperf.history.query import Filters, NoSuchRunError, find_run, list_runs, list_series, run_results, series_values
from vsperf.verdicts.compare import compare_runs


@pytest.fixture()
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    for i in range(6):
        write_run(tmp_path / "runs", run_id=f"r{i}", started=START + timedelta(days=i),
                  throughput={("phy2phy_tput", 64): 1e6 + i, ("phy2phy_tput", 1518): 8e5, ("back2back", 64): 5e5},
                  vswitch=("ovs", "3.1.0" if i < 3 else "3.2.1"), tags={"lab": "rack3" if i % 2 else "rack4"},
                  testbed="" if i < 5 else "/etc/bed/pod2.yaml")
    with sqlite_store(tmp_path) as opened:
        import_dirs(opened, [tmp_path / "runs"])
        yield opened


def _labels(store, filters: Filters) -> list[str]:  # type: ignore[no-untyped-def]
    with store.connect() as c:
        return [f"{s.key.label} {s.key.testbed}" for s in list_series(c, filters)]


def test_series_filters(store) -> None:  # type: ignore[no-untyped-def]
    tput = Filters(metrics=("throughput_rx_fps",))
    assert _labels(store, tput) == [
        "back2back p2p 64 B throughput_rx_fps local", "back2back p2p 64 B throughput_rx_fps pod2",
        "phy2phy_tput p2p 64 B throughput_rx_fps local", "phy2phy_tput p2p 64 B throughput_rx_fps pod2",
        "phy2phy_tput p2p 1518 B throughput_rx_fps local", "phy2phy_tput p2p 1518 B throughput_rx_fps pod2"]
    assert _labels(store, Filters(tests=("phy2phy_tput",), sizes=(64,), metrics=("throughput_rx_fps",),
                                  testbeds=("pod2",))) == ["phy2phy_tput p2p 64 B throughput_rx_fps pod2"]
    assert _labels(store, Filters(metrics=("all",), sizes=(1518,), testbeds=("local",)))[0].endswith("local")
    assert _labels(store, Filters(vswitches=("linux_bridge",))) == []


def test_points_are_oldest_first_and_versions_and_tags_choose_runs(store) -> None:  # type: ignore[no-untyped-def]
    with store.connect() as c:
        series = list_series(c, Filters(tests=("phy2phy_tput",), sizes=(64,), metrics=("throughput_rx_fps",),
                                        testbeds=("local",)))[0]
        assert [p.value for p in series_values(c, series.series_id)] == [1e6 + i for i in range(5)]
        assert [p.value for p in series_values(c, series.series_id, last=2)] == [1e6 + 3, 1e6 + 4]
        assert [p.value for p in series_values(c, series.series_id, Filters(versions=("3.2",)))] == [1e6 + 3, 1e6 + 4]
        assert [p.value for p in series_values(c, series.series_id, Filters(tags=("lab=rack3",)))] == [
            1e6 + 1, 1e6 + 3]
        assert len(series_values(c, series.series_id, Filters(tags=("lab",)))) == 5
        assert series_values(c, series.series_id, Filters(tags=("owner",))) == []


def test_runs_newest_first_and_found_by_their_short_id(store) -> None:  # type: ignore[no-untyped-def]
    with store.connect() as c:
        runs = list_runs(c)
        assert [r.run_id.rsplit("-", 1)[1] for r in runs] == ["r5", "r4", "r3", "r2", "r1", "r0"]
        assert (runs[0].tests, runs[0].measurements, runs[0].testbed) == (2, 18, "pod2")
        assert [r.run_id[-2:] for r in list_runs(c, Filters(tags=("lab=rack4",)), last=2)] == ["r4", "r2"]
        assert find_run(c, "r2").run_id == runs[3].run_id
        assert find_run(c, runs[3].run_id[:12]).run_id == runs[3].run_id
        with pytest.raises(NoSuchRunError, match="not in the results store"):
            find_run(c, "zzz")
        with pytest.raises(NoSuchRunError, match="matches several runs"):
            find_run(c, "2026")


def test_a_recorded_run_compares_as_vsperf_compare_does(store) -> None:  # type: ignore[no-untyped-def]
    with store.connect() as c:
        a, b = run_results(c, find_run(c, "r0").run_id), run_results(c, find_run(c, "r4").run_id)
    comparison = compare_runs(a, b, 5.0)
    assert not comparison.regressed
    change = next(ch for ch in comparison.changes if ch.metric == "throughput_rx_fps" and ch.packet_size == 64)
    assert (change.before, change.after) == (1e6, 1e6 + 4)


def test_series_with_runs_of_a_version_or_tag_only(store) -> None:  # type: ignore[no-untyped-def]
    tput = ("throughput_rx_fps",)
    assert len(_labels(store, Filters(metrics=tput, versions=("3.2",)))) == 6  # runs 3-5: local and pod2
    assert len(_labels(store, Filters(metrics=tput, versions=("3.1",)))) == 3  # runs 0-2: local only
    assert _labels(store, Filters(metrics=tput, versions=("9.9",))) == []
    assert len(_labels(store, Filters(metrics=tput, tags=("lab=rack3",), testbeds=("pod2",)))) == 3  # run 5
    assert _labels(store, Filters(metrics=tput, tags=("lab=rack4",), testbeds=("pod2",))) == []
