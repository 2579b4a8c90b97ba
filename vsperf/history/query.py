"""Read the store back: series and their points under filters, runs, one run as RunResults.

Filters on the series (test, frame size, metric, vswitch, testbed) choose which series; filters
on the runs (versions, tags) choose which of their points count. Every read is one transaction.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import ColumnElement, Connection, Select, and_, exists, func, or_, select

from vsperf.errors import UserError
from vsperf.history import schema
from vsperf.history.model import Point, RunSummary, Series, SeriesKey
from vsperf.results.model import ComponentInfo, FrameSizeResult, RunResults, TestResult
from vsperf.results.sizes import PacketSize, size_sort_key

ALL_METRICS = "all"


class NoSuchRunError(UserError):
    """A run id the store does not hold."""


@dataclass(frozen=True)
class Filters:
    """What to select; empty tuples select everything. Matching ignores nothing: exact names,
    except `versions` (a prefix of any component's, or vsperf's, version) and `tags` (KEY or
    KEY=VALUE)."""

    tests: tuple[str, ...] = ()
    sizes: tuple[int, ...] = ()
    metrics: tuple[str, ...] = ()  # () or ("all",): every metric
    vswitches: tuple[str, ...] = ()
    versions: tuple[str, ...] = ()
    testbeds: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()

    def series_conditions(self) -> list[ColumnElement[bool]]:
        s = schema.series.c
        conditions: list[ColumnElement[bool]] = []
        for column, values in ((s.test, self.tests), (s.vswitch, self.vswitches), (s.testbed, self.testbeds)):
            if values:
                conditions.append(column.in_(values))
        if self.sizes:
            conditions.append(s.packet_size.in_(self.sizes))
        if self.metrics and ALL_METRICS not in self.metrics:
            conditions.append(s.metric.in_(self.metrics))
        return conditions

    def run_conditions(self) -> list[ColumnElement[bool]]:
        """Conditions on measurements.run_id (and test_index) for versions and tags."""
        m, c, t, r = schema.measurements.c, schema.components.c, schema.tags.c, schema.runs.c
        conditions: list[ColumnElement[bool]] = []
        if self.versions:
            either = []
            for version in self.versions:
                either.append(exists().where(c.run_id == m.run_id, c.test_index == m.test_index,
                                             c.version.startswith(version, autoescape=True)))
                either.append(exists().where(r.run_id == m.run_id, r.vsperf_version.startswith(version,
                                                                                               autoescape=True)))
            conditions.append(or_(*either))
        for tag in self.tags:
            key, sep, value = tag.partition("=")
            match = [t.run_id == m.run_id, t.key == key] + ([t.value == value] if sep else [])
            conditions.append(exists().where(*match))
        return conditions


def list_series(connection: Connection, filters: Filters) -> list[Series]:
    """The series with at least one point under `filters`, by test, deployment, size, metric."""
    s, m = schema.series.c, schema.measurements.c
    has_point = exists().where(m.series_id == s.series_id, *filters.run_conditions())
    stmt = (select(schema.series).where(*filters.series_conditions(), has_point)
            .order_by(s.test, s.deployment, s.packet_size, s.metric, s.vswitch, s.vnf, s.trafficgen, s.testbed,
                      s.variant))
    return [_series(row) for row in connection.execute(stmt)]


def _series(row: Any) -> Series:
    key = SeriesKey(row.test, row.deployment, row.packet_size, row.metric, row.vswitch, row.vnf, row.trafficgen,
                    row.testbed, row.variant, row.frame_mix)
    return Series(row.series_id, key)


def _points_stmt(series_id: int, filters: Filters, last: int | None) -> Select[Any]:
    m = schema.measurements.c
    stmt = (select(m.run_id, m.started_at, m.value, m.test_index)
            .where(m.series_id == series_id, *filters.run_conditions())
            .order_by(m.started_at.desc(), m.run_id.desc(), m.test_index.desc()))
    return stmt.limit(last) if last else stmt


def series_values(connection: Connection, series_id: int, filters: Filters = Filters(),
                  last: int | None = None) -> list[Point]:
    """A series' points, oldest first (the newest `last` only, when given); no run details."""
    rows = connection.execute(_points_stmt(series_id, filters, last)).all()
    return [Point(r.run_id, r.started_at, float(r.value), r.test_index) for r in reversed(rows)]


def series_points(connection: Connection, series_id: int, filters: Filters = Filters(),
                  last: int | None = None) -> list[Point]:
    """A series' points, oldest first, with each run's versions, tags and report."""
    points = series_values(connection, series_id, filters, last)
    details = run_details(connection, [p.run_id for p in points])
    out = []
    for p in points:
        versions, tags, report = details.get(p.run_id, ({}, {}, None))
        out.append(Point(p.run_id, p.started_at, p.value, p.test_index, versions.get(p.test_index, {}), tags, report))
    return out


def run_details(connection: Connection, run_ids: Sequence[str]) -> dict[
        str, tuple[dict[int, dict[str, str]], dict[str, str], str | None]]:
    """Per run: test index -> component role -> "name version", its tags, its report path."""
    versions: dict[str, dict[int, dict[str, str]]] = defaultdict(dict)
    tags: dict[str, dict[str, str]] = defaultdict(dict)
    reports: dict[str, str | None] = {}
    unique = list(dict.fromkeys(run_ids))
    c, t, r = schema.components.c, schema.tags.c, schema.runs.c
    for start in range(0, len(unique), 500):
        chunk = unique[start:start + 500]
        for row in connection.execute(select(c.run_id, c.test_index, c.role, c.name, c.version)
                                      .where(c.run_id.in_(chunk), c.role.in_(("vswitch", "vnf", "trafficgen")))
                                      .order_by(c.position)):
            versions[row.run_id].setdefault(row.test_index, {}).setdefault(row.role, f"{row.name} {row.version}")
        for tag in connection.execute(select(t.run_id, t.key, t.value).where(t.run_id.in_(chunk))):
            tags[tag.run_id][tag.key] = tag.value
        for run in connection.execute(select(r.run_id, r.results_dir, r.report).where(r.run_id.in_(chunk))):
            reports[run.run_id] = str(Path(run.results_dir) / run.report) if run.report else run.results_dir
    return {run: (versions.get(run, {}), tags.get(run, {}), reports.get(run)) for run in unique}


def list_runs(connection: Connection, filters: Filters = Filters(), last: int | None = None) -> list[RunSummary]:
    """Recorded runs, newest first (the newest `last` only), with tags and counts."""
    r, m, te = schema.runs.c, schema.measurements.c, schema.tests.c
    stmt = select(schema.runs).order_by(r.started_at.desc(), r.run_id.desc())
    for tag in filters.tags:
        key, sep, value = tag.partition("=")
        t = schema.tags.c
        stmt = stmt.where(exists().where(t.run_id == r.run_id, t.key == key, *([t.value == value] if sep else [])))
    if filters.testbeds:
        stmt = stmt.where(r.testbed.in_(filters.testbeds))
    if filters.tests:
        stmt = stmt.where(exists().where(te.run_id == r.run_id, te.name.in_(filters.tests)))
    if last:
        stmt = stmt.limit(last)
    rows = connection.execute(stmt).all()
    ids = [row.run_id for row in rows]
    counts: dict[str, tuple[int, int]] = {}
    tags: dict[str, dict[str, str]] = defaultdict(dict)
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        tests = {row[0]: int(row[1]) for row in connection.execute(
            select(te.run_id, func.count()).where(te.run_id.in_(chunk)).group_by(te.run_id))}
        values = {row[0]: int(row[1]) for row in connection.execute(
            select(m.run_id, func.count()).where(m.run_id.in_(chunk)).group_by(m.run_id))}
        counts.update({run: (tests.get(run, 0), values.get(run, 0)) for run in chunk})
        for row in connection.execute(select(schema.tags).where(schema.tags.c.run_id.in_(chunk))):
            tags[row.run_id][row.key] = row.value
    return [RunSummary(row.run_id, row.started_at, row.finished_at, row.status, row.vsperf_version, row.hostname,
                       row.testbed, row.simulated, Path(row.results_dir), row.report, *counts[row.run_id],
                       tags=tags.get(row.run_id, {})) for row in rows]


def find_run(connection: Connection, run_id: str) -> RunSummary:
    """One run by id, or by a unique prefix of it (NoSuchRunError otherwise)."""
    r = schema.runs.c
    # The store's id (START-ID), a prefix of it, or the run's own id (its directory's results.json).
    ids = connection.execute(select(r.run_id).where(or_(r.run_id.startswith(run_id, autoescape=True),
                                                        r.run_id.endswith("-" + run_id, autoescape=True)))
                             .limit(3)).scalars().all()
    exact = [i for i in ids if i == run_id]
    chosen = exact or ids
    if len(chosen) != 1:
        problem = "matches several runs" if chosen else "is not in the results store"
        raise NoSuchRunError(f"run {run_id!r} {problem}: vsperf history list shows the recorded runs")
    return _one(connection, chosen[0])


def _one(connection: Connection, run_id: str) -> RunSummary:
    r, m, te = schema.runs.c, schema.measurements.c, schema.tests.c
    row = connection.execute(select(schema.runs).where(r.run_id == run_id)).one()
    tests = connection.execute(select(func.count()).where(te.run_id == run_id)).scalar_one()
    values = connection.execute(select(func.count()).where(m.run_id == run_id)).scalar_one()
    tags = {row.key: row.value for row in connection.execute(
        select(schema.tags.c.key, schema.tags.c.value).where(schema.tags.c.run_id == run_id))}
    return RunSummary(row.run_id, row.started_at, row.finished_at, row.status, row.vsperf_version, row.hostname,
                      row.testbed, row.simulated, Path(row.results_dir), row.report, tests, values, tags=tags)


def run_results(connection: Connection, run_id: str) -> RunResults:
    """A recorded run as RunResults (tests, components and metrics; no trials): what
    vsperf.verdicts.compare reads, so the dashboard's two-run view is `vsperf compare`'s."""
    r, te, c, m, s = (schema.runs.c, schema.tests.c, schema.components.c, schema.measurements.c,
                      schema.series.c)
    run = connection.execute(select(schema.runs).where(r.run_id == run_id)).one_or_none()
    if run is None:
        raise NoSuchRunError(f"run {run_id!r} is not in the results store: vsperf history list shows the recorded runs")
    comps: dict[int, list[ComponentInfo]] = defaultdict(list)
    for row in connection.execute(select(schema.components).where(c.run_id == run_id).order_by(c.position)):
        comps[row.test_index].append(ComponentInfo(row.role, row.name, row.version, {}))
    metrics: dict[int, dict[PacketSize, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for row in connection.execute(select(m.test_index, s.packet_size, s.frame_mix, s.metric, m.value)
                                  .join(schema.series, s.series_id == m.series_id).where(m.run_id == run_id)):
        metrics[row.test_index][row.frame_mix or row.packet_size][row.metric] = row.value
    tests = []
    for row in connection.execute(select(schema.tests).where(te.run_id == run_id).order_by(te.test_index)):
        sizes = metrics.get(row.test_index, {})
        tests.append(TestResult(
            index=row.test_index, name=row.name, description="", deployment=row.deployment,
            traffic_type=row.traffic_type, bidir=False, frame_modification=None,
            components=tuple(comps.get(row.test_index, ())), parameters={}, status=row.status, error=row.error,
            started_at=row.started_at.isoformat(), finished_at=row.finished_at.isoformat() if row.finished_at else None,
            results=tuple(FrameSizeResult(size, dict(values))
                          for size, values in sorted(sizes.items(), key=lambda kv: size_sort_key(kv[0])))))
    return RunResults(
        schema_version=1, vsperf_version=run.vsperf_version, run_id=run.run_id, status=run.status,
        started_at=run.started_at.isoformat(), finished_at=run.finished_at.isoformat() if run.finished_at else None,
        command_line=tuple(json.loads(run.command_line)), simulated=run.simulated,
        environment=json.loads(run.environment), settings={}, settings_sources={}, tests=tuple(tests))


def export_rows(connection: Connection, filters: Filters) -> Iterator[dict[str, Any]]:
    """Every measurement under `filters`, one flat row each, in run order (streamed)."""
    m, s, r = schema.measurements.c, schema.series.c, schema.runs.c
    stmt = (select(m.run_id, m.started_at, r.status, r.vsperf_version, r.hostname, s.test, s.deployment,
                   s.packet_size, s.metric, m.value, s.vswitch, s.vnf, s.trafficgen, s.testbed, s.variant,
                   m.test_index, s.frame_mix)
            .join(schema.series, s.series_id == m.series_id).join(schema.runs, r.run_id == m.run_id)
            .where(and_(*filters.series_conditions(), *filters.run_conditions()))
            .order_by(m.started_at, m.run_id, m.test_index, s.packet_size, s.metric))
    for row in connection.execution_options(yield_per=2000).execute(stmt):
        yield dict(row._mapping)
