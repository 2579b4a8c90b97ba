"""Record a run into the store FROM its result files: one code path for live runs and imports.

A run is recorded whole in one transaction (its previous copy, if any, replaced): a process
killed while recording leaves the store as it was. Recording the same unchanged results.json
again does nothing (its SHA-256 is stored with the run).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, delete, insert, select, text
from sqlalchemy.dialects import postgresql, sqlite

from vsperf.errors import ConfigError, UserError
from vsperf.history import schema
from vsperf.history.db import Store
from vsperf.history.model import SeriesKey, store_run_id
from vsperf.results.load import load_results, results_file
from vsperf.results.model import ROW_ATTRIBUTE_KEYS, RunResults, TestResult, as_number
from vsperf.results.sizes import PacketSize
from vsperf.traffic.mix import MixError, parse_mix

REPORT_FILE = "report.html"


class NotARunError(UserError):
    """A directory that holds no readable vsperf results.json."""


@dataclass(frozen=True)
class Recorded:
    """What recording one run did."""

    run_id: str
    action: str  # "recorded" (new), "updated" (replaced an older copy) or "unchanged"
    tests: int
    measurements: int


def parse_time(value: str | None) -> datetime | None:
    """An ISO 8601 time of results.json as naive UTC (the store's convention)."""
    if not value:
        return None
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment


def testbed_name(settings: Mapping[str, Any]) -> str:
    """The testbed a run used: its file's stem, "local" for the local lab."""
    path = str(settings.get("TESTBED") or "")
    return Path(path).stem if path else "local"


def _component(test: TestResult, role: str) -> tuple[str, str]:
    found = test.component(role)
    return (found.name, found.version) if found else ("", "")


def series_key(run: RunResults, test: TestResult, packet_size: PacketSize, metric: str) -> SeriesKey:
    """The series one value of `test` belongs to (a frame mix: its name, and its mean size)."""
    variant = test.parameters.get("TEST_PARAMS")
    mix = "" if isinstance(packet_size, int) else packet_size
    return SeriesKey(
        test=test.name, deployment=test.deployment, packet_size=_mean_size(packet_size), metric=metric, frame_mix=mix,
        vswitch=_component(test, "vswitch")[0], vnf=_component(test, "vnf")[0],
        trafficgen=_component(test, "trafficgen")[0], testbed=testbed_name(run.settings),
        variant=str(variant) if variant else "",
    )


def _mean_size(packet_size: PacketSize) -> int:
    if isinstance(packet_size, int):
        return packet_size
    try:
        return round(parse_mix(packet_size).mean_bytes)
    except MixError:
        return 0


def numeric_metrics(metrics: Mapping[str, Any]) -> Iterable[tuple[str, float]]:
    """The metrics that are numbers (text, None and the row attributes are not)."""
    for key, value in metrics.items():
        number = as_number(value)
        if number is not None and key not in ROW_ATTRIBUTE_KEYS:
            yield key, number


def load_run_dir(results_dir: Path) -> tuple[RunResults, str]:
    """A run directory's results and the SHA-256 of its results.json; NotARunError otherwise."""
    path = results_file(results_dir)
    if not path.is_file():
        raise NotARunError(f"{results_dir} is not a vsperf run directory (no results.json in it)")
    try:
        results = load_results(path)
    except ConfigError as exc:
        raise NotARunError(str(exc)) from None
    return results, hashlib.sha256(path.read_bytes()).hexdigest()


def _insert(connection: Connection) -> Any:
    return postgresql.insert if connection.dialect.name == "postgresql" else sqlite.insert


def _series_ids(connection: Connection, keys: Iterable[SeriesKey], known: dict[str, int]) -> dict[str, int]:
    """Series ids by key, creating the series that are new (concurrent recorders agree);
    `known`: ids of series that exist for certain."""
    wanted = {k.key: k for k in keys}
    if wanted.keys() <= known.keys():
        return {key: known[key] for key in wanted}
    stmt = _insert(connection)(schema.series).on_conflict_do_nothing(index_elements=["key"])
    connection.execute(stmt, [{"key": key, **k.as_dict()} for key, k in wanted.items()])
    ids: dict[str, int] = {}
    chosen = list(wanted)
    for start in range(0, len(chosen), 500):  # bounded IN lists
        rows = connection.execute(select(schema.series.c.key, schema.series.c.series_id)
                                  .where(schema.series.c.key.in_(chosen[start:start + 500])))
        ids.update({row.key: row.series_id for row in rows})
    return ids


def _delete_run(connection: Connection, run_id: str) -> None:
    for table in (schema.measurements, schema.components, schema.tests, schema.tags, schema.runs):
        connection.execute(delete(table).where(table.c.run_id == run_id))


def record(store: Store, run: RunResults, results_dir: Path, digest: str) -> Recorded:
    """Record `run` (read from `results_dir`, whose results.json has SHA-256 `digest`) under its
    store id (`store_run_id`)."""
    started = parse_time(run.started_at) or datetime.now(UTC).replace(tzinfo=None)
    run = replace(run, run_id=store_run_id(run.run_id, started))
    with store.connect() as connection:
        if connection.dialect.name == "postgresql":  # one recorder per run id at a time
            connection.execute(text("SELECT pg_advisory_xact_lock(hashtext(:id))"), {"id": run.run_id})
        before = connection.execute(select(schema.runs.c.source_sha256)
                                    .where(schema.runs.c.run_id == run.run_id)).scalar_one_or_none()
        if before == digest:
            return Recorded(run.run_id, "unchanged", 0, 0)
        if before is not None:
            _delete_run(connection, run.run_id)
        recorded, ids = _write(connection, run, results_dir, digest, "updated" if before is not None else "recorded",
                               store.series_ids)
    store.series_ids.update(ids)  # committed: they exist
    return recorded


def _write(connection: Connection, run: RunResults, results_dir: Path, digest: str, action: str,
           known: dict[str, int]) -> tuple[Recorded, dict[str, int]]:
    started = parse_time(run.started_at) or datetime.now(UTC).replace(tzinfo=None)
    report = REPORT_FILE if (results_dir / REPORT_FILE).is_file() else None
    connection.execute(insert(schema.runs).values(
        run_id=run.run_id, started_at=started, finished_at=parse_time(run.finished_at), status=run.status,
        vsperf_version=run.vsperf_version, vsperf_commit=run.environment.get("vsperf_git_commit"),
        command_line=json.dumps(list(run.command_line)), simulated=run.simulated,
        hostname=str(run.environment.get("hostname") or ""), testbed=testbed_name(run.settings),
        results_dir=str(results_dir.resolve()), report=report,
        environment=json.dumps(run.environment, sort_keys=True, default=str), source_sha256=digest,
        recorded_at=datetime.now(UTC).replace(tzinfo=None),
    ))
    tags = {str(k): str(v) for k, v in dict(run.settings.get("HISTORY_TAGS") or {}).items()}
    if tags:
        connection.execute(insert(schema.tags), [{"run_id": run.run_id, "key": k, "value": v} for k, v in tags.items()])
    test_rows, component_rows, values = [], [], []
    for test in run.tests:
        vswitch, vswitch_version = _component(test, "vswitch")
        test_rows.append({
            "run_id": run.run_id, "test_index": test.index, "name": test.name, "deployment": test.deployment,
            "traffic_type": test.traffic_type, "status": test.status, "error": test.error,
            "started_at": parse_time(test.started_at) or started, "finished_at": parse_time(test.finished_at),
            "vswitch": vswitch, "vswitch_version": vswitch_version,
        })
        component_rows += [{"run_id": run.run_id, "test_index": test.index, "position": i, "role": c.role,
                            "name": c.name, "version": c.version} for i, c in enumerate(test.components)]
        for result in test.results:
            for metric, number in numeric_metrics(result.metrics):
                values.append((test.index, series_key(run, test, result.packet_size, metric), number))
    if test_rows:
        connection.execute(insert(schema.tests), test_rows)
    if component_rows:
        connection.execute(insert(schema.components), component_rows)
    ids = _series_ids(connection, (key for _i, key, _v in values), known)
    # A test measured twice at one frame size (repeated sizes in TRAFFICGEN_PKT_SIZES): the last counts.
    rows = {(index, ids[key.key]): number for index, key, number in values}
    if rows:
        connection.execute(insert(schema.measurements), [
            {"run_id": run.run_id, "test_index": index, "series_id": sid, "started_at": started, "value": number}
            for (index, sid), number in rows.items()])
    return Recorded(run.run_id, action, len(test_rows), len(rows)), ids


def record_dir(store: Store, results_dir: Path) -> Recorded:
    """Record the run in `results_dir` (NotARunError when it holds none)."""
    run, digest = load_run_dir(results_dir)
    return record(store, run, results_dir, digest)
