"""vsperf.history.migrate: an older store is upgraded (its runs kept), the migrations leave
exactly the schema vsperf.history.schema describes, a newer store is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, text

from vsperf.history import schema
from vsperf.history.db import open_store, parse_url
from vsperf.history.migrate import (
    HEAD_REVISION,
    SchemaError,
    _config,
    check_not_newer,
    current_revision,
    head_revision,
    known,
)
from vsperf.history.query import find_run


def _at_revision(path: Path, revision: str) -> None:
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as connection:
        command.upgrade(_config(connection), revision)
    engine.dispose()


def test_the_head_is_the_newest_shipped_migration() -> None:
    assert head_revision() == HEAD_REVISION == "0003"
    assert known("0001") and known("0002") and known("0003") and not known("0004")


def test_an_older_store_is_upgraded_and_keeps_its_runs(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    _at_revision(path, "0001")
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as c:
        c.execute(text("INSERT INTO runs (run_id, started_at, status, vsperf_version, command_line, simulated, "
                       "hostname, testbed, results_dir, environment, recorded_at) VALUES ('20260101T000000-abc123', "
                       "'2026-01-01 00:00:00', 'finished', '0.0.9', '[]', 1, 'lab1', 'local', '/r', '{}', "
                       "'2026-01-01 00:00:00')"))
    engine.dispose()
    with open_store(parse_url(str(path), "/x")) as store, store.connect() as c:
        assert current_revision(c) == head_revision()
        run = find_run(c, "abc123")
        assert (run.vsperf_version, run.hostname) == ("0.0.9", "lab1")
        assert c.execute(text("SELECT source_sha256 FROM runs")).scalar_one() == ""


def test_the_migrations_leave_the_schema_of_schema_py(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    _at_revision(path, "head")
    engine = create_engine(f"sqlite:///{path}")
    with engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), schema.metadata)
    engine.dispose()
    assert differences == []


def test_a_newer_revision_is_refused_naming_both() -> None:
    with pytest.raises(SchemaError, match=r"'0042'.*up to '0003'.*upgrade vsperf"):
        check_not_newer("0042", "sqlite:///x")
    check_not_newer(None, "sqlite:///x")
    check_not_newer("0001", "sqlite:///x")
