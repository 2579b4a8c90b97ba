"""Latency at loads after a throughput search, on the simulated DUT."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from vsperf.errors import ConfigError
from vsperf.search.load_latency import LoadLatencyConfig, goal_rate_fps, latency_at_loads
from vsperf.search.measurer import TrialResult
from vsperf.search.outcome import SearchOutcome
from vsperf.traffic import Traffic
from vsperf.trafficgen.dummy.model import model_from_settings, simulate_rate_trial

DUT: dict[str, Any] = {"capacity_fps": 1e6, "buffer_frames": 1000, "port_speed_gbps": 10.0, "noise": 0.0, "seed": 1,
                       "loss_model": "cliff", "base_latency_ns": 5000.0, "recovery_s": 0.0, "reset_s": 1.0,
                       "mac_table_size": 100, "learning_rate_fps": 1e6,
                       "noise_shape": "uniform", "stall_per_s": 0.0, "stall_s": 0.0}
SETTINGS = {"TRAFFICGEN_LATENCY_LOADS_PERCENT": [0, 10, 50, 90], "TRAFFICGEN_LATENCY_LOADS_GOAL": "pdr",
            "TRAFFICGEN_LATENCY_LOADS_LOW_FPS": 9000, "TRAFFICGEN_LATENCY_LOADS_DURATION_S": 1.0}


class Dut:
    def __init__(self) -> None:
        self.model = model_from_settings(DUT)
        self.rates: list[float] = []

    def trial(self, traffic: Traffic, rate_fps: float, duration_s: float) -> TrialResult:
        self.rates.append(rate_fps)
        return simulate_rate_trial(self.model, traffic, rate_fps, duration_s, len(self.rates))

    def burst(self, traffic: Traffic, frames: int) -> TrialResult:
        raise AssertionError("no burst")


def test_each_load_gets_its_own_trial_and_histogram() -> None:
    cfg = LoadLatencyConfig.from_settings(SETTINGS, ("ndr", "pdr"))
    assert cfg is not None
    dut, traffic = Dut(), Traffic(latency_histogram=True)
    searched = SearchOutcome({"pdr_tx_rate_fps": 800_000.0, "tx_rate_fps": 700_000.0}, (), {"search": {}})
    out = latency_at_loads(dut, traffic, cfg, searched)
    assert dut.rates == pytest.approx([9000, 80_000, 400_000, 720_000])
    assert [t.purpose for t in out.trials] == ["latency at 0 % of pdr (9000 fps)", "latency at 10 % of pdr",
                                               "latency at 50 % of pdr", "latency at 90 % of pdr"]
    assert [e["trial"] for e in out.details["load_latency"]] == [1, 2, 3, 4] and "search" in out.details
    assert all(t.latency is not None and t.latency.hdrh for t in out.trials)
    assert out.metrics["pdr90_avg_latency_ns"] > out.metrics["pdr10_avg_latency_ns"] >= 5000
    assert out.metrics["pdr50_p99.999_latency_ns"] is not None and out.metrics["pdr0_frame_loss_percent"] == 0


def test_no_goal_rate_is_said() -> None:
    cfg = LoadLatencyConfig((50.0,), "throughput", 1000.0, 1.0)
    out = latency_at_loads(Dut(), Traffic(), cfg, SearchOutcome({"tx_rate_fps": 0.0}, ()))
    assert out.anomalies == ("latency at loads not measured: the search found no throughput rate",)
    assert goal_rate_fps({"tx_rate_fps": 5.0}, "throughput") == 5.0


def test_a_goal_the_search_does_not_have_is_one_line() -> None:
    assert LoadLatencyConfig.from_settings({**SETTINGS, "TRAFFICGEN_LATENCY_LOADS_PERCENT": []}, ()) is None
    with pytest.raises(ConfigError, match=r"TRAFFICGEN_LATENCY_LOADS_GOAL 'pdr'.*valid: throughput$"):
        LoadLatencyConfig.from_settings(SETTINGS, ())
    with pytest.raises(ConfigError, match=r"loads must be 0\.\.100"):
        replace(LoadLatencyConfig((10.0,), "pdr", 1.0, 1.0), loads_percent=(120.0,))
