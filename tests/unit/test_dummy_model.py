"""The simulated DUT model and the `dummy` traffic generator built on it."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import pytest
from search_shipped import shipped
from settings_util import dut_model, make_settings, run_from_settings

from vsperf.errors import ConfigError, TrafficGenError
from vsperf.host.host import Host
from vsperf.registry import Registry
from vsperf.search.back2back import rfc2544_back2back
from vsperf.search.config import Back2BackConfig, ThroughputSearchConfig
from vsperf.search.measurer import Measurer
from vsperf.search.throughput import rfc2544_throughput
from vsperf.traffic import Traffic, TrafficType
from vsperf.trafficgen.base import TrafficGenerator
from vsperf.trafficgen.dummy.backend import DummyTrafficGenerator
from vsperf.trafficgen.dummy.model import (
    back2back_truth_frames,
    burst_lost_frames,
    capacity_at_fps,
    loss_ratio,
    lossless_burst_frames,
    max_rate_for_loss_fps,
    noise_factor,
    port_line_rate_fps,
    rate_latency,
    simulate_burst,
    simulate_rate_trial,
    stall_count,
    throughput_truth_fps,
)

T64 = Traffic(frame_size_bytes=64)
LINE_64 = T64.line_rate_fps  # 29,761,904.76 fps (two 10 GbE ports)


def make_gen(dut: Mapping[str, Any] | None = None) -> DummyTrafficGenerator:
    settings = make_settings() if dut is None else make_settings(TRAFFICGEN_DUMMY_DUT=dut)
    # a simulated DUT: nothing is deployed, and the generator creates nothing on its host
    return DummyTrafficGenerator(settings, Host.probe())


# ---- the model ----


def test_capacity_interpolates_and_clamps() -> None:
    model = dut_model(capacity_fps=((64, 10e6), (512, 2e6), (1518, 1e6)))
    assert capacity_at_fps(model, 64) == 10e6
    assert capacity_at_fps(model, 288) == pytest.approx(6e6)  # halfway between 64 and 512
    assert capacity_at_fps(model, 1015) == pytest.approx(1.5e6)
    assert capacity_at_fps(model, 40) == 10e6  # clamped below
    assert capacity_at_fps(model, 9000) == 1e6  # clamped above
    assert capacity_at_fps(dut_model(capacity_fps=3e6), 1280) == 3e6


def test_cliff_and_gradual_loss() -> None:
    cliff, gradual = dut_model(), dut_model(loss_model="gradual")
    assert loss_ratio(cliff, 1e6, 1e6) == 0.0 == loss_ratio(gradual, 1e6, 1e6)
    assert loss_ratio(cliff, 2e6, 1e6) == pytest.approx(0.5)  # forwards exactly the capacity
    assert loss_ratio(gradual, 2e6, 1e6) == pytest.approx(0.25)
    assert loss_ratio(gradual, 1.001e6, 1e6) < 1e-6  # smooth start
    for model in (cliff, gradual):
        rate = max_rate_for_loss_fps(model, 1e6, 0.005)
        assert loss_ratio(model, rate, 1e6) == pytest.approx(0.005)


def test_rate_trial_counters_and_line_rate_cap() -> None:
    model = dut_model(capacity_fps=LINE_64 * 0.5)
    ok = simulate_rate_trial(model, T64, LINE_64 * 0.5, 10.0, 1)
    assert ok.loss_frames == 0 and not ok.flags
    assert ok.tx_frames == round(LINE_64 * 5)
    over = simulate_rate_trial(model, T64, LINE_64 * 0.6, 10.0, 1)
    assert over.rx_rate_fps == pytest.approx(LINE_64 * 0.5, rel=1e-6)
    beyond = simulate_rate_trial(model, T64, LINE_64 * 1.2, 10.0, 1)
    assert beyond.actual_tx_rate_fps == pytest.approx(LINE_64)
    assert beyond.under_delivered


def test_port_speed_overrides_traffic_link() -> None:
    model = dut_model(capacity_fps=1e9, port_speed_gbps=1.0)
    assert port_line_rate_fps(model, T64) == pytest.approx(LINE_64 / 10)
    assert port_line_rate_fps(dut_model(), T64) == pytest.approx(LINE_64)
    trial = simulate_rate_trial(model, T64, LINE_64 / 2, 1.0, 1)
    assert trial.under_delivered and trial.actual_tx_rate_fps == pytest.approx(LINE_64 / 10)


def test_noise_is_seeded_and_bounded() -> None:
    model = dut_model(noise=0.05, seed=7)
    factors = [noise_factor(model, i) for i in range(1, 200)]
    same, other = dut_model(noise=0.05, seed=7), dut_model(noise=0.05, seed=8)  # built once: the loader is slow
    assert factors == [noise_factor(same, i) for i in range(1, 200)]
    assert factors != [noise_factor(other, i) for i in range(1, 200)]
    assert all(0.95 <= f <= 1.05 for f in factors)
    assert max(factors) - min(factors) > 0.08  # actually spread over the band
    assert noise_factor(dut_model(), 3) == 1.0


def test_gaussian_noise_stays_in_the_band_and_gathers_in_its_middle() -> None:
    model = dut_model(noise=0.03, noise_shape="gaussian", seed=3)
    factors = [noise_factor(model, i) for i in range(1, 2001)]
    assert all(0.97 <= f <= 1.03 for f in factors)
    middle = sum(1 for f in factors if abs(f - 1) <= 0.01) / len(factors)  # within one sigma: 68 %
    assert 0.64 <= middle <= 0.72
    uniform_model = dut_model(noise=0.03, seed=3)
    uniform = [noise_factor(uniform_model, i) for i in range(1, 2001)]
    assert 0.30 <= sum(1 for f in uniform if abs(f - 1) <= 0.01) / len(uniform) <= 0.37


def test_stalls_lose_more_in_longer_trials() -> None:
    # 0.05 stalls per second of 2.5 ms each: above 8 Mfps a stall overflows a 20,000-frame queue.
    model = dut_model(capacity_fps=10e6, buffer_frames=20_000, stall_per_s=0.05, stall_s=0.0025)
    assert sum(stall_count(model, 60.0, i) for i in range(1, 1001)) == pytest.approx(3000, rel=0.1)

    def failing(duration_s: float, rate_fps: float) -> float:
        trials = [simulate_rate_trial(model, T64, rate_fps, duration_s, i) for i in range(1, 401)]
        return sum(1 for t in trials if t.loss_frames) / len(trials)

    assert failing(1.0, 9.8e6) == pytest.approx(1 - math.exp(-0.05), abs=0.03)
    assert failing(60.0, 9.8e6) == pytest.approx(1 - math.exp(-3.0), abs=0.03)
    assert failing(60.0, 7.5e6) == 0.0  # the 18,750 frames of a stall fit in the queue
    lossy = [t.loss_frames for i in range(1, 100) if (t := simulate_rate_trial(model, T64, 9.8e6, 60.0, i)).loss_frames]
    assert {lost % 4500 for lost in lossy} == {0} and max(lossy) > 4500  # whole stalls of 4,500 frames


def test_burst_lossless_threshold() -> None:
    model = dut_model(capacity_fps=LINE_64 * 0.75, buffer_frames=1000)
    limit = lossless_burst_frames(model, LINE_64 * 0.75, LINE_64)
    assert limit == pytest.approx(4000)
    assert back2back_truth_frames(model, T64) == pytest.approx(4000)
    assert simulate_burst(model, T64, 4000, 1).loss_frames == 0
    assert simulate_burst(model, T64, 4004, 1).loss_frames == 1
    assert burst_lost_frames(model, 8000, LINE_64 * 0.75, LINE_64) == 1000
    assert lossless_burst_frames(model, LINE_64, LINE_64) == math.inf


def test_latency_grows_with_load() -> None:
    model = dut_model(capacity_fps=1e6, buffer_frames=1000, base_latency_ns=5000)
    light, heavy, over = (rate_latency(model, r, 1e6, 10**6) for r in (1e5, 0.99e6, 2e6))
    assert light.min_ns == 5000
    assert light.avg_ns < heavy.avg_ns < over.avg_ns
    assert light.max_ns < heavy.max_ns <= over.max_ns
    assert over.max_ns == pytest.approx(5000 + 1000 * 1e3)  # a full queue of 1000 frames at 1 us each


def test_truth_helpers() -> None:
    model = dut_model(capacity_fps=LINE_64 * 0.4, loss_model="gradual")
    assert throughput_truth_fps(model, T64) == pytest.approx(LINE_64 * 0.4)
    assert throughput_truth_fps(model, T64, 0.5) == pytest.approx(LINE_64 * 0.4 / (1 - math.sqrt(0.005)))
    assert throughput_truth_fps(dut_model(capacity_fps=1e10), T64) == pytest.approx(LINE_64)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"capacity": 1}, r"TRAFFICGEN_DUMMY_DUT.*capacity.*capacity_fps"),
        ({"capacity_fps": "fast"}, r"TRAFFICGEN_DUMMY_DUT\.capacity_fps"),
        ({"capacity_fps": -5}, r"TRAFFICGEN_DUMMY_DUT\.capacity_fps"),
        ({"capacity_fps": {64: "x"}}, r"TRAFFICGEN_DUMMY_DUT\.capacity_fps"),
        ({"loss_model": "wall"}, r"TRAFFICGEN_DUMMY_DUT\.loss_model"),
        ({"noise": 1.5}, r"TRAFFICGEN_DUMMY_DUT\.noise"),
        ({"buffer_frames": 1.5}, r"TRAFFICGEN_DUMMY_DUT\.buffer_frames"),
        ({"port_speed_gbps": 0}, r"TRAFFICGEN_DUMMY_DUT\.port_speed_gbps"),
    ],
)
def test_model_settings_errors(data: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        dut_model(**data)


def test_model_from_settings() -> None:
    model = dut_model(capacity_fps={1518: 1e6, 64: 9e6}, buffer_frames=512, port_speed_gbps=25, noise=0.01,
                      seed=3, loss_model="gradual")
    assert (model.capacity_fps, model.buffer_frames, model.port_speed_gbps, model.noise, model.seed,
            model.loss_model) == (((64, 9e6), (1518, 1e6)), 512, 25.0, 0.01, 3, "gradual")
    defaults = make_settings()["TRAFFICGEN_DUMMY_DUT"]  # the rest comes from conf/, the one place
    assert (model.base_latency_ns, model.reset_s, model.mac_table_size) == (
        defaults["base_latency_ns"], defaults["reset_s"], defaults["mac_table_size"])


# ---- the generator ----


def test_generator_identity_and_registration() -> None:
    gen = make_gen()
    assert isinstance(gen, Measurer)
    assert gen.SIMULATED is True
    assert gen.version().startswith("simulated DUT model 1 (vsperf ")
    registry: Registry[Any] = Registry("trafficgen", TrafficGenerator)
    registry.register(DummyTrafficGenerator)
    assert registry.resolve("Dummy") == "dummy"


def test_generator_deterministic_per_seed_and_errors() -> None:
    runs = []
    for _ in range(2):
        gen = make_gen({"noise": 0.05, "seed": 11})
        runs.append([gen.trial(T64, LINE_64 * 0.41, 1.0).rx_frames for _ in range(5)])
    assert runs[0] == runs[1]
    assert len(set(runs[0])) > 1  # noise differs from trial to trial
    with make_gen() as entered:
        with pytest.raises(TrafficGenError, match="positive rate"):
            entered.trial(T64, 0.0, 1.0)
        with pytest.raises(TrafficGenError, match="at least one frame"):
            entered.burst(T64, 0)


@pytest.mark.parametrize("frame_size", [64, 128, 256, 512, 1024, 1280, 1518])
@pytest.mark.parametrize("loss_model", ["cliff", "gradual"])
def test_engine_finds_the_model_throughput(frame_size: int, loss_model: str) -> None:
    dut = {"capacity_fps": {64: 9e6, 1518: 1.2e6}, "loss_model": loss_model}
    gen = make_gen(dut)
    traffic = T64.with_frame_size(frame_size)
    line = traffic.line_rate_fps
    for loss_rate in (0.0, 0.5):
        truth = throughput_truth_fps(gen.model, traffic, loss_rate)
        cfg = shipped(ThroughputSearchConfig, duration_s=10.0, loss_rate_percent=loss_rate, resolution_percent=0.1)
        found = rfc2544_throughput(gen, traffic, cfg).metrics["tx_rate_fps"]
        assert isinstance(found, float)
        assert truth - 0.001 * line - 1e-6 <= found <= truth + 1e-6


def test_engine_finds_the_model_back2back() -> None:
    gen = make_gen({"capacity_fps": 12e6, "buffer_frames": 4096})
    truth = back2back_truth_frames(gen.model, T64)
    out = rfc2544_back2back(gen, T64, shipped(Back2BackConfig, duration_s=1.0, granularity_frames=16))
    found = out.metrics["b2b_frames"]
    assert isinstance(found, int)
    assert truth - 16 <= found <= truth


def test_noisy_model_answers_within_band() -> None:
    gen = make_gen({"capacity_fps": 10e6, "noise": 0.02, "seed": 5})
    cfg = shipped(ThroughputSearchConfig, duration_s=1.0, repetitions=5)
    out = rfc2544_throughput(gen, T64, cfg)
    reps = [r["throughput_rx_fps"] for r in out.details["repetitions"]]
    assert all(10e6 * 0.98 - 0.001 * LINE_64 <= r <= 10e6 * 1.02 for r in reps)
    lo, hi = out.metrics["throughput_rx_fps_min"], out.metrics["throughput_rx_fps_max"]
    assert isinstance(lo, float) and isinstance(hi, float)
    assert lo < hi


def test_every_traffic_type_through_dispatch_with_simulated_latency() -> None:
    gen = make_gen()
    traffic_types: tuple[TrafficType, ...] = (
        "rfc2544_throughput",
        "rfc2544_back2back",
        "rfc2544_continuous",
        "burst",
    )
    for traffic_type in traffic_types:
        traffic = Traffic(traffic_type=traffic_type, frame_size_bytes=128)
        out = run_from_settings(gen, traffic, make_settings(TRAFFICGEN_DURATION=2))
        assert out.trials
        for key, value in out.metrics.items():
            assert value is None or isinstance(value, int | float | str), key
        if traffic_type != "rfc2544_back2back":
            assert isinstance(out.metrics["avg_latency_ns"], float)


def test_wall_clock_trials_last_their_duration_and_answer_the_same() -> None:
    quick, timed = make_gen(), make_gen({"wall_clock": True})
    started = time.monotonic()
    answer = timed.trial(Traffic(frame_size_bytes=64), 1e6, 0.3)
    assert time.monotonic() - started >= 0.3
    assert answer == quick.trial(Traffic(frame_size_bytes=64), 1e6, 0.3)
