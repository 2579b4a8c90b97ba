"""vsgen's OTG server over real HTTP with real snappi, and the otg backend against it, on the
stand-in engine of test_vsgen_engine (no root: the engine side is tested in
tests/integration/test_otg_lab.py)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("snappi", reason="pip install 'vsperf[otg]'")

from gen_host import generator_host, recorded
from test_vsgen_engine import fake_engine

from vsperf.errors import ConfigError, PrerequisiteError, TrafficGenError
from vsperf.host.host import Host
from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort
from vsperf.trafficgen.otg import client
from vsperf.trafficgen.otg.backend import OtgTrafficGenerator, check_location, port_locations
from vsperf.trafficgen.otg.server import OtgServer, check_listen_address
from vsperf.trafficgen.otg.server_cli import parse_cpus, parse_listen, parse_port
from vsperf.trafficgen.otg.session import ServerOptions, ServerSession
from vsperf.trafficgen.otg.translate import PortLocation

PORTS = (GenPort("n0", "g0", "02:00:00:00:00:01", "198.18.0.1", peer_mac="02:00:00:00:00:02"),
         GenPort("n1", "g1", "02:00:00:00:00:02", "198.18.1.1", peer_mac="02:00:00:00:00:01"))


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    """This machine as the server's host: the engine it starts is in the server's run journal."""
    with generator_host(tmp_path) as local:
        yield local


@pytest.fixture
def server(tmp_path: Path, host: Host) -> Iterator[OtgServer]:
    options = ServerOptions(binary=fake_engine(tmp_path),
                            ports={"a": PortLocation("v0", "nsa"), "b": PortLocation("v1", "nsb")},
                            residual_s=0.0)
    srv = OtgServer(ServerSession(host, options), "127.0.0.1", 0)
    srv.start()
    yield srv
    srv.close()


def settings(location: str, **extra: Any) -> dict[str, Any]:
    return {"TRAFFICGEN_OTG_LOCATION": location, "TRAFFICGEN_OTG_VERIFY_TLS": True, "TRAFFICGEN_OTG_PORTS": ["a", "b"],
            "TRAFFICGEN_OTG_EXT": "", "TRAFFICGEN_OTG_TIMEOUT_S": 10.0, "TRAFFICGEN_OTG_POLL_S": 0.05,
            "TRAFFICGEN_OTG_STOP_TIMEOUT_S": 10.0, "TRAFFICGEN_RESIDUAL_WAIT_S": 0.0, "TRAFFICGEN_IXIA_HOST": "",
            "TRAFFICGEN_IXIA_CARD": "", "TRAFFICGEN_IXIA_PORT1": "", "TRAFFICGEN_IXIA_PORT2": "", **extra}


def generator(tmp_path: Path, location: str, **extra: Any) -> OtgTrafficGenerator:
    # a controller's client: it starts nothing on the generator host (a probe refuses to)
    return OtgTrafficGenerator(settings(location, **extra), Host.probe())


def post(url: str, body: bytes) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_backend_runs_trials_and_bursts_through_the_server(tmp_path: Path, server: OtgServer,
                                                               host: Host) -> None:
    gen = generator(tmp_path, server.url)
    gen.check_prerequisites()
    assert gen.version().startswith(f"vsgen 9.9 (kernel {os.uname().release}) (OTG API ")
    with gen:
        gen.start(PORTS)
        result = gen.trial(Traffic(), 2000.0, 0.5)
        assert (result.tx_frames, result.rx_frames, result.actual_tx_rate_fps) == (1000, 1000, 2000.0)
        assert result.latency is not None and result.latency.avg_ns == 8000.0
        burst = gen.burst(Traffic(), 301)
        assert (burst.kind, burst.tx_frames, burst.rx_frames) == ("burst", 301, 301)
        assert burst.duration_s == pytest.approx(301 / 2e6)
    assert server.session.config()["flows"][0]["duration"]["fixed_packets"]["packets"] == 151
    # the server's engine runs through its host, journaled until the server closes
    assert [e.name for e in recorded(host, "process")] == ["vsgen-engine"]
    server.close()
    assert recorded(host, "process") == []


def test_snappi_scripts_see_the_flows_run_and_stop(server: OtgServer) -> None:
    api = client.new_api(server.url)
    config = api.config()
    config.ports.port(name="x", location="a").port(name="y", location="b")
    flow = config.flows.flow(name="f")[-1]
    flow.tx_rx.port.tx_name, flow.tx_rx.port.rx_names = "x", ["y"]
    flow.rate.pps = 100
    flow.duration.continuous.gap = 12
    eth, ip, _udp = flow.packet.ethernet().ipv4().udp()
    eth.src.value, eth.dst.value = "02:00:00:00:00:01", "02:00:00:00:00:02"
    ip.src.value, ip.dst.value = "198.18.0.1", "198.18.1.1"
    api.set_config(config)
    assert api.get_config().flows[0].name == "f"
    control = api.control_state()
    control.traffic.flow_transmit.state = "start"
    api.set_control_state(control)
    request = api.metrics_request()
    request.flow.flow_names = ["f"]
    assert api.get_metrics(request).flow_metrics[0].transmit == "started"
    control.traffic.flow_transmit.state = "stop"
    api.set_control_state(control)
    metric = api.get_metrics(request).flow_metrics[0]
    assert metric.transmit == "stopped" and metric.frames_tx == metric.frames_rx > 0


@pytest.mark.parametrize(
    ("path", "body", "status", "message"),
    [
        ("/config", b"{not json", 400, "Expecting property name"),
        ("/config", b'{"ports": [{"location": "a"}]}', 400, "name is a mandatory property"),
        ("/config", b'{"ports": [{"name": "p", "location": "nowhere"}]}', 400, "is not served here"),
        ("/control/state", b'{"choice": "port", "port": {"choice": "link", "link": {"state": "up"}}}', 400,
         "traffic.flow_transmit only"),
        ("/control/state", b'{"choice": "traffic", "traffic": {"choice": "flow_transmit", "flow_transmit": '
                           b'{"state": "start", "flow_names": ["ghost"]}}}', 400, "no flow named ghost"),
        ("/monitor/metrics", b'{"choice": "port"}', 400, "flow metrics only"),
        ("/nowhere", b"{}", 404, "not served"),
    ],
)
def test_errors_come_back_in_otg_error_format(server: OtgServer, path: str, body: bytes, status: int,
                                              message: str) -> None:
    code, reply = post(server.url + path, body)
    assert code == status
    assert reply["code"] == status and reply["kind"] == "validation"
    assert message in reply["errors"][0]


def test_controller_errors_are_one_line_trafficgen_errors(tmp_path: Path, server: OtgServer) -> None:
    gen = generator(tmp_path, server.url, TRAFFICGEN_OTG_PORTS=["a", "elsewhere"])
    gen.start(PORTS)
    with pytest.raises(TrafficGenError) as info:
        gen.trial(Traffic(), 100.0, 0.1)
    assert "set_config failed: port location 'elsewhere' is not served here" in str(info.value)
    assert "(code 400)" in str(info.value) and "\n" not in str(info.value)


def test_prerequisites_name_the_extra_and_the_controller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        free = sock.getsockname()[1]
    with pytest.raises(PrerequisiteError, match=r"cannot connect \(\[Errno 111\] Connection refused\)"):
        generator(tmp_path, f"http://127.0.0.1:{free}").check_prerequisites()
    with pytest.raises(ConfigError, match="must be the controller's URL"):
        generator(tmp_path, "").check_prerequisites()
    real = client.importlib.import_module

    def no_snappi(name: str, *args: Any) -> Any:
        if name == "snappi":
            raise ImportError("No module named 'snappi'")
        return real(name, *args)

    monkeypatch.setattr(client.importlib, "import_module", no_snappi)
    with pytest.raises(PrerequisiteError, match=r"install it with pip install 'vsperf\[otg\]'"):
        generator(tmp_path, "http://127.0.0.1:1").check_prerequisites()


def test_timeouts_apply_to_snappi_requests(tmp_path: Path) -> None:
    with socket.socket() as silent:  # accepts connections (backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with pytest.raises(PrerequisiteError, match="no answer within TRAFFICGEN_OTG_TIMEOUT_S"):
            generator(tmp_path, url, TRAFFICGEN_OTG_TIMEOUT_S=0.3).check_prerequisites()


def test_tls_certificates_are_verified_when_asked(tmp_path: Path) -> None:
    import http.server
    import shutil
    import ssl

    if shutil.which("openssl") is None:
        pytest.skip("openssl missing: apt-get install openssl")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=127.0.0.1"], check=True, capture_output=True)

    class Version(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            data = b'{"api_spec_version": "1.0", "app_version": "tls-test"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Version)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"https://127.0.0.1:{httpd.server_address[1]}"
        with pytest.raises(PrerequisiteError, match="cannot connect"):
            generator(tmp_path, url, TRAFFICGEN_OTG_VERIFY_TLS=True).check_prerequisites()
        trusting = generator(tmp_path, url, TRAFFICGEN_OTG_VERIFY_TLS=False)
        trusting.check_prerequisites()
        assert trusting.version().startswith("tls-test (OTG API 1.0")
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_locations_and_listen_addresses() -> None:
    assert port_locations(settings("x", TRAFFICGEN_OTG_PORTS=[]), PORTS) == ["g0@n0", "g1@n1"]
    assert port_locations(settings("x", TRAFFICGEN_OTG_PORTS=["1;1;1", "1;1;2"]), ()) == ["1;1;1", "1;1;2"]
    with pytest.raises(ConfigError, match="needs two port locations"):
        port_locations(settings("x", TRAFFICGEN_OTG_PORTS=["only"]), PORTS)
    assert check_location("https://10.0.0.5:8443/") == "https://10.0.0.5:8443"
    assert check_listen_address("127.0.0.1") == "127.0.0.1"
    for address in ("0.0.0.0", "198.18.0.1", "localhost"):
        with pytest.raises(ConfigError):
            check_listen_address(address)


def test_server_command_line_values() -> None:
    assert parse_listen("127.0.0.1:8080") == ("127.0.0.1", 8080)
    assert parse_listen("[::1]:0") == ("::1", 0)
    assert parse_port("a=veth0@ns0") == ("a", PortLocation("veth0", "ns0"))
    assert parse_port("b=eth1") == ("b", PortLocation("eth1", None))
    assert parse_cpus("0,1") == (0, 1) and parse_cpus("") == ()
    for bad in ("8080", "host:", "127.0.0.1:99999"):
        with pytest.raises(ConfigError, match="--listen needs HOST:PORT"):
            parse_listen(bad)
    for bad in ("a", "=x", "a=", "a=averyveryverylongname"):
        with pytest.raises(ConfigError, match="--port needs NAME=IFNAME"):
            parse_port(bad)
    with pytest.raises(ConfigError, match="--cpus"):
        parse_cpus("0,x")


def test_a_decapsulation_trial_reaches_the_engine_inside_its_tunnel(tmp_path: Path, server: OtgServer,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The backend's tunnel flow over HTTP: the server defines the engine direction with the
    frame vsgen builds for the same port (into_tunnel) and the inner IPv4 header's offset."""
    from vsperf.traffic.streams import directions
    from vsperf.traffic.tunnel import Encapsulation
    from vsperf.trafficgen.otg import session
    from vsperf.trafficgen.vsgen.encap import into_tunnel
    from vsperf.trafficgen.vsgen.frames import build_frame, frame_spec

    sent: list[tuple[Any, ...]] = []

    def recording(*args: Any) -> Any:
        sent.append(args)
        return real(*args)

    real = session.dir_command
    monkeypatch.setattr(session, "dir_command", recording)
    encap = Encapsulation("gre", 99, "02:00:00:00:00:02", "02:00:00:00:00:99", "198.18.240.10", "198.18.240.1")
    ports = (GenPort("n1", "g1", "02:00:00:00:00:02", "198.18.1.1", peer_mac="02:00:00:00:00:01", encap=encap),
             PORTS[0])
    traffic = Traffic(bidir=False, frame_size_bytes=128)
    with generator(tmp_path, server.url) as gen:
        gen.start(ports)
        result = gen.trial(traffic, 1000.0, 0.5)
    assert (result.tx_frames, result.rx_frames) == (500, 500)
    (direction,) = directions(traffic, ports)
    spec = frame_spec(traffic, direction, 4242)  # the stand-in engine's run tag
    frame, l3, _ = into_tunnel(build_frame(spec), spec.l3_offset, (), encap, "none")
    (args,) = sent
    assert (args[6], args[7]) == (l3, frame) and l3 == 56 and len(frame) == 128 + 42 - 4
    assert server.session.config()["flows"][0]["size"] == {"choice": "fixed", "fixed": 170}


def test_ports_made_again_under_their_names_get_a_new_engine(tmp_path: Path, server: OtgServer, host: Host,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The local lab makes its ports again for each test, under the same names: the engine that
    opened the old interfaces is replaced (it would send into deleted ones); the same ones keep it."""
    links = {"now": ("2/02:00:00:00:00:01", "2/02:00:00:00:00:02")}
    monkeypatch.setattr(ServerSession, "_links", lambda self, locations: links["now"])
    with generator(tmp_path, server.url) as gen:
        gen.start(PORTS)
        gen.trial(Traffic(), 2000.0, 0.1)
        (first,) = recorded(host, "process")
        gen.trial(Traffic(), 2000.0, 0.1)
        assert [e.pid for e in recorded(host, "process")] == [first.pid]
        links["now"] = ("2/02:00:00:00:00:03", "2/02:00:00:00:00:04")  # same ifindex, another interface
        result = gen.trial(Traffic(), 2000.0, 0.1)
        (second,) = recorded(host, "process")
    assert second.pid != first.pid and result.rx_frames == result.tx_frames == 200


def test_an_interface_is_its_index_and_mac(host: Host) -> None:
    session = ServerSession(host, ServerOptions(binary=Path("/nonexistent"), ports={}))
    (lo,) = session._links((PortLocation("lo", None),))
    assert lo == "1/00:00:00:00:00:00"
    assert session._links((PortLocation("no-such-if", None),)) == ("",)
