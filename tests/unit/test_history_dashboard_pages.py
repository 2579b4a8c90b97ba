"""vsperf.history.dashboard.pages: the chart's data (points, groups, links) and safe JSON."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from history_runs import START, write_run
from history_store import sqlite_store

from vsperf.history.dashboard.links import Links
from vsperf.history.dashboard.pages import DetailsCache, SiteOptions, chart_data, script_json, series_view
from vsperf.history.importer import import_dirs
from vsperf.history.query import Filters, list_series


def test_script_json_escapes_what_could_end_the_element() -> None:
    text = str(script_json({"a": "</script><b>&"}))
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"a": "</script><b>&"}


def test_chart_data_of_a_series_with_a_step(tmp_path: Path) -> None:
    for i in range(20):
        write_run(tmp_path / "runs", run_id=f"r{i:02d}", started=START + timedelta(days=i),
                  throughput={("phy2phy_tput", 64): 1e6 if i < 15 else 8e5},
                  vswitch=("ovs", "3.1.0" if i < 10 else "3.2.0"), tags={"lab": "rack3"})
    with sqlite_store(tmp_path) as store:
        import_dirs(store, [tmp_path / "runs"])
        with store.connect() as c:
            series = list_series(c, Filters(metrics=("throughput_rx_fps",)))[0]
            view = series_view(c, series, SiteOptions(trend_runs=12), DetailsCache(c))
            data = chart_data(view, Links("../"))
    assert len(data["points"]) == 20
    # The newest 12 points are classified: 8..14 at 1 Mfps, 15..19 at 0.8 Mfps.
    assert [(g["start"], g["end"], g["class"]) for g in data["groups"]] == [(8, 15, "normal"), (15, 20, "regression")]
    first, last = data["points"][0], data["points"][-1]
    assert first["versionList"] == ["dummy simulated DUT model 1", "ovs 3.1.0"]
    assert last["tags"] == ["lab=rack3"] and last["report"].startswith("file:///")
    assert last["report"].endswith("/results_r19/report.html")
    assert first["compare"] == "" and last["compare"].startswith("../compare/") and last["compare"].endswith(
        "-r18__20260120T020000-r19.html")
    assert view.versions() == ["dummy simulated DUT model 1", "ovs 3.1.0", "ovs 3.2.0"]
