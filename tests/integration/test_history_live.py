"""Real runs of the simulated DUT (`--trafficgen dummy`, no root) recorded as they run: tags and
CI variables, a broken store that costs one warning and not the exit code, an interrupted run
that keeps what it measured, and a PostgreSQL password that appears in no file of the run."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from cli_helpers import command, environment
from pg_server import pg_skip_reason, private_postgres

from vsperf.history.db import open_store, parse_url
from vsperf.history.query import find_run, list_runs, run_results

PARAMS = "TRAFFICGEN_PKT_SIZES=(64,);TRAFFICGEN_DURATION=1"


def _run(tmp_path: Path, *args: str, env: dict[str, str] | None = None,
         db: str = "") -> subprocess.CompletedProcess[str]:
    params = f"{PARAMS};LOG_DIR='{tmp_path}'" + (f";HISTORY_DB='{db}'" if db else "")
    return subprocess.run(command(*args, "--trafficgen", "dummy", "--test-params", params, "--report-format", "html"),
                          capture_output=True, text=True, timeout=300, env={**environment(), **(env or {})})


def _runs(url: str) -> list[tuple[str, str, int]]:
    with open_store(parse_url(url, "/x"), create=False) as store, store.connect() as c:
        return [(r.run_id, r.status, r.tests) for r in list_runs(c)]


def test_a_run_is_recorded_with_its_tags_and_ci_variables(tmp_path: Path) -> None:
    done = _run(tmp_path, "phy2phy_tput", "back2back", "--results-dir", str(tmp_path / "run"), "--tag", "lab=rack3",
                env={"CI_PIPELINE_ID": "812", "CI_COMMIT_SHA": "c0ffee"})
    assert done.returncode == 0, done.stderr
    assert "not recorded" not in done.stderr
    store = str(tmp_path / "vsperf-history.sqlite")
    [(run_id, status, tests)] = _runs(store)
    assert (status, tests) == ("finished", 2)
    with open_store(parse_url(store, "/x")) as opened, opened.connect() as c:
        run = find_run(c, run_id)
        results = run_results(c, run_id)
    assert run.tags == {"lab": "rack3", "ci.pipeline": "812", "ci.commit": "c0ffee"}
    assert run.report == "report.html" and run.results_dir == tmp_path / "run"
    assert results.tests[0].results[0].metrics["throughput_rx_fps"] > 0
    assert results.tests[1].results[0].metrics["b2b_frames"] > 0


def test_a_broken_store_costs_one_warning_not_the_run(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes(b"no database here " * 500)
    done = _run(tmp_path, "phy2phy_tput", "back2back", "--results-dir", str(tmp_path / "run"), db=str(damaged))
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "not recorded in the results store" in line]
    assert len(warnings) == 1 and f"vsperf history import {tmp_path / 'run'}" in warnings[0]
    assert (tmp_path / "run" / "results.json").is_file()
    filled = subprocess.run(command("history", "import", str(tmp_path / "run"), "--db", str(tmp_path / "good.db")),
                            capture_output=True, text=True, env=environment(), timeout=120)
    assert filled.returncode == 0 and "import: 1 recorded" in filled.stdout
    assert _runs(str(tmp_path / "good.db"))[0][1:] == ("finished", 2)


def test_an_interrupted_run_keeps_what_it_measured(tmp_path: Path) -> None:
    store = str(tmp_path / "vsperf-history.sqlite")
    params = f"TRAFFICGEN_PKT_SIZES=(64,128,256,512,1024,1280,1518);TRAFFICGEN_DURATION=1;LOG_DIR='{tmp_path}'"
    names = ("phy2phy_tput", "back2back") * 6  # far more than the run reaches before the signal, even a fast one
    process = subprocess.Popen(command(*names, "--trafficgen", "dummy", "--test-params", params,
                                       "--results-dir", str(tmp_path / "run"), "--report-format", "rst"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment())
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            if Path(store).exists() and any(tests >= 1 for _id, _s, tests in _runs(store)):
                break
            time.sleep(0.2)
        assert process.poll() is None, "the run ended before it could be interrupted"
        process.send_signal(signal.SIGTERM)
        _out, err = process.communicate(timeout=120)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 1, err
    [(_run_id, status, tests)] = _runs(store)
    assert status == "interrupted" and 1 <= tests < len(names)


@pytest.mark.skipif(pg_skip_reason() is not None, reason=str(pg_skip_reason()))
def test_a_postgresql_password_reaches_no_file_of_the_run(tmp_path: Path) -> None:
    with private_postgres() as server:
        url = server.create_database("live")
        done = _run(tmp_path, "phy2phy_tput", "--results-dir", str(tmp_path / "run"), db=url,
                    env={"PGPASSWORD": server.password})
        assert done.returncode == 0, done.stderr
        os.environ["PGPASSWORD"] = server.password
        try:
            assert [status for _id, status, _t in _runs(url)] == ["finished"]
        finally:
            del os.environ["PGPASSWORD"]
    files = [p for p in (tmp_path / "run").rglob("*") if p.is_file()]
    assert {"results.json", "overall.log", "commands.log"} <= {p.name for p in files}
    for path in files:
        assert server.password.encode() not in path.read_bytes(), path
    assert server.password not in done.stdout + done.stderr
