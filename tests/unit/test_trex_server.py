"""TRex's server as vsperf starts it: its config, its command line, its checks, start and stop,
against a Host whose executor records what it is asked (no TRex here)."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any, cast

import pytest
import yaml

from vsperf.errors import PrerequisiteError, TrafficGenError
from vsperf.executor import Command, CommandLog, Executor, Process, Streams, TcpStream
from vsperf.host.host import Host
from vsperf.host.journal import Journal
from vsperf.host.names import RunNames
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
        self.pid, self.start_ticks, self.code, self.signals = 4242, 77, None, []
        self.stdin = self.stdout = None

    def poll(self) -> int | None:
        return self.code

    def send_signal(self, sig: int) -> None:
        self.signals.append(sig)
        self.code = -sig

    def wait(self, timeout: float | None = None) -> int:
        if self.code is None:
            raise subprocess.TimeoutExpired("trex", timeout or 0)
        return self.code


class FakeExecutor(Executor):
    """The generator host `hostb`: records commands, copies and starts; its server (`spawn`)
    listens on a real socket of this machine's loopback that `open_tcp` reaches."""

    def __init__(self, *, has_binary: bool = True, busy: Sequence[int] = (), listens: bool = True,
                 log: str = "") -> None:
        self.command_log = CommandLog(None)
        self.has_binary, self.busy, self.listens, self.log = has_binary, busy, listens, log
        self.commands: list[tuple[list[str], str | None]] = []
        self.files: dict[str, str] = {}
        self.spawned: list[tuple[list[str], str | None]] = []
        self.opened: list[tuple[int, str | None]] = []
        self.proc = FakeProc()
        self._server = socket.socket()
        self._server.bind(("127.0.0.1", 0))

    @property
    def host(self) -> str:
        return "hostb"

    def _complete(self, cmd: Command, timeout_s: float | None,
                  input_text: str | None) -> subprocess.CompletedProcess[str]:
        argv = list(cmd.argv)
        self.commands.append((argv, cmd.netns))
        out, code = "", 0
        if argv[0] == "test":
            code = 0 if self.has_binary else 1
        elif argv[0] == "ss":
            port = int(argv[-1].rsplit(":", 1)[1])
            out = f"LISTEN 0 100 0.0.0.0:{port} 0.0.0.0:*\n" if port in self.busy else ""
        elif argv[0] == "tail":
            out = "\n".join(self.log.split(" | "))
        return subprocess.CompletedProcess(argv, code, out, "")

    def _start(self, cmd: Command, streams: Streams) -> Process:
        self.spawned.append((list(cmd.argv), cmd.netns))
        if self.listens:
            self._server.listen()
            threading.Thread(target=self._greet, daemon=True).start()
        return cast(Process, self.proc)

    def _greet(self) -> None:
        with contextlib.suppress(OSError):
            conn, _ = self._server.accept()
            conn.sendall(b"\xff")  # ZeroMQ greets a connection
            conn.close()

    def put(self, local: Path, remote: PurePosixPath | str, *, mode: int | None = None) -> None:
        self.files[str(remote)] = local.read_text()

    def get(self, remote: PurePosixPath | str, local: Path) -> None:
        raise AssertionError("nothing is copied back")

    def open_tcp(self, port: int, *, netns: str | None = None, timeout_s: float = 5.0) -> TcpStream:
        self.opened.append((port, netns))
        return socket.create_connection(self._server.getsockname(), timeout=timeout_s)

    def close(self) -> None:
        self._server.close()


@pytest.fixture
def journal(tmp_path: Path) -> Journal:
    return Journal("ab12cd", root=tmp_path)


def _server(journal: Journal, executor: FakeExecutor, base: str = "/opt/trex/scripts/",
            netns: str | None = "vspab12cdg0", **kwargs: str) -> tuple[TrexServer, Host]:
    host = Host("hostb", executor, RunNames("ab12cd"), journal)
    return TrexServer(host, netns, base, CFG, **kwargs), host


def test_start_checks_stages_and_waits_for_the_rpc_port(journal: Journal) -> None:
    executor = FakeExecutor()
    server, host = _server(journal, executor)
    server.start(5.0)
    assert executor.commands[0] == (["test", "-x", "/opt/trex/scripts/_t-rex-64"], "vspab12cdg0")
    assert (["ss", "-H", "-l", "-t", "-n", "sport = :4501"], "vspab12cdg0") in executor.commands
    cfg_path = str(host.work_dir("trex") / "trex_cfg.yaml")
    assert cfg_path == "/tmp/vsperf-ab12cd-trex/trex_cfg.yaml"  # the run's work directory, journaled
    assert yaml.safe_load(executor.files[cfg_path])[0]["prefix"] == "vspab12cdt"
    argv, netns = executor.spawned[0]
    assert argv[-len(server_argv("", "")):][:5] == server_argv("/opt/trex/scripts", cfg_path)[:5]
    assert argv[-2:] == ["--cfg", cfg_path] and netns == "vspab12cdg0"
    assert str(host.log_path("trex-server.log")) in argv  # its output in the run's logs there
    processes = [(e.name, e.pid) for e in journal.entries() if e.kind == "process"]
    assert processes == [("TRex server", 4242)]
    assert (4501, "vspab12cdg0") in executor.opened  # reached through the host executor's open_tcp
    server.stop()
    assert executor.proc.signals == [signal.SIGINT]
    assert not [e for e in journal.entries() if e.kind == "process"]  # stopped and forgotten
    assert (["rm", "-rf", "--", "/var/run/dpdk/vspab12cdt"], None) in executor.commands
    server.stop()  # twice is fine
    executor.close()


def test_a_users_config_file_is_used_as_it_is(journal: Journal) -> None:
    executor = FakeExecutor()
    server, _host = _server(journal, executor, "/opt/trex/scripts", config_file="/etc/trex_cfg.yaml")
    server.start(5.0)
    assert executor.files == {} and executor.spawned[0][0][-1] == "/etc/trex_cfg.yaml"
    server.stop()
    executor.close()


def test_no_trex_on_the_host_names_what_to_do(journal: Journal) -> None:
    with pytest.raises(PrerequisiteError, match=r"host hostb: no TRex server /x/_t-rex-64: build TRex .* "
                                                r"TRAFFICGEN_TREX_BASE_DIR"):
        _server(journal, FakeExecutor(has_binary=False), "/x")[0].start(5.0)


def test_a_port_in_use_is_refused_before_the_server_starts(journal: Journal) -> None:
    executor = FakeExecutor(busy=(4500,))
    with pytest.raises(PrerequisiteError, match=r"host hostb: TCP port 4500 \(TRAFFICGEN_TREX_ASYNC_PORT\) is in use "
                                                r"by another program .* set TRAFFICGEN_TREX_ASYNC_PORT to a free port"):
        _server(journal, executor, "/opt/trex")[0].start(5.0)
    assert executor.spawned == []


def test_a_server_that_cannot_bind_says_which_port(journal: Journal) -> None:
    executor = FakeExecutor(listens=False, log="zmq publisher at: tcp://*:4500 | ERROR can't bind to ZMQ socket at "
                                               "tcp://*:4501 | ZMQ: Address already in use")
    executor.proc.code = 255
    server, _ = _server(journal, executor, "/opt/trex")
    with pytest.raises(TrafficGenError, match="host hostb: TRex could not listen on TCP port 4501"):
        server.start(5.0)
    server.stop()


def test_a_server_that_exits_while_starting_shows_its_log(journal: Journal) -> None:
    executor = FakeExecutor(listens=False, log="EAL: Cannot create lock on '/var/run/dpdk/x/config'")
    executor.proc.code = 1
    server, _ = _server(journal, executor, "/opt/trex")
    with pytest.raises(TrafficGenError, match=r"TRex server on host hostb \(pid 4242\) exited \(code 1\): EAL: Cannot"):
        server.start(5.0)
    server.stop()


def test_a_silent_server_times_out(journal: Journal) -> None:
    executor = FakeExecutor(listens=False, log="wait 1 sec")
    server, _ = _server(journal, executor, "/opt/trex")
    with pytest.raises(TrafficGenError, match=r"did not open its RPC port 4501 within 0\.5 s: wait 1 sec"):
        server.start(0.5)
    executor.proc.code = 0
    server.stop()
