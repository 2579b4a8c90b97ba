"""vsperf.history.dashboard.server: live pages on 127.0.0.1, any two runs compared, reports served."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from history_runs import START, write_run
from history_store import sqlite_store

from vsperf.errors import UserError
from vsperf.history.dashboard.server import DashboardServer, make_server
from vsperf.history.dashboard.site import SiteOptions
from vsperf.history.importer import import_dirs
from vsperf.history.query import Filters


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[DashboardServer]:
    for i in range(6):
        write_run(tmp_path / "runs", run_id=f"r{i}", started=START + timedelta(days=i),
                  throughput={("phy2phy_tput", 64): 1e6 if i < 4 else 8e5})
    (tmp_path / "secret.txt").write_text("outside every run directory")
    with sqlite_store(tmp_path) as store:
        import_dirs(store, [tmp_path / "runs"])
        running = make_server(store, SiteOptions(Filters(metrics=("throughput_rx_fps",))))
        thread = threading.Thread(target=running.serve_forever, daemon=True)
        thread.start()
        try:
            yield running
        finally:
            running.shutdown()
            running.server_close()
            thread.join(10)


def _get(server: DashboardServer, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(server.url.rstrip("/") + path, timeout=30) as answer:
            return answer.status, answer.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_it_binds_loopback_by_default(server: DashboardServer) -> None:
    assert server.server_address[0] == "127.0.0.1" and server.url.startswith("http://127.0.0.1:")


def test_pages(server: DashboardServer) -> None:
    status, index = _get(server, "/")
    assert status == 200 and "live from the results store" in index and 'badge regression' in index
    assert _get(server, "/series/s1.html")[0] == 200
    assert "report of r5" in _get(server, "/report/20260106T020000-r5/")[1]
    status, runs = _get(server, "/runs.html")
    assert status == 200 and runs.count("vs previous") == 5
    assert _get(server, "/assets/plotly.min.js")[0] == 200


def test_any_two_runs_compare_as_vsperf_compare(server: DashboardServer) -> None:
    status, page = _get(server, "/compare.html?a=r0&b=r5")  # follows the redirect to the runs' page
    assert status == 200 and "Run B against run A" in page
    assert "REGRESSION" in page and "-20.000 %" in page


def test_unknown_paths_and_runs_are_404_and_nothing_outside_a_run_is_served(server: DashboardServer) -> None:
    assert _get(server, "/nothing")[0] == 404
    assert _get(server, "/series/s999.html")[0] == 404
    assert _get(server, "/report/zzz/")[0] == 404
    assert _get(server, "/report/20260106T020000-r5/../../secret.txt")[0] == 404
    assert _get(server, "/report/20260106T020000-r5/%2e%2e/%2e%2e/secret.txt")[0] == 404
    assert _get(server, "/assets/../../etc/passwd")[0] == 404


def test_a_taken_port_is_a_user_error(server: DashboardServer) -> None:
    with pytest.raises(UserError, match=r"cannot listen on 127\.0\.0\.1"):
        make_server(server.store, server.options, "127.0.0.1", server.server_address[1])
