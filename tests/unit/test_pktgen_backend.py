"""The pktgen backend's checks before anything is deployed, and what it needs from settings."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest

from vsperf.backends import build_registries
from vsperf.config.loader import load_settings
from vsperf.host.workdir import RunContext
from vsperf.errors import ConfigError, PrerequisiteError, TrafficGenError
from vsperf.executor import LocalExecutor
from vsperf.traffic import Traffic
from vsperf.trafficgen.pktgen.backend import LUA_MARKER, PktgenTrafficGenerator


def _gen(tmp_path: Path, **settings: Any) -> PktgenTrafficGenerator:
    values = dict(load_settings(env={}))
    values.update(settings)
    return PktgenTrafficGenerator(values, RunContext("t1", tmp_path, tmp_path, LocalExecutor()))


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


def test_missing_binary_is_named_with_the_fix(tmp_path: Path) -> None:
    gen = _gen(tmp_path, TRAFFICGEN_PKTGEN_BINARY=str(tmp_path / "nope"))
    with pytest.raises(PrerequisiteError, match=r"pktgen is missing .*TRAFFICGEN_PKTGEN_BINARY"):
        gen.check_prerequisites()


def test_binary_without_lua_is_refused(tmp_path: Path) -> None:
    binary = tmp_path / "pktgen"
    binary.write_bytes(b"\x7fELF no lua in here")
    binary.chmod(0o755)
    with pytest.raises(PrerequisiteError, match=r"built without Lua.*enable_lua"):
        _gen(tmp_path, TRAFFICGEN_PKTGEN_BINARY=str(binary)).check_prerequisites()


@pytest.mark.skipif(os.geteuid() == 0, reason="checks the message a non-root user gets")
def test_non_root_is_told_what_to_do(tmp_path: Path) -> None:
    binary = tmp_path / "pktgen"
    binary.write_bytes(b"\x7fELF " + LUA_MARKER)
    binary.chmod(0o755)
    with pytest.raises(PrerequisiteError, match="needs root"):
        _gen(tmp_path, TRAFFICGEN_PKTGEN_BINARY=str(binary)).check_prerequisites()


@pytest.mark.skipif(os.geteuid() != 0, reason="the queue check comes after the root check")
def test_several_veth_queues_on_af_xdp_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # pktgen opens one queue per port: frames on the veth's second queue would never be counted
    binary = tmp_path / "pktgen"
    binary.write_bytes(b"\x7fELF " + LUA_MARKER)
    binary.chmod(0o755)
    monkeypatch.setattr("vsperf.trafficgen.pktgen.backend.require_port_driver", lambda _driver: None)
    gen = _gen(tmp_path, TRAFFICGEN_PKTGEN_BINARY=str(binary), TRAFFICGEN_PKTGEN_PORT_DRIVER="af_xdp",
               LAB_PORT_QUEUES=2)
    with pytest.raises(ConfigError, match=r"pktgen: LAB_PORT_QUEUES=2: 2 queues need TRAFFICGEN_PKTGEN_PORT_DRIVER="):
        gen.check_prerequisites()
    _gen(tmp_path, TRAFFICGEN_PKTGEN_BINARY=str(binary), TRAFFICGEN_PKTGEN_PORT_DRIVER="af_xdp",
         LAB_PORT_QUEUES=1).check_prerequisites()


def test_user_started_pktgen_that_does_not_listen(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    gen = _gen(tmp_path, TRAFFICGEN_PKTGEN_HOST="127.0.0.1", TRAFFICGEN_PKTGEN_PORT=port)
    with pytest.raises(PrerequisiteError, match=f"no pktgen Lua socket at 127.0.0.1:{port}"):
        gen.check_prerequisites()


def test_trials_before_start_and_bad_arguments(tmp_path: Path) -> None:
    gen = _gen(tmp_path)
    with pytest.raises(TrafficGenError, match="before start"):
        gen.trial(Traffic(), 1000.0, 1.0)
    with pytest.raises(TrafficGenError, match="positive rate"):
        gen.trial(Traffic(), 0.0, 1.0)
    with pytest.raises(TrafficGenError, match="at least one frame"):
        gen.burst(Traffic(), 0)
    with pytest.raises(TrafficGenError, match="two generator ports"):
        gen.start([])
    assert gen.version() == "unknown (not started)"
