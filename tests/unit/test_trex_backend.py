"""The trex backend: its checks before anything is deployed, and a whole session (start, trials,
stop) on this machine with a stand-in server (a `_t-rex-64` that only listens on its RPC port) and
a stand-in for TRex's client (fixtures_trex/client): no TRex, no root."""

from __future__ import annotations

import importlib.util
import os
import socket
import sys
import textwrap
from pathlib import Path
from typing import Any

import psutil
import pytest

from vsperf.backends import build_registries
from vsperf.config.loader import load_settings
from vsperf.errors import ConfigError, PrerequisiteError, TrafficGenError
from vsperf.executor import CommandLog, LocalExecutor
from vsperf.host.host import Host
from vsperf.host.journal import Journal
from vsperf.host.names import RunNames
from vsperf.host.release import release
from vsperf.host.workdir import new_run_id
from vsperf.search.measurer import FLAG_UNDER_DELIVERY
from vsperf.traffic import L3, Traffic
from vsperf.traffic.ports import GenPort
from vsperf.trafficgen.trex.backend import TrexTrafficGenerator

FAKE_CLIENT = str(Path(__file__).parent / "fixtures_trex" / "client")
PORTS = (GenPort(None, "g0", "02:00:00:00:00:01", "198.18.0.1", peer_mac="02:00:00:00:00:02"),
         GenPort(None, "g1", "02:00:00:00:00:02", "198.18.1.1", peer_mac="02:00:00:00:00:01"))
# A stand-in for TRex's server: listens on the RPC port of the config it is given, until SIGINT.
FAKE_SERVER = textwrap.dedent("""\
    #!{python}
    import signal, socket, sys, yaml
    cfg = yaml.safe_load(open(sys.argv[sys.argv.index("--cfg") + 1]))[0]
    print("fake TRex for", cfg["interfaces"], flush=True)
    s = socket.socket(); s.bind(("127.0.0.1", cfg["zmq_rpc_port"])); s.listen()
    signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
    kept = []
    while True:
        kept.append(s.accept()[0])
    """)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _gen(tmp_path: Path, **settings: Any) -> TrexTrafficGenerator:
    """The generator on this machine as the local lab's Host (a run of its own: its directories
    in /tmp and the journal under tmp_path, released by `_release`)."""
    values = dict(load_settings(env={}))
    values.update(settings)
    run_id = new_run_id()
    executor = LocalExecutor(CommandLog(tmp_path / "commands.log"))
    host = Host("local", executor, RunNames(run_id), Journal(run_id, root=tmp_path / "state"), results_dir=tmp_path)
    return TrexTrafficGenerator(values, host)


def _release(gen: TrexTrafficGenerator) -> None:
    assert gen.host.journal is not None
    release(gen.host.journal, {"local": gen.host.executor})


def fake_trex(tmp_path: Path) -> str:
    base = tmp_path / "trex"
    base.mkdir()
    server = base / "_t-rex-64"
    server.write_text(FAKE_SERVER.format(python=sys.executable))
    server.chmod(0o755)
    return str(base)


def test_registered_with_vsperfs_name_for_it() -> None:
    registry = build_registries().trafficgens
    assert registry.get("Trex").cls is TrexTrafficGenerator and TrexTrafficGenerator.PORTS_IN_ONE_NAMESPACE


def test_missing_trex_names_what_to_install(tmp_path: Path) -> None:
    with pytest.raises(PrerequisiteError, match=r"TRex is not installed \(.*/none/_t-rex-64 missing\): build TRex "
                                                r"v3\.0\.7 .*docs/trafficgens\.rst.*TRAFFICGEN_TREX_BASE_DIR"):
        _gen(tmp_path, TRAFFICGEN_TREX_BASE_DIR=str(tmp_path / "none")).check_prerequisites()


def test_trex_found_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = fake_trex(tmp_path)
    launcher = Path(base) / "t-rex-64"
    launcher.write_text("#!/bin/sh\n")
    launcher.chmod(0o755)
    monkeypatch.setenv("PATH", f"{base}{os.pathsep}{os.environ['PATH']}")
    _gen(tmp_path, TRAFFICGEN_TREX_CLIENT_PATH=FAKE_CLIENT).check_prerequisites()  # found on the host's PATH


def test_a_client_path_without_a_client_is_refused(tmp_path: Path) -> None:
    with socket.socket() as server, pytest.raises(PrerequisiteError, match="holds no TRex client"):
        server.bind(("127.0.0.1", 0))
        server.listen()
        _gen(tmp_path, TRAFFICGEN_TREX_CLIENT_PATH=str(tmp_path / "work"), TRAFFICGEN_TREX_HOST_IP_ADDR="127.0.0.1",
             TRAFFICGEN_TREX_SYNC_PORT=server.getsockname()[1]).check_prerequisites()


def test_a_running_server_needs_no_local_trex_but_must_answer(tmp_path: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        _gen(tmp_path, TRAFFICGEN_TREX_HOST_IP_ADDR="127.0.0.1", TRAFFICGEN_TREX_CLIENT_PATH=FAKE_CLIENT,
             TRAFFICGEN_TREX_SYNC_PORT=server.getsockname()[1],
             TRAFFICGEN_TREX_BASE_DIR=str(tmp_path / "none")).check_prerequisites()
    with pytest.raises(PrerequisiteError, match=r"no TRex server answers on port \d+ of 127\.0\.0\.1 .*start it "
                                                r"there \(\./t-rex-64 -i\), or leave TRAFFICGEN_TREX_HOST_IP_ADDR"):
        _gen(tmp_path, TRAFFICGEN_TREX_HOST_IP_ADDR="127.0.0.1", TRAFFICGEN_TREX_SYNC_PORT=free_port(),
             TRAFFICGEN_TREX_CLIENT_PATH=FAKE_CLIENT).check_prerequisites()


def test_version_before_start(tmp_path: Path) -> None:
    assert _gen(tmp_path).version() == "unknown (not started)"


def test_a_session_with_a_started_server(tmp_path: Path) -> None:
    sync_port = free_port()
    gen = _gen(tmp_path, TRAFFICGEN_TREX_BASE_DIR=fake_trex(tmp_path), TRAFFICGEN_TREX_CLIENT_PATH=FAKE_CLIENT,
               TRAFFICGEN_TREX_SYNC_PORT=sync_port, TRAFFICGEN_TREX_ASYNC_PORT=free_port(),
               TRAFFICGEN_RESIDUAL_WAIT_S=0.1, TRAFFICGEN_TREX_LATENCY_PPS=50)
    run_id = gen.host.run_id
    work = Path(f"/tmp/vsperf-{run_id}-trex")
    try:
        with gen:
            gen.start(PORTS)
            assert gen.version() == "v3.07"
            cfg = (work / "trex_cfg.yaml").read_text()  # the run's work directory (Host.work_dir)
            assert "--vdev=net_af_packet0,iface=g0,blocksz=4096,framesz=2048,framecnt=8192" in cfg
            assert f"prefix: vsp{run_id}t" in cfg and f"zmq_rpc_port: {sync_port}" in cfg
            result = gen.trial(Traffic(frame_size_bytes=64), 2000.0, 0.5)
            assert (result.tx_frames, result.rx_frames) == (1000, 1000)
            assert result.latency is not None and result.latency.samples > 0
            burst = gen.burst(Traffic(frame_size_bytes=64, bidir=False), 300)
            # too short for a sample of the counter: counted as sent at the rate asked (the port's line rate)
            assert (burst.kind, burst.tx_frames, burst.rx_frames) == ("burst", 300, 300)
            assert FLAG_UNDER_DELIVERY not in burst.flags
            servers = [p for p in psutil.process_iter(["cmdline"]) if f"--cfg {work}/" in " ".join(
                p.info["cmdline"] or [])]
            assert len(servers) == 1
            assert gen.host.journal is not None
            assert [e.pid for e in gen.host.journal.entries() if e.kind == "process"] == [servers[0].pid]
        assert not servers[0].is_running()  # stopped by PID at the end
        assert not [e for e in gen.host.journal.entries() if e.kind == "process"]
        log = (tmp_path / "commands.log").read_text()
        assert "vsperf.trafficgen.trex.worker" in log and "./_t-rex-64 -i --iom 0 --no-scapy-server --cfg" in log
        assert (tmp_path / "trex-worker.log").exists()  # the worker's log with the run's results
    finally:
        _release(gen)
    assert not work.exists()  # the run's directory goes with the run


def test_a_refusing_server_is_one_line_naming_the_fix(tmp_path: Path) -> None:
    gen = _gen(tmp_path, TRAFFICGEN_TREX_HOST_IP_ADDR="127.0.0.1", TRAFFICGEN_TREX_CLIENT_PATH=FAKE_CLIENT,
               TRAFFICGEN_TREX_SYNC_PORT=4999)  # the fake client's server of another API version
    with gen, pytest.raises(TrafficGenError, match=r"TRex on host 127\.0\.0\.1 refused vsperf's TRex client: RPC "
                                                   r"version mismatch.*TRAFFICGEN_TREX_CLIENT_PATH"):
        gen.start(PORTS)


def test_an_unreachable_running_server(tmp_path: Path) -> None:
    gen = _gen(tmp_path, TRAFFICGEN_TREX_HOST_IP_ADDR="127.0.0.1", TRAFFICGEN_TREX_CLIENT_PATH=FAKE_CLIENT,
               TRAFFICGEN_TREX_SYNC_PORT=4998, TRAFFICGEN_TREX_TIMEOUT_S=1)
    with gen, pytest.raises(TrafficGenError, match=r"cannot connect to TRex on host 127\.0\.0\.1: .*Failed to get"):
        gen.start(PORTS)


def test_only_udp_over_ipv4(tmp_path: Path) -> None:
    gen = _gen(tmp_path, TRAFFICGEN_TREX_HOST_IP_ADDR="127.0.0.1", TRAFFICGEN_TREX_CLIENT_PATH=FAKE_CLIENT)
    with gen:
        gen.start(PORTS)
        with pytest.raises(ConfigError, match="IPv4/UDP frames only"):
            gen.trial(Traffic(l3=L3(proto="tcp")), 1000.0, 1.0)


def test_without_ports_vsperf_cannot_start_a_server(tmp_path: Path) -> None:
    gen = _gen(tmp_path, TRAFFICGEN_TREX_BASE_DIR=fake_trex(tmp_path), TRAFFICGEN_TREX_CLIENT_PATH=FAKE_CLIENT)
    with pytest.raises(TrafficGenError, match=r"TRex needs two generator ports .* TRAFFICGEN_TREX_HOST_IP_ADDR"):
        gen.start(())
    assert gen._worker is None  # stopped on the error
    _release(gen)


def test_a_missing_client_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "lbr_trex_client" else real(name))
    with socket.socket() as server, pytest.raises(PrerequisiteError, match=r"TRex's Python client is not installed: "
                                                                             r"pip install 'vsperf\[trex\]'"):
        server.bind(("127.0.0.1", 0))
        server.listen()
        _gen(tmp_path, TRAFFICGEN_TREX_HOST_IP_ADDR="127.0.0.1",
             TRAFFICGEN_TREX_SYNC_PORT=server.getsockname()[1]).check_prerequisites()
