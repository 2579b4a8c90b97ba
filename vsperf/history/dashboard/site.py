"""`vsperf dashboard --out DIR`: the dashboard as a static site (CI publishes it as an artifact).

DIR gets index.html, runs.html, series/s<ID>.html, compare/<A>__<B>.html (each of the newest
HISTORY_TREND_RUNS runs against the one before; `--serve` compares any two) and assets/ with
plotly.js copied from the plotly package. Series are read and written one at a time: memory
holds one page's data, not the store.
"""

from __future__ import annotations

import importlib.util
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vsperf.errors import UserError
from vsperf.history.dashboard.links import Links
from vsperf.history.dashboard.pages import (
    CHART_LIBRARY,
    SCRIPT,
    STYLESHEET,
    DetailsCache,
    SiteOptions,
    compare_page,
    index_page,
    index_row,
    recent_runs,
    runs_page,
    series_page,
    series_view,
)
from vsperf.history.db import Store
from vsperf.history.query import list_series
from vsperf.paths import data_dir

__all__ = ["SiteOptions", "WrittenSite", "asset_path", "write_site"]


@dataclass(frozen=True)
class WrittenSite:
    """What `write_site` wrote."""

    series: int
    runs: int
    pages: int
    seconds: float


def asset_path(name: str) -> Path:
    """An asset's file: plotly.js from the plotly package, the stylesheet and script from templates/."""
    if name == CHART_LIBRARY:
        spec = importlib.util.find_spec("plotly")
        if spec is None or not spec.submodule_search_locations:
            raise UserError("the plotly package is missing (it ships the dashboard's chart library): reinstall vsperf")
        return Path(next(iter(spec.submodule_search_locations))) / "package_data" / CHART_LIBRARY
    if name in (STYLESHEET, SCRIPT):
        return data_dir("templates") / name
    raise FileNotFoundError(name)


def _prepare(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise UserError(f"vsperf dashboard --out {out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not (out / "index.html").is_file():
        raise UserError(f"vsperf dashboard --out {out}: not empty and not a dashboard; choose an empty directory")
    for sub in ("series", "compare"):  # pages of a previous build whose series or runs are gone
        shutil.rmtree(out / sub, ignore_errors=True)
        (out / sub).mkdir(parents=True)
    (out / "assets").mkdir(exist_ok=True)
    for name in (CHART_LIBRARY, STYLESHEET, SCRIPT):
        shutil.copyfile(asset_path(name), out / "assets" / name)


def write_site(store: Store, out: Path, options: SiteOptions) -> WrittenSite:
    """Write the static dashboard of `store` into `out` (see the module doc)."""
    started = time.monotonic()
    _prepare(out)
    top, sub = Links("", report_url=options.report_url), Links("../", report_url=options.report_url)
    rows, pages = [], 0
    memo: dict[tuple[str, int], dict[str, Any]] = {}  # each run's part of a chart point, once per site
    with store.connect() as connection:
        cache = DetailsCache(connection)
        for series in list_series(connection, options.filters):
            view = series_view(connection, series, options, cache)
            if not view.points:
                continue
            (out / "series" / f"s{series.series_id}.html").write_text(series_page(view, sub, served=False, memo=memo),
                                                                       encoding="utf-8")
            rows.append(index_row(view.trend, cache.get([p.run_id for p in view.trend.points]), top))
            pages += 1
        runs = recent_runs(connection, options.filters)
        newest = [r.run_id for r in runs[:options.trend_runs + 1]]
        comparable = set(newest[:-1]) if len(newest) > options.trend_runs else set(newest)
        for before, after in zip(newest[1:], newest, strict=False):
            page = compare_page(connection, before, after, sub, options.compare_threshold_percent, served=False)
            (out / sub.compare(before, after).removeprefix("../")).write_text(page, encoding="utf-8")
            pages += 1
    (out / "runs.html").write_text(runs_page(runs, top, comparable, served=False), encoding="utf-8")
    (out / "index.html").write_text(index_page(rows, top, served=False, runs=len(runs)), encoding="utf-8")
    return WrittenSite(len(rows), len(runs), pages + 2, time.monotonic() - started)
