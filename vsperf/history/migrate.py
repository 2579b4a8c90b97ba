"""Bring a store's schema to this vsperf's head revision with Alembic, or refuse a newer one.

The migrations ship inside the package (vsperf/history/migrations); vsperf runs them on the
connection it opened, in one transaction, with the store locked so that eight runs opening a new
store at once create it once.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import Connection, text

from vsperf.errors import UserError

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# pg_advisory_xact_lock key of schema changes ("vsperf" in ASCII).
_PG_MIGRATION_LOCK = 0x767370657266


class SchemaError(UserError):
    """The store's schema is newer than this vsperf, or its revision is unknown."""


def _config(connection: Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str:
    """The revision this vsperf's schema.py describes."""
    head = ScriptDirectory.from_config(_config()).get_current_head()
    if head is None:  # pragma: no cover - the package always ships migrations
        raise SchemaError("vsperf's results store migrations are missing: reinstall vsperf")
    return head


def current_revision(connection: Connection) -> str | None:
    """The store's revision (None: an empty database)."""
    return MigrationContext.configure(connection).get_current_revision()


def known(revision: str) -> bool:
    """Whether this vsperf has `revision` among its migrations."""
    try:
        return ScriptDirectory.from_config(_config()).get_revision(revision) is not None
    except CommandError:
        return False


def check_not_newer(revision: str | None, where: str) -> None:
    """Raise SchemaError when `revision` is not one of this vsperf's (a newer vsperf wrote it)."""
    if revision is not None and not known(revision):
        raise SchemaError(f"results store {where} has schema revision {revision!r}, newer than this vsperf "
                          f"knows (up to {head_revision()!r}): upgrade vsperf to use it")


def upgrade(connection: Connection, where: str) -> str | None:
    """Upgrade the store to the head revision inside the connection's transaction; returns the
    revision it had before (None: it was empty). Raises SchemaError for a newer store."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK})
    before = current_revision(connection)
    check_not_newer(before, where)
    if before != head_revision():
        command.upgrade(_config(connection), "head")
    return before
