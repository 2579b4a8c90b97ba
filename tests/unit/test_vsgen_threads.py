"""Several transmit threads per direction (VSGEN_TX_THREADS): the setting, the run command the
backend sends, the threads the result reports; against the stand-in engine (no root)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gen_host import generator_host
from settings_util import make_settings
from test_vsgen_backend import PORTS
from test_vsgen_engine import fake_engine

from vsperf.config.schema_vsgen import MAX_TX_THREADS
from vsperf.errors import ConfigError
from vsperf.host.host import Host
from vsperf.traffic import Traffic
from vsperf.trafficgen.vsgen.backend import VsgenTrafficGenerator
from vsperf.trafficgen.vsgen.protocol import RunRequest, parse_event, parse_result


def _generator(tmp_path: Path, host: Host, **settings: Any) -> VsgenTrafficGenerator:
    base: dict[str, Any] = {"VSGEN_ENGINE": str(fake_engine(tmp_path)), "TRAFFICGEN_RESIDUAL_WAIT_S": 0.0}
    return VsgenTrafficGenerator(make_settings({**base, **settings}), host)


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    with generator_host(tmp_path) as local:
        yield local


@pytest.fixture
def runs(tmp_path: Path, host: Host,
         monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[VsgenTrafficGenerator, list[str]]]:
    """A started generator with two threads on CPUs 0 and 1, and the run commands it sends."""
    gen = _generator(tmp_path, host, VSGEN_TX_THREADS=2, VSGEN_CPUS=[0, 1])
    gen.start(PORTS)
    engine = gen._engine
    assert engine is not None
    sent: list[str] = []
    original = engine._send

    def spy(line: str) -> None:
        if line.startswith("run "):
            sent.append(line)
        original(line)

    monkeypatch.setattr(engine, "_send", spy)
    yield gen, sent
    gen.stop()


def test_the_default_is_one_thread_and_the_command_is_unchanged() -> None:
    assert make_settings()["VSGEN_TX_THREADS"] == 1
    one = RunRequest("burst", (0,), frames=(7,))
    assert one.threads == 1 and "threads" not in one.command()
    assert RunRequest("burst", (0,), frames=(7,), threads=3).command().endswith(" threads=3")


@pytest.mark.parametrize("threads", [0, MAX_TX_THREADS + 1])
def test_the_setting_is_bounded(threads: int) -> None:
    with pytest.raises(ConfigError, match="VSGEN_TX_THREADS"):
        make_settings(VSGEN_TX_THREADS=threads)


@pytest.mark.parametrize("threads", [0, MAX_TX_THREADS + 1])
def test_a_run_outside_the_thread_range_is_refused(threads: int) -> None:
    with pytest.raises(ValueError, match="transmit threads"):
        RunRequest("burst", (0,), frames=(1,), threads=threads)


def test_a_two_rate_run_is_one_thread() -> None:
    with pytest.raises(ValueError, match="one thread"):
        RunRequest("rate", (0,), rate_fps=2.0, frames=(2,), rate2_fps=1.0, frames2=1, threads=2)


def test_the_result_says_how_many_threads_sent() -> None:
    direction = dict(dir=0, tx_port=0, rx_port=1, path="xdp-live", ring_drops=0, streams=4, requested_fps=0.0,
                     frames_requested=9, tx=9, tx_time_s=1.0, achieved_fps=9.0, cpu_s=0.1, rx=9, dup=0,
                     reorder=0, lost=0, excess=0, streams_with_loss=0, max_stream_loss=0)
    event = dict(ev="result", mode="burst", trial_tag=1, elapsed_s=1.0, cpu_s=0.1, residual_s=0.0,
                 stopped_by="done", ports=[])
    two = parse_result(parse_event(json.dumps({**event, "dirs": [{**direction, "threads": 2}]})))
    assert two.dirs[0].threads == 2
    older = parse_result(parse_event(json.dumps({**event, "dirs": [direction]})))  # an engine before threads
    assert older.dirs[0].threads == 1


def test_each_direction_gets_its_threads_and_a_cpu_each(runs: tuple[VsgenTrafficGenerator, list[str]]) -> None:
    gen, sent = runs
    result = gen.burst(Traffic(bidir=False, multistream=8), 1001)
    assert result.tx_frames == 1001
    assert sent[-1].endswith(" cpus=0,1 threads=2")
    assert gen.last_run is not None and gen.last_run.dirs[0].threads == 2
    gen.trial(Traffic(bidir=True, multistream=8), 1000.0, 1.0)
    assert sent[-1].endswith(" cpus=0,1,0,1 threads=2")  # thread j of all directions on cpus[j % 2]


def test_a_recovery_trial_runs_one_thread(runs: tuple[VsgenTrafficGenerator, list[str]]) -> None:
    gen, sent = runs
    gen.recovery_trial(Traffic(bidir=False, multistream=8), 2000.0, 1.0, 1000.0, 1.0)
    assert "rate2=" in sent[-1] and "threads=" not in sent[-1]
