"""A private PostgreSQL server for the results store's tests (Debian's `postgresql` package).

initdb into a temporary folder, its own port on 127.0.0.1 and its own socket folder, password
authentication over TCP; stopped by its PID and its folder removed, whatever the test did. As root
it runs as the `postgres` user (PostgreSQL refuses root), otherwise as the user running the tests.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg

USER = "vsperf_test"


def pg_bindir() -> Path | None:
    """The newest installed PostgreSQL's bin folder (None: not installed)."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name) if
                   p.parent.name.isdigit() else 0)
    for folder in reversed(found):
        if (folder / "initdb").is_file() and (folder / "postgres").is_file():
            return folder
    return None


def pg_skip_reason() -> str | None:
    if pg_bindir() is None:
        return "PostgreSQL missing: apt-get install postgresql (tools/setup.sh does)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "no postgres user to run PostgreSQL as (root may not): apt-get install postgresql"
    return None


@dataclass
class PgServer:
    port: int
    password: str
    process: subprocess.Popen[bytes]

    def url(self, database: str = "postgres") -> str:
        """A URL for HISTORY_DB: no password (it goes in PGPASSWORD)."""
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        with psycopg.connect(host="127.0.0.1", port=self.port, user=USER, password=self.password,
                             dbname="postgres", autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def private_postgres() -> Iterator[PgServer]:
    """Start a throwaway server; stop it by PID and remove its folder on the way out."""
    bindir = pg_bindir()
    assert bindir is not None
    owner = pwd.getpwnam("postgres") if os.geteuid() == 0 else None
    folder = Path(tempfile.mkdtemp(prefix="vsperf-pg-"))
    process: subprocess.Popen[bytes] | None = None
    ids = {"user": owner.pw_uid, "group": owner.pw_gid, "extra_groups": []} if owner else {}
    try:
        if owner:
            os.chown(folder, owner.pw_uid, owner.pw_gid)
        password = secrets.token_hex(12)
        pwfile = folder / "pw"
        pwfile.write_text(password + "\n")
        if owner:
            os.chown(pwfile, owner.pw_uid, owner.pw_gid)
        subprocess.run([str(bindir / "initdb"), "-D", str(folder / "data"), "-U", USER, f"--pwfile={pwfile}",
                        "--auth-host=scram-sha-256", "--auth-local=scram-sha-256", "-E", "UTF8", "--no-sync"],
                       check=True, capture_output=True, cwd=folder, **ids)  # type: ignore[call-overload]
        port = _free_port()
        log = (folder / "server.log").open("wb")
        process = subprocess.Popen(
            [str(bindir / "postgres"), "-D", str(folder / "data"), "-p", str(port), "-k", str(folder),
             "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
             "-c", "full_page_writes=off", "-c", "max_connections=60"],
            stdout=log, stderr=subprocess.STDOUT, cwd=folder, **ids)
        deadline = time.monotonic() + 60
        while True:
            try:
                psycopg.connect(host="127.0.0.1", port=port, user=USER, password=password, dbname="postgres",
                                connect_timeout=2).close()
                break
            except psycopg.OperationalError:
                if process.poll() is not None or time.monotonic() > deadline:
                    tail = (folder / "server.log").read_text()[-2000:]
                    raise RuntimeError(f"PostgreSQL did not start: {tail}") from None
                time.sleep(0.2)
        yield PgServer(port, password, process)
    finally:
        if process is not None:
            process.send_signal(signal.SIGINT)  # fast shutdown: ends every session
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(folder, ignore_errors=True)
