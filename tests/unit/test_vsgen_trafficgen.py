"""The vsgen backend, driving a stand-in engine (no root, no frames): what it asks, what it reports."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from settings_util import make_settings
from test_vsgen_engine import fake_engine

from vsperf.host.workdir import RunContext
from vsperf.deploy.base import GenPort
from vsperf.errors import ConfigError, TrafficGenError
from vsperf.executor import LocalExecutor
from vsperf.deploy.streams import directions
from vsperf.search.measurer import FLAG_UNDER_DELIVERY
from vsperf.traffic import Traffic, Vlan
from vsperf.trafficgen.vsgen.backend import (
    VsgenTrafficGenerator,
    frame_spec,
    kernel_version,
    path_setting,
    transmit_cpus,
)
from vsperf.trafficgen.vsgen.engine import EngineError

PORTS = (
    GenPort("ns0", "g0", "02:00:00:00:00:01", "198.18.0.1"),
    GenPort("ns1", "g1", "02:00:00:00:00:02", "198.18.1.1"),
)


@pytest.fixture
def gen(tmp_path: Path) -> Iterator[VsgenTrafficGenerator]:
    ctx = RunContext("t1", tmp_path, tmp_path, LocalExecutor())
    settings: dict[str, Any] = {"VSGEN_ENGINE": str(fake_engine(tmp_path)), "TRAFFICGEN_RESIDUAL_WAIT_S": 0.0}
    generator = VsgenTrafficGenerator(make_settings(settings), ctx)
    yield generator
    generator.stop()


def test_kernel_version() -> None:
    assert kernel_version("6.1.0-18-amd64") == (6, 1)
    assert kernel_version("5.18rc1") == (5, 18)
    assert kernel_version("garbage") == (0, 0)


def test_transmit_cpus() -> None:
    assert transmit_cpus(make_settings(VSGEN_CPUS=[3, 1]), [0, 1, 2, 3]) == [3, 1]
    assert transmit_cpus(make_settings(VSWITCH="ovs", VSWITCH_PMD_CPU_MASK="0x2"), [0, 1]) == [0]
    assert transmit_cpus(make_settings(VSWITCH="linux-bridge", VSWITCH_PMD_CPU_MASK="0x2"), [1, 0]) == [0, 1]
    assert transmit_cpus(make_settings(VSWITCH_PMD_CPU_MASK="0x3"), [0, 1]) == [0, 1]  # never none at all


def test_path_setting() -> None:
    assert path_setting(make_settings()) == "auto"
    assert path_setting(make_settings(VSGEN_PATH="packet")) == "packet"
    with pytest.raises(ConfigError, match="VSGEN_PATH"):
        make_settings(VSGEN_PATH="dpdk")


def test_frame_spec_takes_the_vlan_and_the_direction() -> None:
    traffic = Traffic(frame_size_bytes=128, vlan=Vlan(enabled=True, id=10, priority=3))
    reverse = directions(traffic, PORTS)[1]
    spec = frame_spec(traffic, reverse, 7)
    assert (spec.src_mac, spec.dst_ip, spec.src_udp, spec.vlan_id, spec.vlan_priority, spec.run_tag) == (
        "02:00:00:00:00:02", "198.18.0.1", 3001, 10, 3, 7,
    )
    assert spec.l3_offset == 18


def test_a_bidirectional_trial_splits_the_rate_and_adds_up(gen: VsgenTrafficGenerator) -> None:
    gen.start(PORTS)
    result = gen.trial(Traffic(bidir=True), 2000.0, 1.0)
    assert (result.kind, result.tx_frames, result.rx_frames) == ("rate", 2000, 2000)
    assert result.actual_tx_rate_fps == pytest.approx(2000.0)
    assert result.requested_rate_fps == 2000.0 and result.duration_s == 1.0
    assert result.flags == ()
    assert result.latency is not None and result.latency.samples == 2000
    assert (result.latency.min_ns, result.latency.avg_ns, result.latency.max_ns) == (7000.0, 8000.0, 9000.0)
    assert set(result.latency.percentiles_ns) == {"p50", "p90", "p99", "p99.9"}
    (row,) = result.per_second
    assert row["tx_fps"] == 1000 and row["port0_tx_fps"] == 500 and row["port1_rx_fps"] == 500
    assert gen.last_run is not None and gen.last_run.dirs[1].tx_port == 1


def test_a_unidirectional_trial_uses_one_direction(gen: VsgenTrafficGenerator) -> None:
    gen.start(PORTS)
    result = gen.trial(Traffic(bidir=False), 1000.0, 2.0)
    assert result.tx_frames == 2000
    assert gen.last_run is not None and len(gen.last_run.dirs) == 1


def test_bursts_split_the_frames_exactly(gen: VsgenTrafficGenerator) -> None:
    gen.start(PORTS)
    result = gen.burst(Traffic(bidir=True), 1001)
    assert result.kind == "burst" and result.tx_frames == 1001
    assert gen.last_run is not None and [d.tx_frames for d in gen.last_run.dirs] == [501, 500]
    assert FLAG_UNDER_DELIVERY in result.flags  # 1 Mfps is not 10 GbE line rate
    one = gen.burst(Traffic(bidir=True), 1)
    assert one.tx_frames == 1 and gen.last_run is not None and len(gen.last_run.dirs) == 1


def test_directions_are_sent_to_the_engine_only_when_they_change(gen: VsgenTrafficGenerator,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    gen.start(PORTS)
    engine = gen._engine
    assert engine is not None
    sent: list[str] = []
    original = engine.command

    def spy(line: str, *args: float) -> dict[str, Any]:
        sent.append(line)
        return original(line, *args)

    monkeypatch.setattr(engine, "command", spy)
    gen.trial(Traffic(), 1000.0, 1.0)
    gen.trial(Traffic(), 500.0, 1.0)
    assert len([s for s in sent if s.startswith("dir ")]) == 2
    gen.trial(Traffic(frame_size_bytes=128), 500.0, 1.0)
    assert len([s for s in sent if s.startswith("dir ")]) == 4


def test_continuous_traffic_until_stopped(gen: VsgenTrafficGenerator) -> None:
    gen.start(PORTS)
    seen: list[dict[str, float]] = []
    gen.on_second = seen.append
    gen.start_continuous(Traffic(bidir=False), 1000.0)
    with pytest.raises(TrafficGenError, match="continuous traffic is running"):
        gen.trial(Traffic(), 1.0, 1.0)
    time.sleep(0.12)
    live = gen.live_seconds()
    result = gen.stop_continuous()
    assert live and live[0]["tx_fps"] == pytest.approx(1000.0)
    assert result.tx_frames > 0 and result.rx_frames == result.tx_frames
    with pytest.raises(TrafficGenError, match="no continuous traffic"):
        gen.stop_continuous()


def test_bad_requests_are_one_line_errors(gen: VsgenTrafficGenerator) -> None:
    with pytest.raises(TrafficGenError, match="before start"):
        gen.trial(Traffic(), 1000.0, 1.0)
    with pytest.raises(TrafficGenError, match="two generator ports"):
        gen.start(PORTS[:1])
    gen.start(PORTS)
    with pytest.raises(TrafficGenError, match="positive rate"):
        gen.trial(Traffic(), 0.0, 1.0)
    with pytest.raises(TrafficGenError, match="at least one frame"):
        gen.burst(Traffic(), 0)
    with pytest.raises(TrafficGenError, match="multistream"):
        gen.trial(Traffic(multistream=70000, stream_type="L4"), 10.0, 1.0)


def test_an_unknown_interface_stops_the_engine(gen: VsgenTrafficGenerator) -> None:
    bad = (PORTS[0], GenPort("ns1", "missing0", "02:00:00:00:00:02", "198.18.1.1"))
    with pytest.raises(EngineError, match="unknown interface missing0"):
        gen.start(bad)
    assert gen._engine is None
    assert not any("fake-vsgen-engine" in " ".join(p.info["cmdline"] or []) and p.info["status"] != "zombie"
                   for p in psutil.process_iter(["cmdline", "status"]))


def test_version_before_and_after_start(gen: VsgenTrafficGenerator) -> None:
    assert gen.version() == "vsgen 9.9"
    gen.start(PORTS)
    assert gen.version() == "vsgen 9.9 (kernel fake)"
