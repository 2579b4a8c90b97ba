"""The store's series, classified: what `vsperf trend` prints and the dashboard's index shows."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sqlalchemy import Connection

from vsperf.history.model import Point, Series
from vsperf.history.query import Filters, list_series, series_values
from vsperf.history.trend import Classified, TrendLine, better_direction, classify


@dataclass(frozen=True)
class SeriesTrend:
    """A series, its newest points and their classification."""

    series: Series
    points: tuple[Point, ...]  # the classified (newest) points, oldest first
    classified: Classified

    def line(self) -> TrendLine:
        latest = self.classified.latest
        return TrendLine(
            label=self.series.key.label, setup=self.series.key.setup, runs=len(self.points),
            latest_value=self.points[-1].value, latest_run=self.points[-1].run_id,
            group_average=latest.average if latest else self.points[-1].value,
            change_percent=self.classified.change_percent, classification=self.classified.classification)


def series_trend(series: Series, points: list[Point]) -> SeriesTrend:
    """Classify `points` (oldest first) of `series`."""
    values = [p.value for p in points]
    return SeriesTrend(series, tuple(points), classify(values, better_direction(series.key.metric)))


def trends(connection: Connection, filters: Filters, last: int) -> Iterator[SeriesTrend]:
    """Every series under `filters`, its newest `last` points classified (one series at a time:
    memory holds one series, never the store)."""
    for series in list_series(connection, filters):
        points = series_values(connection, series.series_id, filters, last)
        if points:
            yield series_trend(series, points)
