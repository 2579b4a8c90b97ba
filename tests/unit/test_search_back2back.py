"""RFC 2544 back-to-back search against simulated DUTs with known answers."""

from __future__ import annotations

import math

import pytest
from dutsim import SimDut, lossless_burst
from search_shipped import shipped

from vsperf.search.back2back import longest_burst_frames, probe_frames, rfc2544_back2back
from vsperf.search.config import Back2BackConfig
from vsperf.search.measurer import TrialResult
from vsperf.traffic import Traffic

TRAFFIC = Traffic(traffic_type="rfc2544_back2back", frame_size_bytes=64)
LINE = TRAFFIC.line_rate_fps


@pytest.mark.parametrize("granularity", [1, 10, 1000])
@pytest.mark.parametrize(("capacity_percent", "buffer_frames"), [(40.0, 4096), (90.0, 512), (10.0, 100_000)])
def test_b2b_equals_lossless_burst_within_granularity(
    capacity_percent: float, buffer_frames: int, granularity: int
) -> None:
    capacity = LINE * capacity_percent / 100
    truth = math.floor(lossless_burst(capacity, LINE, buffer_frames) + 1e-6)
    out = rfc2544_back2back(
        SimDut(capacity, buffer_frames=buffer_frames),
        TRAFFIC,
        shipped(Back2BackConfig, duration_s=2.0, granularity_frames=granularity),
    )
    found = out.metrics["b2b_frames"]
    assert isinstance(found, int)
    assert truth - granularity < found <= truth
    assert out.metrics["b2b_frame_loss_percent"] == 0.0
    assert out.trials[0].purpose == "probe"
    longest = longest_burst_frames(TRAFFIC, shipped(Back2BackConfig, duration_s=2.0, granularity_frames=1))
    assert out.details["search"]["max_frames"] == longest
    assert out.anomalies == ()


def test_longest_burst_is_line_rate_times_duration() -> None:
    two_seconds = shipped(Back2BackConfig, duration_s=2.0, granularity_frames=1)
    assert longest_burst_frames(TRAFFIC, two_seconds) == math.floor(LINE * 2)


def test_dut_at_line_rate_absorbs_everything() -> None:
    out = rfc2544_back2back(SimDut(LINE * 1.5), TRAFFIC, shipped(Back2BackConfig, duration_s=1.0, granularity_frames=1))
    assert [t.purpose for t in out.trials] == ["probe", "search"]  # the probe, then the longest burst
    assert out.metrics["b2b_frames"] == math.floor(LINE)
    assert any("lower bound" in a for a in out.anomalies)


def test_repetitions_average_min_max() -> None:
    capacities = [LINE * 0.4, LINE * 0.5]  # alternating per burst
    dut = SimDut(LINE * 0.4, buffer_frames=1000, capacities=capacities)
    out = rfc2544_back2back(
        dut, TRAFFIC, shipped(Back2BackConfig, duration_s=1.0, granularity_frames=1, repetitions=3)
    )
    reps = [r["b2b_frames"] for r in out.details["repetitions"]]
    assert len(reps) == 3
    low, high = lossless_burst(LINE * 0.4, LINE, 1000), lossless_burst(LINE * 0.5, LINE, 1000)
    assert all(low - 1 <= r <= high for r in reps)
    assert out.metrics["b2b_frames"] == round(sum(reps) / 3)
    assert out.metrics["b2b_frames_min"] == min(reps)
    assert out.metrics["b2b_frames_max"] == max(reps)
    assert {t.purpose for t in out.trials} == {"probe", "search", "repetition 2", "repetition 3"}


class ChangingDut:
    """Lossless up to limits[k] frames, k = how many longest bursts were sent so far.

    The first repetition searches inside the lossy probe (it never sends the longest burst);
    every later repetition starts with the longest burst, which moves on to the next limit.
    """

    def __init__(self, limits: list[int], max_frames: int) -> None:
        self.limits, self.max_frames, self.longest_seen = limits, max_frames, 0

    def trial(self, traffic: Traffic, rate_fps: float, duration_s: float) -> TrialResult:
        raise AssertionError("back-to-back runs bursts only")

    def burst(self, traffic: Traffic, frames: int) -> TrialResult:
        if frames == self.max_frames:
            self.longest_seen += 1
        lost = max(0, frames - self.limits[min(self.longest_seen, len(self.limits) - 1)])
        return TrialResult("burst", 64, LINE, frames / LINE, frames, frames - lost, LINE, LINE)


def test_repetitions_report_average_of_different_answers() -> None:
    cfg = shipped(Back2BackConfig, duration_s=0.01, granularity_frames=1, repetitions=3)
    dut = ChangingDut([1000, 2000, 4000], longest_burst_frames(TRAFFIC, cfg))
    out = rfc2544_back2back(dut, TRAFFIC, cfg)
    assert [r["b2b_frames"] for r in out.details["repetitions"]] == [1000, 2000, 4000]
    assert out.metrics["b2b_frames"] == 2333
    assert (out.metrics["b2b_frames_min"], out.metrics["b2b_frames_max"]) == (1000, 4000)


def test_bisection_halves_the_interval() -> None:
    cfg = shipped(Back2BackConfig, duration_s=1.0, granularity_frames=1)
    longest = longest_burst_frames(TRAFFIC, cfg)
    out = rfc2544_back2back(ChangingDut([12345], longest), TRAFFIC, cfg)
    probe = probe_frames(TRAFFIC, cfg)
    # The probe lost frames: the search starts inside it and halves from there.
    assert [t.tx_frames for t in out.trials[:4]] == [probe, probe // 2, probe // 4, probe // 8]
    assert len(out.trials) <= 2 + math.ceil(math.log2(longest))


def test_rfc9004_buffer_time() -> None:
    capacity = LINE * 0.4
    dut = SimDut(capacity, buffer_frames=4096)
    cfg = shipped(Back2BackConfig, duration_s=1.0, granularity_frames=1)
    plain = rfc2544_back2back(dut, TRAFFIC, cfg)
    frames = plain.metrics["b2b_frames"]
    assert isinstance(frames, int)
    assert plain.metrics["b2b_buffer_time_s"] == pytest.approx(frames / LINE)
    assert "b2b_corrected_buffer_time_s" not in plain.metrics
    corrected = rfc2544_back2back(SimDut(capacity, buffer_frames=4096), TRAFFIC, cfg, throughput_fps=capacity)
    # With the DUT's throughput the corrected time is its queue drained at line rate: buffer / line.
    assert corrected.metrics["b2b_corrected_buffer_time_s"] == pytest.approx(4096 / LINE, rel=1e-3)
    assert corrected.details["search"]["throughput_fps"] == capacity


def test_nothing_lossless() -> None:
    cfg = shipped(Back2BackConfig, duration_s=0.001, granularity_frames=1)
    out = rfc2544_back2back(SimDut(0.0, buffer_frames=0), TRAFFIC, cfg)
    assert out.metrics["b2b_frames"] == 0
    frame_loss = out.metrics["b2b_frame_loss_percent"]
    assert isinstance(frame_loss, float)
    assert frame_loss > 0
    assert any("no burst was lossless" in a for a in out.anomalies)


def test_slow_generator_bursts_last_the_duration_not_longer() -> None:
    # A generator bursting at 1 % of line rate would need 100 s to send 1 s of line rate.
    gen_fps = LINE * 0.01
    dut = SimDut(LINE * 0.5, buffer_frames=1000, generator_max_fps=gen_fps)
    cfg = shipped(Back2BackConfig, duration_s=1.0, granularity_frames=100)
    out = rfc2544_back2back(dut, TRAFFIC, cfg)
    assert out.details["search"]["max_frames"] <= math.floor(gen_fps * cfg.duration_s)
    search = [t for t in out.trials if t.purpose != "probe"]
    assert max(t.tx_frames for t in search) <= math.floor(gen_fps * cfg.duration_s)
    assert any("below line rate" in a for a in out.anomalies)


def test_bursts_below_line_rate_flagged() -> None:
    dut = SimDut(LINE * 0.4, buffer_frames=1000, generator_max_fps=LINE * 0.8)
    out = rfc2544_back2back(dut, TRAFFIC, shipped(Back2BackConfig, duration_s=0.01, granularity_frames=1))
    assert any("below line rate" in a for a in out.anomalies)


def test_metrics_trials_and_details() -> None:
    seen: list[TrialResult] = []
    dut = SimDut(LINE * 0.4, buffer_frames=2000)
    cfg = shipped(Back2BackConfig, duration_s=1.0, granularity_frames=1, repetitions=2)
    out = rfc2544_back2back(dut, TRAFFIC, cfg, seen.append)
    for key in (
        "b2b_frames",
        "b2b_frames_min",
        "b2b_frames_max",
        "b2b_frame_loss_percent",
        "tx_rate_fps",
        "tx_rate_percent",
        "b2b_buffer_time_s",
    ):
        value = out.metrics[key]
        assert isinstance(value, int | float) and not isinstance(value, bool), key
    assert out.metrics["tx_rate_percent"] == pytest.approx(100.0)
    assert out.metrics["type"] == "rfc2544_back2back"
    assert out.metrics["packet_size"] == 64
    assert tuple(seen) == out.trials
    assert len(out.trials) == len(dut.calls) == out.details["trial_count"]
    assert all(t.kind == "burst" for t in out.trials)
    assert out.details["trial_time_s"] == pytest.approx(sum(t.duration_s for t in out.trials))
