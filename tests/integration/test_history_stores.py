"""The results store on SQLite and on a private PostgreSQL server, the same tests on both:
recording, eight concurrent recorders, a recorder killed mid-transaction, schema upgrades, and
the command line's one-line errors (wrong password, newer schema)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))  # the history tests' run directories

from alembic import command
from history_runs import START, write_run
from pg_server import PgServer, pg_skip_reason, private_postgres
from sqlalchemy import create_engine, func, select, text

from vsperf.history import schema
from vsperf.history.db import Store, open_store, parse_url
from vsperf.history.migrate import SchemaError, _config, head_revision
from vsperf.history.query import find_run
from vsperf.history.recorder import record_dir

VSPERF = Path(sys.executable).with_name("vsperf")
_counter = iter(range(10_000))


@pytest.fixture(scope="module")
def postgres() -> Iterator[PgServer]:
    reason = pg_skip_reason()
    if reason:
        pytest.skip(reason)
    with private_postgres() as server:
        yield server


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """HISTORY_DB of a new, empty store (PGPASSWORD set for PostgreSQL)."""
    if request.param == "sqlite":
        return str(tmp_path / "history.sqlite")
    server: PgServer = request.getfixturevalue("postgres")
    monkeypatch.setenv("PGPASSWORD", server.password)
    return server.create_database(f"t{os.getpid()}_{next(_counter)}")


def _store(url: str) -> Store:
    return open_store(parse_url(url, "/nonexistent"))


def _counts(url: str) -> list[int]:
    with _store(url) as store, store.connect() as c:
        return [int(c.execute(select(func.count()).select_from(t)).scalar_one())
                for t in (schema.runs, schema.tests, schema.measurements, schema.series, schema.tags)]


def test_recording_is_idempotent(backend: str, tmp_path: Path) -> None:
    run = write_run(tmp_path, run_id="abc123", started=START, tags={"lab": "rack3"},
                    throughput={("phy2phy_tput", 64): 1e6, ("phy2phy_tput", 1518): 8e5})
    with _store(backend) as store:
        assert [record_dir(store, run).action for _ in range(3)] == ["recorded", "unchanged", "unchanged"]
        write_run(tmp_path, run_id="abc123", started=START, tags={"lab": "rack4"},
                  throughput={("phy2phy_tput", 64): 9e5, ("phy2phy_tput", 1518): 8e5})
        assert record_dir(store, run).action == "updated"
        with store.connect() as c:
            assert find_run(c, "abc123").tags == {"lab": "rack4"}
    assert _counts(backend) == [1, 1, 12, 12, 1]


_RECORDER = """
import sys, time
from pathlib import Path
from vsperf.history.db import open_store, parse_url
from vsperf.history.importer import import_dirs
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.01)
with open_store(parse_url(sys.argv[1], "/nonexistent")) as store:
    report = import_dirs(store, [Path(p) for p in sys.argv[3:]])
print(report.summary())
sys.exit(1 if report.problems else 0)
"""


def test_eight_concurrent_recorders_lose_and_duplicate_nothing(backend: str, tmp_path: Path) -> None:
    shared = [write_run(tmp_path / "shared", run_id=f"s{i}", started=START + timedelta(minutes=i),
                        throughput={("phy2phy_tput", 64): 1e6 + i}) for i in range(4)]
    own = {w: [write_run(tmp_path / f"w{w}", run_id=f"w{w}r{i}", started=START + timedelta(hours=w, minutes=i),
                         throughput={("phy2phy_tput", 64): 1e6, (f"test_of_worker_{w}", 64): 5e5})
               for i in range(6)] for w in range(8)}
    go = tmp_path / "go"
    workers = [subprocess.Popen([sys.executable, "-c", _RECORDER, backend, str(go), *map(str, own[w] + shared)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in range(8)]
    try:
        time.sleep(1.0)  # all started and waiting: they open the new store at the same moment
        go.write_text("go")
        outputs = [w.communicate(timeout=300) for w in workers]
    finally:
        for w in workers:
            w.kill()
            w.wait()
    assert [w.returncode for w in workers] == [0] * 8, outputs
    summaries = [out.strip() for out, _err in outputs]
    recorded = sum(int(s.split()[1]) for s in summaries)
    assert recorded == 8 * 6 + 4  # each shared run recorded by exactly one worker; the others found it unchanged
    runs, tests, values, series, _tags = _counts(backend)
    assert (runs, tests) == (8 * 6 + 4, 8 * 6 * 2 + 4)
    assert values == (8 * 6 * 2 + 4) * 6  # six numeric metrics per test and frame size
    assert series == (1 + 8) * 6  # phy2phy_tput and one test per worker, six metrics each


_KILLED = """
import sys, time
from pathlib import Path
import vsperf.history.recorder as recorder
from vsperf.history.db import open_store, parse_url
real = recorder._series_ids
def slow(*args):
    ids = real(*args)
    Path(sys.argv[2]).write_text("in the transaction")
    time.sleep(120)
    return ids
recorder._series_ids = slow
with open_store(parse_url(sys.argv[1], "/nonexistent")) as store:
    recorder.record_dir(store, Path(sys.argv[3]))
"""


def test_a_recorder_killed_mid_transaction_leaves_no_half_run(backend: str, tmp_path: Path) -> None:
    run = write_run(tmp_path, run_id="abc123", started=START, throughput={("phy2phy_tput", 64): 1e6})
    ready = tmp_path / "ready"
    child = subprocess.Popen([sys.executable, "-c", _KILLED, backend, str(ready), str(run)])
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.exists(), "the recorder never reached its transaction"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    assert _counts(backend) == [0, 0, 0, 0, 0]
    with _store(backend) as store:
        assert record_dir(store, run).action == "recorded"


def test_an_older_store_is_upgraded_and_a_newer_one_refused(backend: str, tmp_path: Path) -> None:
    url = parse_url(backend, "/nonexistent")
    engine = create_engine(url)
    with engine.begin() as connection:
        command.upgrade(_config(connection), "0001")
    engine.dispose()
    run = write_run(tmp_path, run_id="abc123", started=START, throughput={("phy2phy_tput", 64): 1e6})
    with _store(backend) as store:
        assert record_dir(store, run).action == "recorded"
        with store.connect() as c:
            assert c.execute(text("SELECT version_num FROM alembic_version")).scalar_one() == head_revision()
            c.execute(text("UPDATE alembic_version SET version_num = '0077'"))
    with pytest.raises(SchemaError, match="'0077', newer than this vsperf knows"):
        _store(backend)


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(VSPERF), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_the_command_line_on_both_stores(backend: str, tmp_path: Path) -> None:
    for i in range(3):
        write_run(tmp_path / "runs", run_id=f"r{i}", started=START + timedelta(days=i),
                  throughput={("phy2phy_tput", 64): 1e6})
    done = _cli("history", "import", str(tmp_path / "runs"), "--db", backend)
    assert done.returncode == 0 and "import: 3 recorded, 0 updated, 0 unchanged" in done.stdout
    done = _cli("trend", "--gate", "--db", backend)
    assert done.returncode == 0 and "phy2phy_tput p2p 64 B throughput_rx_fps" in done.stdout


def test_a_wrong_password_is_one_line_and_exit_2(postgres: PgServer, tmp_path: Path) -> None:
    url = postgres.create_database(f"t{os.getpid()}_{next(_counter)}")
    done = _cli("trend", "--db", url, env={"PGPASSWORD": "not-the-password"})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert 'password authentication failed for user "vsperf_test"' in done.stderr
    assert "not-the-password" not in done.stderr and "PGPASSWORD or ~/.pgpass" in done.stderr
    done = _cli("trend", "--db", postgres.url("no_such_db"), env={"PGPASSWORD": postgres.password})
    assert done.returncode == 2 and 'database "no_such_db" does not exist' in done.stderr
