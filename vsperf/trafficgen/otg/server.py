"""vsgen's OTG server, the HTTP side: the part of the Open Traffic Generator API vsperf's otg
backend uses, on the standard library's threading HTTP server.

    POST /config            set_config        GET /config           get_config
    POST /control/state     set_control_state (traffic.flow_transmit start | stop)
    POST /monitor/metrics   get_metrics       (flow metrics)
    GET  /capabilities/version

Every request body is validated with snappi's own classes (the OTG schema as Keysight ships
it) before anything happens; failures answer OTG's error object `{"code", "kind", "errors"}`
with status 400 (invalid or not supported by vsgen) or 500 (the engine failed). The server
listens on loopback or a namespace's address only: it executes what it is sent on real ports.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from vsperf.errors import ConfigError, TrafficGenError
from vsperf.trafficgen.otg import client
from vsperf.trafficgen.otg.errors import Unsupported
from vsperf.trafficgen.otg.session import ServerSession

log = logging.getLogger(__name__)
MAX_BODY_BYTES = 4 << 20


class RequestError(Exception):
    """A request the server refuses: HTTP status, OTG error kind and messages."""

    def __init__(self, status: int, kind: str, *errors: str) -> None:
        super().__init__("; ".join(errors))
        self.status = status
        self.kind = kind
        self.errors = list(errors)


def check_listen_address(host: str, *, remote: bool = False) -> str:
    """`host` if it is a loopback address, or (`remote`) any one address of this host (anything
    else: ConfigError). A namespace's own address is loopback from inside it: run the server
    with `ip netns exec NS` for one. The server has no authentication: whoever reaches the
    address may send traffic on its ports, so another address is the user's explicit choice."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise ConfigError(f"--listen needs an IP address, got {host!r} (e.g. 127.0.0.1:8080)") from None
    if address.is_unspecified or (not address.is_loopback and not remote):
        raise ConfigError(f"--listen {host}: vsgen's OTG server listens on loopback (127.0.0.1 or ::1), or with "
                          "--allow-remote on one address of a link only the controller reaches (no authentication); "
                          "to serve a namespace, run it inside that namespace (ip netns exec NS vsperf otg-server)")
    return host


class OtgApi:
    """The OTG operations on a session: JSON text in, (status, JSON-ready object) out."""

    def __init__(self, session: ServerSession) -> None:
        self.session = session
        self.api = client.new_api()

    def _parse(self, factory: Callable[[], Any], body: bytes) -> Any:
        try:
            text = body.decode("utf-8")
            if not isinstance(json.loads(text), dict):
                raise ValueError("the body must be a JSON object")
            obj = factory()
            obj.deserialize(text)
        except Exception as exc:  # snappi raises TypeError/ValueError/AttributeError alike
            raise RequestError(400, "validation", " ".join(str(exc).split()) or type(exc).__name__) from exc
        return obj

    def set_config(self, body: bytes) -> dict[str, Any]:
        config = self._parse(self.api.config, body)
        self.session.set_config(config)
        return {"warnings": []}

    def get_config(self) -> dict[str, Any]:
        return self.session.config()

    def set_control_state(self, body: bytes) -> dict[str, Any]:
        control = self._parse(self.api.control_state, body)
        if control.choice != "traffic" or control.traffic.choice != "flow_transmit":
            raise Unsupported(f"vsgen's OTG server controls traffic.flow_transmit only, not {control.choice}")
        transmit = control.traffic.flow_transmit
        names = list(transmit.flow_names or ())
        if transmit.state == "start":
            self.session.start(names)
        elif transmit.state == "stop":
            self.session.stop(names)
        else:
            raise Unsupported(f"flow_transmit state {transmit.state!r} is not supported by vsgen (start, stop)")
        return {"warnings": []}

    def get_metrics(self, body: bytes) -> dict[str, Any]:
        request = self._parse(self.api.metrics_request, body)
        if request.choice != "flow":
            raise Unsupported(f"vsgen's OTG server reports flow metrics only, not {request.choice}")
        metrics = self.session.flow_metrics(list(request.flow.flow_names or ()))
        reply = self.api.metrics_response()
        reply.deserialize(json.dumps({"choice": "flow_metrics", "flow_metrics": metrics}))
        result: dict[str, Any] = reply.serialize(encoding="dict")
        return result

    def get_version(self) -> dict[str, Any]:
        version = self.api.version()
        version.api_spec_version = self.api._version_meta.api_spec_version
        version.sdk_version = client.snappi_version()
        version.app_version = self.session.version()
        result: dict[str, Any] = version.serialize(encoding="dict")
        return result

    def handle(self, method: str, path: str, body: bytes) -> tuple[int, dict[str, Any]]:
        """One request: (HTTP status, reply object); errors as OTG error objects."""
        routes: dict[tuple[str, str], Callable[[], dict[str, Any]]] = {
            ("POST", "/config"): lambda: self.set_config(body),
            ("GET", "/config"): self.get_config,
            ("POST", "/control/state"): lambda: self.set_control_state(body),
            ("POST", "/monitor/metrics"): lambda: self.get_metrics(body),
            ("GET", "/capabilities/version"): self.get_version,
        }
        route = routes.get((method, path.split("?", 1)[0].rstrip("/") or "/"))
        try:
            if route is None:
                raise RequestError(404, "validation", f"{method} {path} is not served by vsgen's OTG server")
            return 200, route()
        except RequestError as exc:
            return exc.status, error_body(exc.status, exc.kind, exc.errors)
        except Unsupported as exc:
            return 400, error_body(400, "validation", [str(exc)])
        except TrafficGenError as exc:
            log.error("%s %s: %s", method, path, exc)
            return 500, error_body(500, "internal", [str(exc)])


def error_body(code: int, kind: str, errors: list[str]) -> dict[str, Any]:
    """OTG's error object."""
    return {"code": code, "kind": kind, "errors": errors}


def make_handler(api: OtgApi) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to `api`."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "vsperf-otg"

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                status, reply = 413, error_body(413, "validation", [f"body over {MAX_BODY_BYTES} bytes"])
                self.close_connection = True
            else:
                body = self.rfile.read(length) if length else b""
                status, reply = api.handle(method, self.path, body)
            data = json.dumps(reply).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def do_PATCH(self) -> None:
            self._serve("PATCH")

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("%s %s", self.address_string(), format % args)

    return Handler


class OtgServer:
    """The HTTP server on a session; `start` serves in a thread, `close` stops it and the engine."""

    def __init__(self, session: ServerSession, host: str, port: int, *, remote: bool = False) -> None:
        self.session = session
        self.httpd = ThreadingHTTPServer((check_listen_address(host, remote=remote), port),
                                         make_handler(OtgApi(session)))
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = str(self.httpd.server_address[0]), int(self.httpd.server_address[1])
        return f"http://{host if ':' not in host else f'[{host}]'}:{port}"

    def serve_forever(self) -> None:
        self.httpd.serve_forever(poll_interval=0.2)

    def start(self) -> None:
        self._thread = threading.Thread(target=self.serve_forever, name="otg-server", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop serving, stop traffic, quit the engine. Safe to call twice."""
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join()
            self._thread = None
        self.httpd.server_close()
        self.session.close()

    def __enter__(self) -> OtgServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
