"""TRex's server as vsperf starts it: its config, its command line, its checks, start and stop,
against a recording ServerHost (no TRex here)."""

from __future__ import annotations

import signal
import socket
import subprocess
import threading
from collections.abc import Sequence
from typing import Any

import pytest
import yaml

from vsperf.errors import PrerequisiteError, TrafficGenError
from vsperf.trafficgen.trex.server import LAUNCH_SCRIPT, ServerConfig, TrexServer, config_text, server_argv, vdev

CFG = ServerConfig(interfaces=(vdev(0, "g0", "framecnt=8192"), vdev(1, "g1", "framecnt=8192")),
                   src_macs=("02:00:00:00:00:01", "02:00:00:00:00:02"),
                   dest_macs=("02:00:00:00:00:02", "02:00:00:00:00:01"), prefix="vspab12cdt", sync_port=4501,
                   async_port=4500)


def test_the_config_vsperf_writes() -> None:
    entry = yaml.safe_load(config_text(CFG))[0]
    assert entry["interfaces"] == ["--vdev=net_af_packet0,iface=g0,framecnt=8192",
                                   "--vdev=net_af_packet1,iface=g1,framecnt=8192"]
    assert entry["port_info"] == [{"src_mac": "02:00:00:00:00:01", "dest_mac": "02:00:00:00:00:02"},
                                  {"src_mac": "02:00:00:00:00:02", "dest_mac": "02:00:00:00:00:01"}]
    assert (entry["version"], entry["prefix"], entry["low_end"]) == (2, "vspab12cdt", True)
    assert (entry["zmq_rpc_port"], entry["zmq_pub_port"]) == (4501, 4500)


def test_a_server_with_its_own_cores() -> None:
    cfg = ServerConfig(("0000:3b:00.0", "0000:3b:00.1"), ("", ""), ("", ""), "p", low_end=False, cores=(0, 1, 2, 3))
    entry = yaml.safe_load(config_text(cfg))[0]
    assert "low_end" not in entry
    assert entry["platform"] == {"master_thread_id": 0, "latency_thread_id": 1,
                                 "dual_if": [{"socket": 0, "threads": [2, 3]}]}


@pytest.mark.parametrize("changes, message", [
    ({"interfaces": ("a",), "src_macs": ("m",), "dest_macs": ("m",)}, "in pairs"),
    ({"prefix": "../x"}, "bad DPDK file prefix"),
    ({"low_end": False, "cores": (0, 1)}, "at least one worker"),
])
def test_bad_configs_are_refused(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ServerConfig(**{**CFG.__dict__, **changes})


def test_the_command_line_runs_the_binary_from_its_directory() -> None:
    argv = server_argv("/opt/trex/scripts", "/tmp/run/trex_cfg.yaml")
    assert argv[:5] == ["sh", "-c", LAUNCH_SCRIPT, "sh", "/opt/trex/scripts"]
    assert argv[5:] == ["./_t-rex-64", "-i", "--iom", "0", "--no-scapy-server", "--cfg", "/tmp/run/trex_cfg.yaml"]


class FakeProc:
    def __init__(self) -> None:
        self.pid, self.code, self.signals = 4242, None, []

    def poll(self) -> int | None:
        return self.code

    def send_signal(self, sig: int) -> None:
        self.signals.append(sig)
        self.code = -sig

    def wait(self, timeout: float | None = None) -> int:
        assert self.code is not None
        return self.code


class FakeHost:
    """A host whose server listens on a real local socket once started (`listens`)."""

    name = "hostb"
    run_dir = "/tmp/vsperf-ab12cd-trex"
    file_prefix = "vsperf-ab12cd-trex"

    def __init__(self, *, has_binary: bool = True, busy: Sequence[int] = (), listens: bool = True,
                 log: str = "") -> None:
        self.has_binary, self.busy, self.listens, self.log = has_binary, busy, listens, log
        self.commands: list[list[str]] = []
        self.files: dict[str, str] = {}
        self.spawned: list[list[str]] = []
        self.stopped: list[int] = []
        self.removed: list[str] = []
        self.closed = False
        self.proc = FakeProc()
        self._server = socket.socket()
        self._server.bind(("127.0.0.1", 0))

    def run(self, argv: Sequence[str], *, timeout_s: float = 30.0) -> subprocess.CompletedProcess[str]:
        self.commands.append(list(argv))
        if argv[0] == "test":
            return subprocess.CompletedProcess(list(argv), 0 if self.has_binary else 1, "", "")
        port = int(argv[-1].rsplit(":", 1)[1])
        listening = f"LISTEN 0 100 0.0.0.0:{port} 0.0.0.0:*\n" if port in self.busy else ""
        return subprocess.CompletedProcess(list(argv), 0, listening, "")

    def put(self, text: str, path: str) -> None:
        self.files[path] = text

    def spawn(self, label: str, argv: Sequence[str]) -> FakeProc:
        self.spawned.append(list(argv))
        if self.listens:
            self._server.listen()
            threading.Thread(target=self._greet, daemon=True).start()
        return self.proc

    def _greet(self) -> None:
        conn, _ = self._server.accept()
        conn.sendall(b"\xff")  # ZeroMQ greets a connection
        conn.close()

    def log_tail(self, lines: int) -> str:
        return self.log

    def stop(self, proc: FakeProc, *, timeout_s: float) -> int | None:
        self.stopped.append(proc.pid)
        return proc.code

    def forward(self, port: int) -> int:
        return int(self._server.getsockname()[1])

    def remove(self, paths: Sequence[str]) -> None:
        self.removed += list(paths)

    def close(self) -> None:
        self.closed = True
        self._server.close()


def test_start_checks_stages_and_waits_for_the_rpc_port() -> None:
    host = FakeHost()
    server = TrexServer(host, "/opt/trex/scripts/", CFG)
    sync_port, _async_port = server.start(5.0)
    assert sync_port == host.forward(4501)
    assert host.commands[0] == ["test", "-x", "/opt/trex/scripts/_t-rex-64"]
    assert ["ss", "-H", "-l", "-t", "-n", "sport = :4501"] in host.commands
    assert yaml.safe_load(host.files["/tmp/vsperf-ab12cd-trex/trex_cfg.yaml"])[0]["prefix"] == "vspab12cdt"
    assert host.spawned == [server_argv("/opt/trex/scripts", "/tmp/vsperf-ab12cd-trex/trex_cfg.yaml")]
    server.stop()
    assert host.proc.signals == [signal.SIGINT] and host.stopped == [4242] and host.closed
    assert host.removed == ["/var/run/dpdk/vspab12cdt", "/tmp/vsperf-ab12cd-trex"]
    server.stop()  # twice is fine


def test_a_users_config_file_is_used_as_it_is() -> None:
    host = FakeHost()
    server = TrexServer(host, "/opt/trex/scripts", CFG, config_file="/etc/trex_cfg.yaml")
    server.start(5.0)
    assert host.files == {} and host.spawned[0][-1] == "/etc/trex_cfg.yaml"
    server.stop()


def test_no_trex_on_the_host_names_what_to_do() -> None:
    with pytest.raises(PrerequisiteError, match=r"host hostb: no TRex server /x/_t-rex-64: build TRex .* "
                                                r"TRAFFICGEN_TREX_BASE_DIR"):
        TrexServer(FakeHost(has_binary=False), "/x", CFG).start(5.0)


def test_a_port_in_use_is_refused_before_the_server_starts() -> None:
    host = FakeHost(busy=(4500,))
    with pytest.raises(PrerequisiteError, match=r"host hostb: TCP port 4500 \(TRAFFICGEN_TREX_ASYNC_PORT\) is in use "
                                                r"by another program .* set TRAFFICGEN_TREX_ASYNC_PORT to a free port"):
        TrexServer(host, "/opt/trex", CFG).start(5.0)
    assert host.spawned == []


def test_a_server_that_cannot_bind_says_which_port() -> None:
    host = FakeHost(listens=False, log="zmq publisher at: tcp://*:4500 | ERROR can't bind to ZMQ socket at "
                                       "tcp://*:4501 | ZMQ: Address already in use")
    host.proc.code = 255
    with pytest.raises(TrafficGenError, match="host hostb: TRex could not listen on TCP port 4501"):
        TrexServer(host, "/opt/trex", CFG).start(5.0)


def test_a_server_that_exits_while_starting_shows_its_log() -> None:
    host = FakeHost(listens=False, log="EAL: Cannot create lock on '/var/run/dpdk/x/config'")
    host.proc.code = 1
    with pytest.raises(TrafficGenError, match=r"TRex server on host hostb \(pid 4242\) exited \(code 1\): EAL: Cannot"):
        TrexServer(host, "/opt/trex", CFG).start(5.0)


def test_a_silent_server_times_out() -> None:
    host = FakeHost(listens=False, log="wait 1 sec")
    with pytest.raises(TrafficGenError, match=r"did not open its RPC port 4501 within 0\.5 s: wait 1 sec"):
        TrexServer(host, "/opt/trex", CFG).start(0.5)
