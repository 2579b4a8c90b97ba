"""RFC 2544 latency at the throughput, repeated."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest
from dutsim import SimDut
from search_shipped import shipped
from settings_util import make_settings

from vsperf.errors import ConfigError, TrafficGenError
from vsperf.search.latency import LatencyConfig, latency_config_from_settings, latency_summary, rfc2544_latency
from vsperf.search.measurer import LatencyStats, TrialResult
from vsperf.search.select import KnownThroughput
from vsperf.traffic import Traffic

T64 = Traffic(traffic_type="rfc2544_latency", frame_size_bytes=64)
LINE = T64.line_rate_fps
CFG = shipped(LatencyConfig, duration_s=120, repetitions=3)


def at(rate: float) -> KnownThroughput:
    return KnownThroughput(rate, "given")


@dataclass
class Percentiles(SimDut):
    """Timestamps every frame; percentiles grow with each trial."""

    def trial(self, traffic: Traffic, rate_fps: float, duration_s: float) -> TrialResult:
        result = super().trial(traffic, rate_fps, duration_s)
        n = len(self.calls)
        stats = LatencyStats(min_ns=1000.0 * n, avg_ns=2000.0 * n, max_ns=9000.0 * n,
                             percentiles_ns={"p99": 5000.0 * n}, samples=result.rx_frames)
        return replace(result, latency=stats)


def test_trials_at_the_throughput_with_rfc2544_defaults() -> None:
    assert latency_config_from_settings(make_settings({})) == shipped(LatencyConfig, duration_s=120.0, repetitions=20)
    dut = SimDut(0.4 * LINE)
    out = rfc2544_latency(dut, T64, CFG, lambda: at(0.4 * LINE))
    assert dut.calls == [("rate", 0.4 * LINE, 120.0)] * 3
    assert [t.purpose for t in out.trials] == ["latency 1/3", "latency 2/3", "latency 3/3"]
    m = out.metrics
    assert (m["min_latency_ns"], m["avg_latency_ns"], m["max_latency_ns"]) == (1000.0, 2000.0, 5000.0)
    assert m["latency_method"] == "tagged frames"  # SimDut timestamps 10 frames per trial
    assert m["frame_loss_percent"] == 0.0 and m["tx_rate_percent"] == pytest.approx(40.0)
    assert m["type"] == "rfc2544_latency" and out.anomalies == ()


def test_every_frame_timestamped_gives_percentiles() -> None:
    out = rfc2544_latency(Percentiles(0.4 * LINE), T64, CFG, lambda: at(0.3 * LINE))
    m = out.metrics
    assert m["latency_method"] == "all frames"
    assert (m["min_latency_ns"], m["avg_latency_ns"], m["max_latency_ns"]) == (1000.0, 4000.0, 27000.0)
    assert (m["avg_latency_ns_min"], m["avg_latency_ns_max"], m["p99_latency_ns"]) == (2000.0, 6000.0, 10000.0)


def test_loss_during_latency_trials_is_an_anomaly() -> None:
    out = rfc2544_latency(SimDut(0.4 * LINE), T64, CFG, lambda: at(0.5 * LINE))
    assert out.metrics["frame_loss_percent"] == pytest.approx(20.0)
    assert any("queueing in a full buffer" in a for a in out.anomalies)


def test_a_generator_without_latency_fails_the_test() -> None:
    with pytest.raises(TrafficGenError, match="measured no latency: it cannot run rfc2544_latency"):
        rfc2544_latency(SimDut(0.4 * LINE, with_latency=False), T64, CFG, lambda: at(0.3 * LINE))


def test_no_throughput_measures_nothing() -> None:
    dut = SimDut(0.4 * LINE)
    out = rfc2544_latency(dut, T64, CFG, lambda: at(0.0))
    assert dut.calls == [] and out.metrics["avg_latency_ns"] is None
    assert out.details["not_measured"].startswith("no throughput")


def test_generator_short_of_the_rate_is_noted() -> None:
    out = rfc2544_latency(SimDut(LINE, generator_max_fps=0.2 * LINE), T64, CFG, lambda: at(0.3 * LINE))
    assert any("under-delivered" in a for a in out.anomalies)
    assert out.metrics["tx_rate_percent"] == pytest.approx(20.0)


def test_summary_and_config_checks() -> None:
    stats = [LatencyStats(1.0, 2.0, 3.0, samples=5)]
    trial = SimDut(LINE).trial(T64, 100.0, 1.0)
    assert latency_summary(stats, [trial])["latency_samples"] == 5
    with pytest.raises(ConfigError, match="TRAFFICGEN_LATENCY_REPETITIONS"):
        shipped(LatencyConfig, repetitions=0)
