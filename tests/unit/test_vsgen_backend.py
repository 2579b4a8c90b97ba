"""The vsgen backend, driving a stand-in engine (no root, no frames): what it asks, what it
reports; on this machine and on a testbed's generator host (the engine copied there)."""

from __future__ import annotations

import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from gen_host import AnsweringExecutor, generator_host, recorded
from settings_util import make_settings
from test_vsgen_engine import fake_engine

from vsperf.errors import PrerequisiteError, TrafficGenError
from vsperf.executor import CommandLog
from vsperf.host.host import Host
from vsperf.host.journal import Journal
from vsperf.host.names import RunNames
from vsperf.search.measurer import FLAG_UNDER_DELIVERY
from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort
from vsperf.trafficgen.vsgen.backend import VsgenTrafficGenerator
from vsperf.trafficgen.vsgen.engine import EngineError

PORTS = (
    GenPort("ns0", "g0", "02:00:00:00:00:01", "198.18.0.1"),
    GenPort("ns1", "g1", "02:00:00:00:00:02", "198.18.1.1"),
)


def _settings(engine: Path, **extra: Any) -> Any:
    return make_settings({"VSGEN_ENGINE": str(engine), "TRAFFICGEN_RESIDUAL_WAIT_S": 0.0, **extra})


@pytest.fixture
def gen(tmp_path: Path) -> Iterator[VsgenTrafficGenerator]:
    with generator_host(tmp_path) as host:
        generator = VsgenTrafficGenerator(_settings(fake_engine(tmp_path)), host)
        yield generator
        generator.stop()


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
    engine = str(fake_engine(Path(gen.settings["VSGEN_ENGINE"]).parent))
    assert not any(engine in (p.info["cmdline"] or []) and p.info["status"] != "zombie"
                   for p in psutil.process_iter(["cmdline", "status"]))
    assert recorded(gen.host, "process") == []


def test_version_before_and_after_start(gen: VsgenTrafficGenerator) -> None:
    assert gen.version() == "vsgen 9.9"
    gen.start(PORTS)
    assert gen.version() == "vsgen 9.9 (kernel fake)"


def test_on_this_machine_the_engine_runs_where_it_was_found(gen: VsgenTrafficGenerator) -> None:
    gen.start(PORTS)
    (entry,) = recorded(gen.host, "process")
    assert psutil.Process(entry.pid).cmdline()[-1] == gen.settings["VSGEN_ENGINE"]  # no copy
    assert not any(e.name.endswith("-files") for e in recorded(gen.host, "dir"))
    gen.stop()
    assert recorded(gen.host, "process") == []


def test_on_a_testbed_host_the_engine_is_copied_into_the_runs_directory_and_checked_there(tmp_path: Path) -> None:
    commands = CommandLog(tmp_path / "commands.log")
    with generator_host(tmp_path, "gen", commands) as host:
        copy = host.names.run_dir("files") / "vsgen-engine"
        generator = VsgenTrafficGenerator(_settings(fake_engine(tmp_path)), host)
        try:
            generator.start(PORTS)
            # recorded before it exists: the teardown, or the next run after a kill, removes it
            assert str(copy.parent) in [e.name for e in recorded(host, "dir")]
            assert stat.S_IMODE(Path(copy).stat().st_mode) == 0o500  # read-only, executable
            (entry,) = recorded(host, "process")
            assert psutil.Process(entry.pid).cmdline()[-1] == str(copy)
            log = (tmp_path / "commands.log").read_text().splitlines()
            checked = next(i for i, line in enumerate(log) if line.endswith(f"{copy} --version"))
            started = next(i for i, line in enumerate(log) if "[background]" in line and line.endswith(str(copy)))
            assert checked < started  # it must run there before any port is touched
            assert generator.trial(Traffic(), 1000.0, 1.0).tx_frames == 1000
        finally:
            generator.stop()
    assert not Path(copy.parent).exists()  # removed with the run


def test_an_engine_that_cannot_run_on_the_testbed_host_is_a_prerequisite_error(tmp_path: Path) -> None:
    engine = tmp_path / "vsgen-engine"
    engine.write_text("#!/bin/sh\necho 'vsgen-engine: error while loading shared libraries: libbpf.so.1' >&2\n"
                      "exit 127\n")
    engine.chmod(0o755)
    with generator_host(tmp_path, "gen") as host:
        generator = VsgenTrafficGenerator(_settings(engine), host)
        with pytest.raises(PrerequisiteError, match=r"^host gen: cannot run the vsgen engine copied from this "
                                                    r"machine \(.*libbpf.so.1\); install libbpf1 there"):
            generator.start(PORTS)
        assert recorded(host, "process") == []  # no engine was started
        copied = Path(host.names.run_dir("files"))
        assert str(copied) in [e.name for e in recorded(host, "dir")] and copied.exists()
    assert not copied.exists()  # the copy goes with the run's directory


def cpus_of(cpus: str) -> AnsweringExecutor:
    """This machine posing as a generator host whose processes may use `cpus`."""
    return AnsweringExecutor({("grep", "^Cpus_allowed_list:", "/proc/self/status"): f"Cpus_allowed_list:\t{cpus}\n"})


PMD_ON_CPU_1 = {"VSWITCH": "ovs", "VSWITCH_PMD_CPU_MASK": "0x2"}


def test_transmit_cpus_are_the_generator_hosts_minus_the_pmd_cpus_where_the_switch_runs(tmp_path: Path) -> None:
    host = Host("gen", cpus_of("0-3"), RunNames("ab12"), Journal("ab12", root=tmp_path))
    gen = VsgenTrafficGenerator(make_settings(PMD_ON_CPU_1), host)  # CPUs read there, not here
    assert gen._request("rate", (0, 1), 1000.0, (10, 10)).cpus == (0, 2)  # the local lab: beside the switch
    gen.switch_on_host = False  # a testbed whose DUT host is another machine
    assert gen._request("rate", (0, 1), 1000.0, (10, 10)).cpus == (0, 1)
    listed = VsgenTrafficGenerator(make_settings(PMD_ON_CPU_1), Host("gen", cpus_of("0-3,6"), RunNames("ab12"), None))
    assert listed._request("rate", (0, 1, 2, 3), 1000.0, (10,)).cpus == (0, 2, 3, 6)
