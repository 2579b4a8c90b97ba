"""The simulated DUT's frame mix, latency distribution and cold start (which a warm start absorbs)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from vsperf.search import hdr
from vsperf.traffic import Traffic
from vsperf.traffic.mix import parse_mix
from vsperf.traffic.warmup import WarmStart
from vsperf.trafficgen.dummy.model import model_from_settings, simulate_rate_trial

DUT: dict[str, Any] = {"capacity_fps": 1e6, "buffer_frames": 1000, "port_speed_gbps": 10.0, "noise": 0.0, "seed": 1,
                       "loss_model": "cliff", "base_latency_ns": 5000.0, "recovery_s": 0.0, "reset_s": 1.0,
                       "mac_table_size": 100, "learning_rate_fps": 1e6, "cold_start_s": 0.1,
                       "noise_shape": "uniform", "stall_per_s": 0.0, "stall_s": 0.0}


def test_a_cold_start_loses_frames_that_a_warm_start_saves() -> None:
    model = model_from_settings(DUT)
    cold = simulate_rate_trial(model, Traffic(), 900_000.0, 1.0, 1)
    # half capacity for 0.1 s: (900k - 500k) * 0.1 - 1000 queued frames are lost
    assert cold.loss_frames == 39_000 and cold.warm_frames == 0
    warm = replace(Traffic(), warm_start=WarmStart("lead-in", 0.1, 10.0))
    warmed = simulate_rate_trial(model, warm, 900_000.0, 1.0, 1)
    assert warmed.loss_frames == 0 and warmed.warm_frames == 9000
    short = replace(Traffic(), warm_start=WarmStart("ramp", 0.05, 10.0))
    assert 0 < simulate_rate_trial(model, short, 900_000.0, 1.0, 1).loss_frames < 39_000


def test_a_mix_and_its_distribution() -> None:
    model = model_from_settings({**DUT, "cold_start_s": 0.0})
    traffic = replace(Traffic().with_frame_size(parse_mix("IMIX")), latency_histogram=True)
    trial = simulate_rate_trial(model, traffic, 600_000.0, 1.0, 1)
    assert dict(trial.rx_frames_by_size) == {64: 350_000, 570: 200_000, 1518: 50_000}
    assert trial.latency is not None and hdr.total_count(trial.latency.hdrh) == trial.rx_frames
    assert trial.latency.percentiles_ns["p50"] >= 5000 and "p99.999" in trial.latency.percentiles_ns
    assert trial.line_rate_fps == traffic.line_rate_fps
