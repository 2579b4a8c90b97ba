"""`vsperf dashboard --serve`: the same pages, rendered live from the store for each request.

Binds 127.0.0.1 unless told otherwise. Besides the static site's pages it compares any two
runs (/compare.html?a=RUN&b=RUN) and serves each run's report from its results directory
(/report/RUN/, only files inside that directory).
"""

from __future__ import annotations

import mimetypes
import re
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

from vsperf.errors import UserError
from vsperf.history.dashboard.links import Links
from vsperf.history.dashboard.pages import (
    DetailsCache,
    SiteOptions,
    compare_page,
    index_page,
    index_row,
    recent_runs,
    runs_page,
    series_page,
    series_view,
)
from vsperf.history.dashboard.site import asset_path
from vsperf.history.db import Store
from vsperf.history.query import NoSuchRunError, find_run, list_series

_SERIES = re.compile(r"/series/s(\d+)\.html")
_COMPARE = re.compile(r"/compare/([^/]+)__([^/]+)\.html")
_REPORT = re.compile(r"/report/([^/]+)/(.*)")
LINKS_ROOT = "/"


class DashboardServer(ThreadingHTTPServer):
    """An HTTP server holding the store and the dashboard's options."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], store: Store, options: SiteOptions) -> None:
        super().__init__(address, _Handler)
        self.store = store
        self.options = options
        self.links = Links(LINKS_ROOT, served=True, report_url=options.report_url)
        self.lock = threading.Lock()  # one page rendered at a time: the store's connection pool stays small

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/"


class _Handler(BaseHTTPRequestHandler):
    server: DashboardServer

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: a dashboard's requests are not vsperf's log."""

    def do_GET(self) -> None:
        try:
            self._route(urlsplit(self.path))
        except NoSuchRunError as exc:
            self._send(HTTPStatus.NOT_FOUND, str(exc).encode(), "text/plain; charset=utf-8")
        except UserError as exc:
            self._send(HTTPStatus.SERVICE_UNAVAILABLE, str(exc).encode(), "text/plain; charset=utf-8")

    def _route(self, url: object) -> None:
        path = unquote(getattr(url, "path", "/"))
        query = parse_qs(getattr(url, "query", ""))
        if path in ("/", "/index.html"):
            return self._html(self._index())
        if path == "/runs.html":
            return self._html(self._runs())
        if path.startswith("/assets/"):
            try:
                file = asset_path(path.removeprefix("/assets/"))
            except FileNotFoundError:
                return self._not_found()
            return self._file(file)
        if path == "/compare.html" and query.get("a") and query.get("b"):
            with self.server.store.connect() as connection:
                a, b = (find_run(connection, query[k][0]).run_id for k in ("a", "b"))
            self.send_response(HTTPStatus.SEE_OTHER)
            self.send_header("Location", f"/compare/{quote(a)}__{quote(b)}.html")
            self.end_headers()
            return None
        if match := _SERIES.fullmatch(path):
            return self._series(int(match.group(1)))
        if match := _COMPARE.fullmatch(path):
            return self._compare(match.group(1), match.group(2))
        if match := _REPORT.fullmatch(path):
            return self._report(match.group(1), match.group(2) or "report.html")
        return self._not_found()

    def _index(self) -> str:
        options, links = self.server.options, self.server.links
        with self.server.lock, self.server.store.connect() as connection:
            cache, rows = DetailsCache(connection), []
            for series in list_series(connection, options.filters):
                view = series_view(connection, series, options, cache)
                if view.points:
                    rows.append(index_row(view.trend, cache.get([p.run_id for p in view.trend.points]), links))
            runs = len(recent_runs(connection, options.filters))
        return index_page(rows, links, served=True, runs=runs)

    def _runs(self) -> str:
        with self.server.lock, self.server.store.connect() as connection:
            runs = recent_runs(connection, self.server.options.filters)
        return runs_page(runs, self.server.links, set(), served=True)

    def _series(self, series_id: int) -> None:
        options = self.server.options
        with self.server.lock, self.server.store.connect() as connection:
            found = [s for s in list_series(connection, options.filters) if s.series_id == series_id]
            if not found:
                return self._not_found()
            page = series_page(series_view(connection, found[0], options, DetailsCache(connection)),
                               self.server.links, served=True)
        return self._html(page)

    def _compare(self, run_a: str, run_b: str) -> None:
        with self.server.lock, self.server.store.connect() as connection:
            a, b = find_run(connection, run_a).run_id, find_run(connection, run_b).run_id
            # The newest runs to choose from, and the two compared whatever their age.
            choices = list(dict.fromkeys([a, b, *(r.run_id for r in recent_runs(connection,
                                                                               self.server.options.filters, 200))]))
            page = compare_page(connection, a, b, self.server.links, self.server.options.compare_threshold_percent,
                                served=True, choices=choices)
        return self._html(page)

    def _report(self, run_id: str, name: str) -> None:
        with self.server.store.connect() as connection:
            run = find_run(connection, run_id)
        folder = run.results_dir.resolve()
        file = (folder / name).resolve()
        if not file.is_relative_to(folder) or not file.is_file():
            return self._not_found()
        return self._file(file)

    def _html(self, page: str) -> None:
        self._send(HTTPStatus.OK, page.encode("utf-8"), "text/html; charset=utf-8")

    def _file(self, file: Path) -> None:
        kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        self._send(HTTPStatus.OK, file.read_bytes(), kind)

    def _not_found(self) -> None:
        self._send(HTTPStatus.NOT_FOUND, b"not found", "text/plain; charset=utf-8")

    def _send(self, status: HTTPStatus, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)


def make_server(store: Store, options: SiteOptions, host: str = "127.0.0.1", port: int = 0) -> DashboardServer:
    """A server bound to host:port (0: a free port); UserError when the address cannot be bound."""
    try:
        return DashboardServer((host, port), store, options)
    except OSError as exc:
        raise UserError(f"vsperf dashboard --serve: cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def serve(store: Store, options: SiteOptions, host: str, port: int, *,
          announce: Callable[[str], None] = print) -> None:
    """Serve until Ctrl-C (or SIGTERM turned into KeyboardInterrupt), then close the socket."""
    server = make_server(store, options, host, port)
    announce(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
