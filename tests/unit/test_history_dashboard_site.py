"""vsperf.history.dashboard.site: the static site's files, escaping everywhere, rebuilds."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from history_runs import START, write_run
from history_store import sqlite_store

from vsperf.errors import UserError
from vsperf.history.dashboard.site import SiteOptions, write_site
from vsperf.history.importer import import_dirs
from vsperf.history.query import Filters

EVIL = "<script>alert(1)</script>"


@pytest.fixture()
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    for i in range(12):
        write_run(tmp_path / "runs", run_id=f"r{i:02d}", started=START + timedelta(days=i),
                  throughput={("phy2phy_tput", 64): 1e6 if i < 9 else 9e5, (EVIL, 64): 5e5},
                  tags={"lab": EVIL, "night": str(i)})
    with sqlite_store(tmp_path) as opened:
        import_dirs(opened, [tmp_path / "runs"])
        yield opened


def test_the_site_has_every_page_and_its_assets(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "site"
    written = write_site(store, out, SiteOptions(Filters(metrics=("throughput_rx_fps",)), trend_runs=5))
    assert (written.series, written.runs) == (2, 12)
    assert sorted(p.name for p in (out / "assets").iterdir()) == ["dashboard.css", "dashboard.js", "plotly.min.js"]
    assert len(list((out / "series").iterdir())) == 2
    assert len(list((out / "compare").iterdir())) == 5  # the newest 5 runs, each against the one before
    index = (out / "index.html").read_text()
    assert index.count('<tr data-test="') == 2 and 'badge regression">regression' in index
    for page in out.rglob("*.html"):  # offline: nothing is loaded from elsewhere
        assert "https://" not in page.read_text() and "http://" not in page.read_text(), page


def test_names_and_tags_stay_text_in_every_page(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "site"
    write_site(store, out, SiteOptions(Filters(metrics=("throughput_rx_fps",)), trend_runs=5))
    pages = list(out.rglob("*.html"))
    assert len(pages) > 5
    for page in pages:
        html = page.read_text()
        assert EVIL not in html, page
        assert len(re.findall(r"<script[ >]", html)) == html.count("</script>")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in (out / "index.html").read_text()
    series = next(p for p in (out / "series").iterdir() if "&lt;script&gt;" in p.read_text())
    assert "\\u003cscript\\u003e" in series.read_text()  # the chart's JSON cannot close its element


def test_a_rebuild_drops_stale_pages_and_a_foreign_folder_is_refused(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "site"
    write_site(store, out, SiteOptions(Filters(metrics=("all",)), trend_runs=5))
    many = len(list((out / "series").iterdir()))
    write_site(store, out, SiteOptions(Filters(metrics=("throughput_rx_fps",)), trend_runs=5))
    assert many > 2 and len(list((out / "series").iterdir())) == 2
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "readme.txt").write_text("mine")
    with pytest.raises(UserError, match="not empty and not a dashboard"):
        write_site(store, tmp_path / "docs", SiteOptions())
