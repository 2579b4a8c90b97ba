"""vsperf.history.db: HISTORY_DB as a URL, opening a store, and its one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from vsperf.history.db import DEFAULT_SQLITE_NAME, StoreError, open_store, parse_url
from vsperf.history.migrate import SchemaError, head_revision


def test_empty_is_the_sqlite_file_under_log_dir(tmp_path: Path) -> None:
    url = parse_url("", tmp_path)
    assert url.get_backend_name() == "sqlite"
    assert url.database == str(tmp_path / DEFAULT_SQLITE_NAME)


def test_a_plain_path_and_a_sqlite_url_are_files(tmp_path: Path) -> None:
    assert parse_url(str(tmp_path / "a.db"), "/x").database == str(tmp_path / "a.db")
    assert parse_url(f"sqlite:///{tmp_path}/b.db", "/x").database == f"{tmp_path}/b.db"


def test_postgresql_uses_psycopg_3() -> None:
    url = parse_url("postgresql://lab@db.example:5433/vsperf", "/x")
    assert url.drivername == "postgresql+psycopg"
    assert (url.host, url.port, url.database, url.username) == ("db.example", 5433, "vsperf", "lab")


def test_a_password_in_the_url_is_refused_without_echoing_it() -> None:
    with pytest.raises(StoreError) as caught:
        parse_url("postgresql://lab:s3cr3t-pw@db.example/vsperf", "/x")
    assert "s3cr3t-pw" not in str(caught.value)
    assert "PGPASSWORD" in str(caught.value)


@pytest.mark.parametrize("value, words", [
    ("mysql://lab@db/vsperf", "mysql is not supported"),
    ("post gres://x", "not a database URL"),
    ("postgresql://lab@db:port/vsperf", "not a database URL"),
])
def test_unusable_urls_say_what_works(value: str, words: str) -> None:
    with pytest.raises(StoreError, match=words):
        parse_url(value, "/x")


def test_open_creates_the_store_at_the_head_revision(tmp_path: Path) -> None:
    with open_store(parse_url(str(tmp_path / "deep" / "h.sqlite"), "/x")) as store, store.connect() as c:
        assert c.execute(text("SELECT version_num FROM alembic_version")).scalar_one() == head_revision()
    assert (tmp_path / "deep" / "h.sqlite").is_file()


def test_a_missing_store_is_not_created_when_only_read(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"no results store at .*vsperf history import"):
        open_store(parse_url(str(tmp_path / "none.sqlite"), "/x"), create=False)
    assert not (tmp_path / "none.sqlite").exists()


def test_a_damaged_sqlite_file_is_one_line_naming_the_fix(tmp_path: Path) -> None:
    damaged = tmp_path / "h.sqlite"
    damaged.write_bytes(b"this is no database, just text that fills a page " * 100)
    with pytest.raises(StoreError) as caught:
        open_store(parse_url(str(damaged), "/x"))
    message = str(caught.value)
    assert "\n" not in message
    assert "not a usable SQLite database" in message and "history import" in message


def test_a_store_of_a_newer_vsperf_is_refused(tmp_path: Path) -> None:
    url = parse_url(str(tmp_path / "h.sqlite"), "/x")
    with open_store(url) as store, store.connect() as c:
        c.execute(text("UPDATE alembic_version SET version_num = '9999_future'"))
    with pytest.raises(SchemaError, match="schema revision '9999_future', newer than this vsperf knows"):
        open_store(url)


def test_a_transaction_is_rolled_back_on_error(tmp_path: Path) -> None:
    with open_store(parse_url(str(tmp_path / "h.sqlite"), "/x")) as store:
        with pytest.raises(RuntimeError), store.connect() as c:
            c.execute(text("INSERT INTO series (key, test, deployment, packet_size, metric, vswitch, vnf, trafficgen, "
                           "testbed, variant) VALUES ('k', 't', 'p2p', 64, 'm', 'ovs', '', 'dummy', 'local', '')"))
            raise RuntimeError("killed")
        with store.connect() as c:
            assert c.execute(text("SELECT count(*) FROM series")).scalar_one() == 0
