"""Bring a store's schema to this vsperf's head revision with Alembic, or refuse a newer one.

The migrations ship inside the package (vsperf/history/migrations); vsperf runs them on the
connection it opened, in one transaction, with the store locked so that eight runs opening a new
store at once create it once. A store already at HEAD_REVISION (every open but the first after an
upgrade of vsperf) is recognised without loading Alembic, whose import costs most of a second.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, inspect, text

from vsperf.errors import UserError

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
HEAD_REVISION = "0003"  # the newest of migrations/versions (tests/unit/test_history_migrate.py checks)
VERSION_TABLE = "alembic_version"
logging.getLogger("alembic").setLevel(logging.WARNING)  # its INFO lines ("setup plugin ...") are not the user's
# pg_advisory_xact_lock key of schema changes ("vsperf" in ASCII).
_PG_MIGRATION_LOCK = 0x767370657266


class SchemaError(UserError):
    """The store's schema is newer than this vsperf, or its revision is unknown."""


def _config(connection: Connection | None = None) -> Any:
    from alembic.config import Config  # Alembic only when a schema changes (see the module doc)

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def _scripts() -> Any:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_config())


def head_revision() -> str:
    """The newest revision among the shipped migrations (what schema.py describes)."""
    head = _scripts().get_current_head()
    if head is None:  # pragma: no cover - the package always ships migrations
        raise SchemaError("vsperf's results store migrations are missing: reinstall vsperf")
    return str(head)


def current_revision(connection: Connection) -> str | None:
    """The store's revision (None: an empty database)."""
    if not inspect(connection).has_table(VERSION_TABLE):
        return None
    found = connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars().first()
    return None if found is None else str(found)


def known(revision: str) -> bool:
    """Whether this vsperf has `revision` among its migrations."""
    from alembic.util.exc import CommandError

    try:
        return _scripts().get_revision(revision) is not None
    except CommandError:
        return False


def check_not_newer(revision: str | None, where: str) -> None:
    """Raise SchemaError when `revision` is not one of this vsperf's (a newer vsperf wrote it)."""
    if revision is not None and revision != HEAD_REVISION and not known(revision):
        raise SchemaError(f"results store {where} has schema revision {revision!r}, newer than this vsperf "
                          f"knows (up to {HEAD_REVISION!r}): upgrade vsperf to use it")


def upgrade(connection: Connection, where: str) -> str | None:
    """Upgrade the store to the head revision inside the connection's transaction; returns the
    revision it had before (None: it was empty). Raises SchemaError for a newer store."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK})
    before = current_revision(connection)
    if before == HEAD_REVISION:
        return before
    check_not_newer(before, where)
    from alembic import command

    command.upgrade(_config(connection), "head")
    return before
