"""vsperf history / trend / dashboard on the command line: output, exit codes, bad input."""

from __future__ import annotations

import json
import socket
from datetime import timedelta
from pathlib import Path

import pytest
from history_runs import START, write_run, write_series
from sqlalchemy import create_engine, text

from vsperf.cli.main import main


def _vsperf(*args: str) -> int:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    return int(exc.value.code or 0)


@pytest.fixture()
def stepped(tmp_path: Path) -> Path:
    """30 runs of phy2phy_tput at 1 Mfps (±0.5 %), then 4 at 0.9 Mfps; 1518 B stays flat."""
    levels = [1e6 * (1 + 0.005 * ((i * 7) % 5 - 2) / 2) for i in range(30)] + [0.9e6 + 500 * i for i in range(4)]
    for i, value in enumerate(levels):
        write_run(tmp_path / "runs", run_id=f"r{i:03d}", started=START + timedelta(hours=i),
                  throughput={("phy2phy_tput", 64): value, ("phy2phy_tput", 1518): 8e5 + (i % 3)},
                  tags={"lab": "rack3"})
    return tmp_path


def _db(folder: Path) -> list[str]:
    return ["--db", str(folder / "h.sqlite")]


def test_import_list_show(stepped: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _vsperf("history", "import", str(stepped / "runs"), *_db(stepped)) == 0
    out = capsys.readouterr().out
    assert out.count("recorded ") == 34 and "import: 34 recorded, 0 updated, 0 unchanged into sqlite:///" in out
    assert _vsperf("history", "import", str(stepped / "runs" / "results_r000"), *_db(stepped)) == 0
    assert "import: 0 recorded, 0 updated, 1 unchanged" in capsys.readouterr().out
    assert _vsperf("history", "list", "-n", "2", *_db(stepped)) == 0
    out = capsys.readouterr().out
    assert "-r033 " in out and "-r032 " in out and "-r031" not in out and "lab=rack3" in out
    assert _vsperf("history", "show", "r005", *_db(stepped)) == 0
    out = capsys.readouterr().out
    assert "status:     finished" in out and "phy2phy_tput (p2p) passed" in out and "tag:        lab=rack3" in out


def test_trend_and_its_gate(stepped: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _vsperf("history", "import", str(stepped / "runs"), *_db(stepped))
    capsys.readouterr()
    assert _vsperf("trend", "--metric", "throughput_rx_fps", *_db(stepped)) == 0
    out = capsys.readouterr().out
    lines = {line.split()[2]: line for line in out.splitlines() if line.startswith("phy2phy_tput")}
    assert "REGRESSION" in lines["64"] and "-9.9" in lines["64"] and "normal" in lines["1518"]
    assert "2 series; 1 with a regression in the newest run" in out
    json_path = stepped / "trend.json"
    assert _vsperf("trend", "--gate", "--json", str(json_path), "--metric", "throughput_rx_fps", *_db(stepped)) == 1
    captured = capsys.readouterr()
    assert "GATE: phy2phy_tput p2p 64 B throughput_rx_fps" in captured.err and "regression (-9.9" in captured.err
    assert json.loads(json_path.read_text())["regressions"] == 1
    assert _vsperf("trend", "--gate", "--size", "1518", "--metric", "throughput_rx_fps", *_db(stepped)) == 0
    # Only the old runs: no regression among them.
    assert _vsperf("trend", "--gate", "--tag", "lab=rack3", "--size", "64", "--metric", "throughput_rx_fps",
                   "--last", "20", *_db(stepped)) == 1


def test_export_to_a_file(stepped: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _vsperf("history", "import", str(stepped / "runs"), *_db(stepped))
    out = stepped / "all.csv"
    assert _vsperf("history", "export", "--size", "64", "--metric", "throughput_rx_fps", "-o", str(out),
                   *_db(stepped)) == 0
    assert "export: 34 rows to" in capsys.readouterr().err
    assert len(out.read_text().splitlines()) == 35


def test_dashboard_writes_a_site(stepped: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _vsperf("history", "import", str(stepped / "runs"), *_db(stepped))
    assert _vsperf("dashboard", "--out", str(stepped / "site"), *_db(stepped)) == 0
    # HISTORY_METRICS: throughput, latency and loss (no b2b_frames in these runs) at two frame sizes
    assert "dashboard: 6 series, 34 runs" in capsys.readouterr().out
    assert (stepped / "site" / "index.html").is_file() and (stepped / "site" / "assets" / "plotly.min.js").is_file()
    assert _vsperf("dashboard", *_db(stepped)) == 2
    assert "give --out DIR (a static site) or --serve" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("vsperf: error: "), err
    assert "Traceback" not in err
    return err


def test_bad_stores_are_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _vsperf("trend", "--db", "mysql://lab@db/vsperf") == 2
    assert "mysql is not supported" in _one_error_line(capsys)
    assert _vsperf("trend", "--db", f"postgresql://lab@127.0.0.1:{_free_port()}/vsperf") == 2
    assert "Connection refused" in _one_error_line(capsys)
    assert _vsperf("history", "list", "--db", "postgresql://lab:hunter2@127.0.0.1/vsperf") == 2
    line = _one_error_line(capsys)
    assert "hunter2" not in line and "PGPASSWORD" in line
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes(b"garbage " * 1000)
    assert _vsperf("history", "import", str(tmp_path), "--db", str(damaged)) == 2
    assert "not a usable SQLite database" in _one_error_line(capsys)
    assert _vsperf("trend", "--db", str(tmp_path / "none.sqlite")) == 2
    assert "no results store at" in _one_error_line(capsys)


def test_a_newer_store_and_a_folder_that_is_no_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_series(tmp_path / "runs", [1e6])[0]
    assert _vsperf("history", "import", str(run), *_db(tmp_path)) == 0
    engine = create_engine(f"sqlite:///{tmp_path / 'h.sqlite'}")
    with engine.begin() as c:
        c.execute(text("UPDATE alembic_version SET version_num = '0099'"))
    engine.dispose()
    capsys.readouterr()
    assert _vsperf("history", "list", *_db(tmp_path)) == 2
    assert "newer than this vsperf knows" in _one_error_line(capsys)
    (tmp_path / "plain").mkdir()
    assert _vsperf("history", "import", str(tmp_path / "plain"), "--db", str(tmp_path / "other.sqlite")) == 2
    err = capsys.readouterr().err
    assert f"vsperf: error: {tmp_path / 'plain'} is not a vsperf run directory" in err


def test_no_matching_series_is_a_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_series(tmp_path / "runs", [1e6, 1e6])
    _vsperf("history", "import", str(tmp_path / "runs"), *_db(tmp_path))
    capsys.readouterr()
    assert _vsperf("trend", "--test", "pvp_tput", *_db(tmp_path)) == 2
    assert "no series in" in _one_error_line(capsys)
    assert _vsperf("trend", "--size", "big", *_db(tmp_path)) == 2
    assert "--size 'big'" in _one_error_line(capsys)


def test_a_malformed_tag_stops_the_run_before_it_starts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _vsperf("phy2phy_tput", "--trafficgen", "dummy", "--tag", "no value", "--results-dir",
                   str(tmp_path / "run")) == 2
    assert "--tag 'no value': write KEY=VALUE" in _one_error_line(capsys)
    assert not (tmp_path / "run").exists()
