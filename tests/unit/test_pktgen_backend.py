"""The pktgen backend's checks before anything is deployed (on the host it runs on), what it needs
from settings, and a start that fails leaving nothing behind."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_pktgen import fake_pktgen, free_port
from gen_host import AnsweringExecutor, generator_host, recorded

from vsperf.backends import build_registries
from vsperf.config.loader import load_settings
from vsperf.errors import ConfigError, PrerequisiteError, TrafficGenError
from vsperf.host.host import Host
from vsperf.host.journal import Entry
from vsperf.host.names import RunNames
from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort
from vsperf.trafficgen.pktgen.backend import PktgenTrafficGenerator
from vsperf.trafficgen.pktgen.launch import LUA_MARKER


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    with generator_host(tmp_path) as local:
        yield local


def _gen(host: Host, **settings: Any) -> PktgenTrafficGenerator:
    values = dict(load_settings(env={}))
    values.update(settings)
    return PktgenTrafficGenerator(values, host)


def test_registered_with_its_alias() -> None:
    registry = build_registries().trafficgens
    assert registry.get("Pktgen").cls is PktgenTrafficGenerator
    assert "docs/trafficgens.rst" in (PktgenTrafficGenerator.__doc__ or "").splitlines()[0]


def test_defaults_come_from_conf() -> None:
    values = load_settings(env={})
    assert values["TRAFFICGEN_PKTGEN_BINARY"] == "pktgen"
    assert values["TRAFFICGEN_PKTGEN_PORT"] == 22022
    assert values["TRAFFICGEN_PKTGEN_HOST"] == ""
    assert values["TRAFFICGEN_PKTGEN_LATENCY"] is False


def test_missing_binary_is_named_with_the_fix(tmp_path: Path, host: Host) -> None:
    gen = _gen(host, TRAFFICGEN_PKTGEN_BINARY=str(tmp_path / "nope"))
    with pytest.raises(PrerequisiteError, match=rf"^{tmp_path / 'nope'} is missing: build Pktgen-DPDK >= 23.06 "
                                                r"with Lua .*set TRAFFICGEN_PKTGEN_BINARY to its path$"):
        gen.check_prerequisites()


def test_binary_without_lua_is_refused(tmp_path: Path, host: Host) -> None:
    binary = tmp_path / "pktgen"
    binary.write_bytes(b"\x7fELF no lua in here")
    binary.chmod(0o755)
    with pytest.raises(PrerequisiteError, match=r"built without Lua.*enable_lua"):
        _gen(host, TRAFFICGEN_PKTGEN_BINARY=str(binary)).check_prerequisites()


@pytest.mark.parametrize("name", ["local", "gen"])
def test_non_root_is_told_what_to_do(tmp_path: Path, name: str) -> None:
    binary = tmp_path / "pktgen"
    binary.write_bytes(b"\x7fELF " + LUA_MARKER.encode())
    binary.chmod(0o755)
    user = Host(name, AnsweringExecutor({("id", "-u"): "1000\n"}, name), RunNames("ab12"), None)  # a probe
    where = "" if name == "local" else "host gen: "
    with pytest.raises(PrerequisiteError, match=rf"^{where}the pktgen generator needs root to start pktgen: run as "
                                                r"root, or set TRAFFICGEN_PKTGEN_HOST to a pktgen you started$"):
        _gen(user, TRAFFICGEN_PKTGEN_BINARY=str(binary)).check_prerequisites()


def test_several_veth_queues_on_af_xdp_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # pktgen opens one queue per port: frames on the veth's second queue would never be counted
    binary = tmp_path / "pktgen"
    binary.write_bytes(b"\x7fELF " + LUA_MARKER.encode())
    binary.chmod(0o755)
    monkeypatch.setattr("vsperf.trafficgen.pktgen.backend.require_port_driver", lambda _driver: None)
    host = Host("local", AnsweringExecutor({("id", "-u"): "0\n"}, "local"), RunNames("ab12"), None)  # root
    gen = _gen(host, TRAFFICGEN_PKTGEN_BINARY=str(binary), TRAFFICGEN_PKTGEN_PORT_DRIVER="af_xdp",
               LAB_PORT_QUEUES=2)
    with pytest.raises(ConfigError, match=r"pktgen: LAB_PORT_QUEUES=2: 2 queues need TRAFFICGEN_PKTGEN_PORT_DRIVER="):
        gen.check_prerequisites()
    _gen(host, TRAFFICGEN_PKTGEN_BINARY=str(binary), TRAFFICGEN_PKTGEN_PORT_DRIVER="af_xdp",
         LAB_PORT_QUEUES=1).check_prerequisites()


def test_user_started_pktgen_that_does_not_listen(host: Host) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    gen = _gen(host, TRAFFICGEN_PKTGEN_HOST="127.0.0.1", TRAFFICGEN_PKTGEN_PORT=port)
    with pytest.raises(PrerequisiteError, match=f"no pktgen Lua socket at 127.0.0.1:{port}"):
        gen.check_prerequisites()


def test_trials_before_start_and_bad_arguments(host: Host) -> None:
    gen = _gen(host)
    with pytest.raises(TrafficGenError, match="before start"):
        gen.trial(Traffic(), 1000.0, 1.0)
    with pytest.raises(TrafficGenError, match="positive rate"):
        gen.trial(Traffic(), 0.0, 1.0)
    with pytest.raises(TrafficGenError, match="at least one frame"):
        gen.burst(Traffic(), 0)
    with pytest.raises(TrafficGenError, match="two generator ports"):
        gen.start([])
    assert gen.version() == "unknown (not started)"


def test_a_start_that_fails_stops_and_forgets_what_it_started(tmp_path: Path, host: Host) -> None:
    # pktgen goes through the host's journal (stopped by the next run after a SIGKILL) wherever it runs
    fake = fake_pktgen(tmp_path, fail="fake pktgen: no ports")
    port = free_port()
    gen = _gen(host, TRAFFICGEN_PKTGEN_BINARY=str(fake), TRAFFICGEN_PKTGEN_PORT=port, TRAFFICGEN_PKTGEN_TIMEOUT_S=5)
    journaled: list[str] = []
    assert host.journal is not None
    record = host.journal.record

    def spy(entry: Entry) -> Entry:
        journaled.append(f"{entry.kind} {entry.name}")
        return record(entry)

    host.journal.record = spy  # type: ignore[method-assign]
    ports = [GenPort(None, "lo", "02:00:00:00:00:01", "198.18.0.1"), GenPort(None, "lo", "02:00:00:00:00:02",
                                                                            "198.18.0.2")]
    with pytest.raises(TrafficGenError, match=r"^pktgen 0 exited \(code 3\) while starting: fake pktgen: no ports$"):
        gen.start(ports)
    assert "process pktgen 0" in journaled and f"dir /var/run/dpdk/{host.names.tag}pg0" in journaled
    assert recorded(host, "process") == []  # stopped and forgotten
    log = Path(host.names.run_dir("logs") / "pktgen-0.log").read_text()
    assert log == "fake pktgen: no ports\n"
