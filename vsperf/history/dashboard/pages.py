"""The dashboard's pages, rendered from the store with Jinja2 (every text autoescaped; the chart's
data travels as JSON in a script element, with <, > and & escaped so that no tag can close it).

Pages: the index (every series, a sparkline and its classification, filters), a page per series
(an interactive plotly chart: every point with its run, date, versions, tags and report link;
regressions and progressions marked; jumpavg's groups as steps), the runs, and a two-run view that
is `vsperf compare`'s (vsperf.verdicts.compare on the recorded runs).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jinja2
from markupsafe import Markup
from sqlalchemy import Connection

from vsperf.history.analysis import SeriesTrend, series_trend
from vsperf.history.dashboard.links import Links
from vsperf.history.dashboard.sparkline import sparkline
from vsperf.history.model import Point, RunSummary, Series
from vsperf.history.query import Filters, list_runs, run_details, run_results, series_values
from vsperf.history.trend import PROGRESSION, REGRESSION
from vsperf.paths import data_dir
from vsperf.verdicts.compare import DEFAULT_THRESHOLD_PERCENT, compare_runs

CHART_LIBRARY = "plotly.min.js"
STYLESHEET, SCRIPT = "dashboard.css", "dashboard.js"
Details = dict[str, tuple[dict[int, dict[str, str]], dict[str, str], str | None]]


@dataclass(frozen=True)
class SiteOptions:
    """What the dashboard shows: which series, how many runs are classified, report links."""

    filters: Filters = field(default_factory=Filters)
    trend_runs: int = 50  # HISTORY_TREND_RUNS
    report_url: str = ""  # HISTORY_REPORT_URL
    compare_threshold_percent: float = DEFAULT_THRESHOLD_PERCENT


def script_json(data: Any) -> Markup:
    """`data` as JSON safe inside <script type="application/json">."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(data_dir("templates"))),
                              autoescape=True, trim_blocks=True, lstrip_blocks=True,
                              undefined=jinja2.StrictUndefined)


_ENV = _environment()


def render(template: str, **values: Any) -> str:
    return _ENV.get_template(template).render(**values)


class DetailsCache:
    """Each run's versions, tags and report, read once per site (bounded by the runs shown)."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._known: Details = {}

    def get(self, run_ids: Sequence[str]) -> Details:
        missing = [r for r in dict.fromkeys(run_ids) if r not in self._known]
        if missing:
            self._known.update(run_details(self._connection, missing))
        return {r: self._known[r] for r in run_ids}


def _versions_text(versions: dict[str, str]) -> str:
    return " · ".join(f"{role} {text}" for role, text in versions.items())


@dataclass(frozen=True)
class SeriesView:
    """One series with all its points, the newest of them classified."""

    trend: SeriesTrend
    points: tuple[Point, ...]  # every point, oldest first
    details: Details

    @property
    def series(self) -> Series:
        return self.trend.series

    def versions(self) -> list[str]:
        seen = {text for p in self.points for text in self.details[p.run_id][0].get(p.test_index, {}).values()}
        return sorted(seen)

    def tags(self) -> list[str]:
        return sorted({f"{k}={v}" for p in self.points for k, v in self.details[p.run_id][1].items()})


def series_view(connection: Connection, series: Series, options: SiteOptions, cache: DetailsCache) -> SeriesView:
    points = series_values(connection, series.series_id, options.filters)
    classified = points[-options.trend_runs:]
    return SeriesView(series_trend(series, classified), tuple(points), cache.get([p.run_id for p in points]))


def _run_info(view: SeriesView, point: Point, links: Links) -> dict[str, Any]:
    versions, tags, report = view.details[point.run_id]
    run_versions = versions.get(point.test_index, {})
    return {"run": point.run_id, "date": point.started_at.strftime("%Y-%m-%d %H:%M:%S"),
            "versions": _versions_text(run_versions), "versionList": sorted(run_versions.values()),
            "tags": [f"{k}={v}" for k, v in sorted(tags.items())], "report": links.report(point.run_id, report)}


def chart_data(view: SeriesView, links: Links, memo: dict[tuple[str, int], dict[str, Any]] | None = None) -> dict[
        str, Any]:
    """What dashboard.js draws: points, groups (indices into points) and the filter choices.
    `memo`: each run's part of a point, kept across the series of one site (a run is in many)."""
    first = len(view.points) - len(view.trend.points)
    memo = {} if memo is None else memo
    points = []
    for i, p in enumerate(view.points):
        info = memo.get((p.run_id, p.test_index))
        if info is None:
            info = memo[(p.run_id, p.test_index)] = _run_info(view, p, links)
        points.append({**info, "value": p.value,
                       "compare": links.compare(view.points[i - 1].run_id, p.run_id) if i > first else ""})
    groups = [{"start": first + g.start, "end": first + g.end, "average": g.average, "class": g.classification}
              for g in view.trend.classified.groups]
    return {"label": view.series.key.label, "metric": view.series.key.metric,
            "better": view.trend.classified.better, "points": points, "groups": groups,
            "versions": view.versions(), "tags": view.tags()}


def index_row(view: SeriesTrend, details: Details, links: Links) -> dict[str, Any]:
    """One series of the index (its newest classified points only: the index stays light)."""
    key = view.series.key
    line = view.line()
    versions = sorted({t for p in view.points for t in details[p.run_id][0].get(p.test_index, {}).values()})
    tags = sorted({f"{k}={v}" for p in view.points for k, v in details[p.run_id][1].items()})
    return {"key": key, "line": line, "href": links.series(view.series.series_id),
            "spark": Markup(sparkline([p.value for p in view.points], line.classification, title=key.label)),
            "versions": "\n".join(versions), "tags": "\n".join(tags)}


def index_page(rows: Iterable[dict[str, Any]], links: Links, *, served: bool, runs: int) -> str:
    rows = list(rows)
    choices = {name: sorted({str(getattr(r["key"], name)) for r in rows}, key=_natural)
               for name in ("test", "packet_size", "metric", "vswitch", "testbed")}
    choices["packet_size"] = sorted({str(r["key"].frame_mix or r["key"].packet_size) for r in rows}, key=_natural)
    choices["version"] = sorted({v for r in rows for v in r["versions"].split("\n") if v})
    choices["tag"] = sorted({t for r in rows for t in r["tags"].split("\n") if t})
    counts = {c: sum(1 for r in rows if r["line"].classification == c) for c in (REGRESSION, PROGRESSION)}
    return render("dashboard_index.html.j2", rows=rows, links=links, choices=choices, served=served,
                  runs=runs, counts=counts)


def _natural(text: str) -> tuple[int, str]:
    return (int(text), "") if text.isdigit() else (1 << 30, text)


def series_page(view: SeriesView, links: Links, *, served: bool,
                memo: dict[tuple[str, int], dict[str, Any]] | None = None) -> str:
    data = chart_data(view, links, memo)
    window = list(reversed(data["points"][len(view.points) - len(view.trend.points):]))
    return render("dashboard_series.html.j2", view=view, key=view.series.key, line=view.trend.line(),
                  data=script_json(data), links=links, window=window, served=served)


def runs_page(runs: Sequence[RunSummary], links: Links, comparable: set[str], *, served: bool) -> str:
    rows = []
    for i, run in enumerate(runs):
        before = runs[i + 1].run_id if i + 1 < len(runs) else None
        report = str(run.results_dir / run.report) if run.report else str(run.results_dir)
        compare = links.compare(before, run.run_id) if before and (served or run.run_id in comparable) else ""
        rows.append({"run": run, "report": links.report(run.run_id, report), "compare": compare, "before": before})
    return render("dashboard_runs.html.j2", rows=rows, links=links, served=served)


def compare_page(connection: Connection, run_a: str, run_b: str, links: Links, threshold: float, *,
                 served: bool, choices: Sequence[str] = ()) -> str:
    """`vsperf compare RUN_A RUN_B` on the recorded runs, as a side-by-side table."""
    comparison = compare_runs(run_results(connection, run_a), run_results(connection, run_b), threshold,
                              names=(run_a, run_b))
    return render("dashboard_compare.html.j2", comparison=comparison, links=links, served=served,
                  choices=choices)


def recent_runs(connection: Connection, filters: Filters, last: int | None = None) -> list[RunSummary]:
    return list_runs(connection, Filters(tests=filters.tests, testbeds=filters.testbeds, tags=filters.tags), last)
