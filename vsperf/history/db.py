"""Where the results store is (HISTORY_DB) and opening it: one-line errors, never a password.

HISTORY_DB is an SQLAlchemy URL (`sqlite:///FILE`, `postgresql://USER@HOST:PORT/DB`), a plain
path (an SQLite file), or empty: the SQLite file LOG_DIR/vsperf-history.sqlite. A password never
goes into HISTORY_DB (results.json and the logs would carry it): PostgreSQL's own PGPASSWORD or
~/.pgpass (PGPASSFILE) hold it, as for psql.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError

from vsperf.errors import UserError
from vsperf.history.migrate import upgrade

DEFAULT_SQLITE_NAME = "vsperf-history.sqlite"
SQLITE_BUSY_TIMEOUT_S = 60.0  # how long a writer waits for another one's transaction
PG_CONNECT_TIMEOUT_S = 10


class StoreError(UserError):
    """The results store cannot be opened or used: one line naming it (password hidden) and the fix."""


def parse_url(history_db: str, log_dir: str | Path) -> URL:
    """HISTORY_DB as a URL (see the module doc); raises StoreError for a form vsperf cannot use."""
    text = history_db.strip()
    if not text:
        return URL.create("sqlite", database=str(Path(log_dir).expanduser() / DEFAULT_SQLITE_NAME))
    if "://" not in text:
        return URL.create("sqlite", database=str(Path(text).expanduser()))
    try:
        url = make_url(text)
    except (ArgumentError, ValueError):
        raise StoreError("HISTORY_DB is not a database URL: write sqlite:///FILE or "
                         "postgresql://USER@HOST:PORT/DB") from None
    backend = url.get_backend_name()
    if backend == "postgresql":
        url = url.set(drivername="postgresql+psycopg")
    elif backend != "sqlite":
        raise StoreError(f"HISTORY_DB {shown(url)}: {backend} is not supported; use sqlite:///FILE or "
                         f"postgresql://USER@HOST:PORT/DB")
    if url.password is not None:
        raise StoreError("HISTORY_DB holds a password: leave it out of the URL and put it in PGPASSWORD or "
                         "~/.pgpass, so that it never reaches results.json or a log")
    return url


def shown(url: URL) -> str:
    """The URL as it may be printed (a password, had one slipped in, as ***)."""
    return url.render_as_string(hide_password=True)


def _sqlite_engine(url: URL, create: bool) -> Engine:
    path = Path(url.database or "")
    if not url.database or url.database == ":memory:":
        raise StoreError("HISTORY_DB: an in-memory SQLite store keeps nothing; name a file")
    if not path.exists():
        if not create:
            raise StoreError(f"no results store at {path}: record a run first, or vsperf history import DIR...")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the results store's folder {path.parent}: {exc.strerror}") from None
    engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})

    # pysqlite's own transaction handling defers BEGIN; vsperf takes the write lock at BEGIN
    # (IMMEDIATE) so that concurrent recorders queue instead of failing on a lock upgrade.
    # Write-ahead log: readers (the dashboard) never wait for a recorder, and a commit does not
    # sync the whole file (synchronous=NORMAL: a power cut may lose the newest commit, never
    # corrupt the store; the run directory keeps everything anyway).
    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        dbapi_connection.execute("PRAGMA foreign_keys = ON")
        dbapi_connection.execute("PRAGMA journal_mode = WAL")
        dbapi_connection.execute("PRAGMA synchronous = NORMAL")

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _problem(exc: BaseException) -> str:
    """The first line of a driver's message (psycopg's names the server and the reason)."""
    original = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(original).splitlines() if line.strip()]
    return lines[0] if lines else type(original).__name__


def explain(exc: BaseException, url: URL) -> StoreError:
    """A database error as one line naming the store and, where known, the fix."""
    problem = _problem(exc)
    where = shown(url)
    low = problem.lower()
    if "file is not a database" in low or "malformed" in low:
        return StoreError(f"results store {where} is not a usable SQLite database ({problem}): move it away; "
                          f"vsperf history import DIR... rebuilds it from the run directories")
    if "password authentication failed" in low or "no password supplied" in low:
        return StoreError(f"results store {where}: {problem}: set the password in PGPASSWORD or ~/.pgpass")
    if "unable to open database file" in low:
        return StoreError(f"results store {where}: cannot open the file (check the folder and its permissions)")
    if "database is locked" in low:
        return StoreError(f"results store {where} stayed locked for {SQLITE_BUSY_TIMEOUT_S:g} s by another "
                          f"process: try again")
    return StoreError(f"results store {where}: {problem}")


@dataclass
class Store:
    """An open results store; `connect()` gives a transaction (committed on success)."""

    engine: Engine
    url: URL
    # Series key -> id of the series known to exist (ids never change): recording a run then
    # writes only its new series. Filled after commits only (vsperf.history.recorder).
    series_ids: dict[str, int] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return shown(self.url)

    @contextlib.contextmanager
    def connect(self) -> Iterator[Connection]:
        """One transaction: committed when the block ends, rolled back on any error (a killed
        process leaves nothing half-written). Database errors become StoreError."""
        try:
            with self.engine.begin() as connection:
                yield connection
        except StoreError:
            raise
        except (DBAPIError, SQLAlchemyError) as exc:
            raise explain(exc, self.url) from None

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_store(url: URL, *, create: bool = True) -> Store:
    """Connect to the store at `url` and bring its schema up to date (creating it if `create`).

    Raises StoreError (unreachable server, wrong password, damaged file, no store where one is
    needed) or migrate.SchemaError (a store of a newer vsperf)."""
    try:
        if url.get_backend_name() == "sqlite":
            engine = _sqlite_engine(url, create)
        else:
            engine = create_engine(url, connect_args={"connect_timeout": PG_CONNECT_TIMEOUT_S},
                                   pool_pre_ping=True)
    except NoSuchModuleError as exc:
        raise StoreError(f"results store {shown(url)}: no driver ({exc}); reinstall vsperf") from None
    store = Store(engine, url)
    try:
        with store.connect() as connection:
            upgrade(connection, store.where)
    except BaseException:
        store.close()
        raise
    return store
