"""RFC 2544 throughput search against simulated DUTs with known answers."""

from __future__ import annotations

import math
import re

import pytest
from dutsim import LossyGenerator, SimDut
from search_shipped import shipped

from vsperf.errors import SearchError
from vsperf.search.config import ThroughputSearchConfig
from vsperf.search.measurer import TrialResult
from vsperf.search.throughput import LEARNING_RATE_PERCENT, rfc2544_throughput
from vsperf.traffic import Traffic
from vsperf.units import l2_mbps

TRAFFIC = Traffic(frame_size_bytes=64)  # bidirectional 10 GbE: 29,761,904.76 fps aggregate
LINE = TRAFFIC.line_rate_fps
RATE_KEYS = (
    "tx_rate_fps",
    "throughput_rx_fps",
    "tx_rate_mbps",
    "throughput_rx_mbps",
    "tx_rate_percent",
    "throughput_rx_percent",
    "frame_loss_percent",
    "min_latency_ns",
    "max_latency_ns",
    "avg_latency_ns",
    "throughput_rx_fps_min",
    "throughput_rx_fps_max",
)


def cfg(**kw: object) -> ThroughputSearchConfig:
    base: dict[str, object] = {"duration_s": 10.0, "resolution_percent": 0.1}
    base.update(kw)
    return shipped(ThroughputSearchConfig, **base)


@pytest.mark.parametrize("capacity_percent", [0.5, 10.0, 33.3, 40.0, 77.77, 99.95])
def test_cliff_found_within_resolution_and_never_above(capacity_percent: float) -> None:
    capacity = LINE * capacity_percent / 100
    out = rfc2544_throughput(SimDut(capacity), TRAFFIC, cfg())
    found = out.metrics["throughput_rx_fps"]
    assert isinstance(found, float)
    assert found <= capacity
    assert found >= capacity - 0.1 * LINE / 100
    assert out.metrics["frame_loss_percent"] == 0.0
    assert out.anomalies == ()


def test_first_trial_is_at_max_rate_and_a_pass_ends_the_search() -> None:
    dut = SimDut(LINE * 2)
    out = rfc2544_throughput(dut, TRAFFIC, cfg(max_rate_percent=80.0))
    assert len(out.trials) == 1
    assert dut.calls[0][1] == pytest.approx(0.8 * LINE)
    assert out.metrics["throughput_rx_percent"] == pytest.approx(80.0)
    assert out.metrics["tx_rate_mbps"] == pytest.approx(l2_mbps(0.8 * LINE, 64))


def test_bisection_halves_the_interval() -> None:
    out = rfc2544_throughput(SimDut(LINE * 0.333), TRAFFIC, cfg(resolution_percent=0.1))
    rates = [t.requested_rate_fps / LINE * 100 for t in out.trials]
    assert rates[:4] == pytest.approx([100.0, 50.0, 25.0, 37.5])
    assert len(rates) == 1 + math.ceil(math.log2(100 / 0.1))


def test_bounds_and_resolution_respected() -> None:
    capacity = LINE * 0.5
    out = rfc2544_throughput(
        SimDut(capacity), TRAFFIC, cfg(min_rate_percent=20, max_rate_percent=90, resolution_percent=1)
    )
    rates = [t.requested_rate_fps / LINE * 100 for t in out.trials]
    assert rates[0] == pytest.approx(90)
    assert all(20 < r <= 90 for r in rates)
    found = out.metrics["throughput_rx_percent"]
    assert isinstance(found, float)
    assert 49.0 <= found <= 50.0
    assert (
        out.details["repetitions"][0]["upper_bound_percent"]
        - out.details["repetitions"][0]["lower_bound_percent"]
        <= 1.0
    )


@pytest.mark.parametrize("loss_rate_percent", [0.0, 0.5])
def test_gradual_loss(loss_rate_percent: float) -> None:
    capacity = LINE * 0.4
    ramp = 0.2  # loss ratio 0.2 * overload: 0.5 % loss at 2.5 % above capacity
    truth = capacity * (1 + loss_rate_percent / 100 / ramp)
    out = rfc2544_throughput(
        SimDut(capacity, loss="ramp", ramp=ramp), TRAFFIC, cfg(loss_rate_percent=loss_rate_percent)
    )
    tx = out.metrics["tx_rate_fps"]
    assert isinstance(tx, float)
    assert truth - 0.1 * LINE / 100 <= tx <= truth
    loss = out.metrics["frame_loss_percent"]
    assert isinstance(loss, float)
    assert loss <= loss_rate_percent
    if loss_rate_percent:
        assert loss > 0  # the answer is above the loss-free capacity
        assert tx > capacity * 1.02


def test_noisy_repetitions_stay_in_noise_band_and_report_min_max() -> None:
    nominal = LINE * 0.5
    capacities = [nominal * f for f in (0.98, 1.01, 0.995, 1.02, 0.985, 1.0, 0.99)]
    out = rfc2544_throughput(SimDut(nominal, capacities=capacities), TRAFFIC, cfg(repetitions=4))
    reps = out.details["repetitions"]
    assert [r["repetition"] for r in reps] == [1, 2, 3, 4]
    answers = [r["throughput_rx_fps"] for r in reps]
    assert all(nominal * 0.98 - 0.1 * LINE / 100 <= a <= nominal * 1.02 for a in answers)
    assert out.metrics["throughput_rx_fps"] == pytest.approx(sum(answers) / 4)
    assert out.metrics["throughput_rx_fps_min"] == min(answers)
    assert out.metrics["throughput_rx_fps_max"] == max(answers)
    assert min(answers) < max(answers)
    purposes = {t.purpose for t in out.trials}
    assert purposes == {"search", "repetition 2", "repetition 3", "repetition 4"}
    assert sum(r["trial_count"] for r in reps) == len(out.trials) == out.details["trial_count"]


def test_generator_below_dut_capacity_is_the_limit_not_dut_loss() -> None:
    gen_max = LINE * 0.5
    out = rfc2544_throughput(SimDut(LINE * 0.8, generator_max_fps=gen_max), TRAFFIC, cfg())
    assert out.metrics["frame_loss_percent"] == 0.0
    assert out.metrics["throughput_rx_fps"] == pytest.approx(gen_max)
    assert out.trials[0].under_delivered
    assert len(out.trials) == 1  # a pass at what the generator could send ends the search
    assert any("generator was the limit" in a for a in out.anomalies)
    assert out.details["repetitions"][0]["generator_ceiling_percent"] == pytest.approx(50.0)


def test_generator_own_loss_is_not_taken_as_dut_loss() -> None:
    capacity = LINE * 0.6
    gen = LossyGenerator(SimDut(capacity), max_fps=LINE * 0.7, own_loss_ratio=0.2)
    out = rfc2544_throughput(gen, TRAFFIC, cfg())
    # The search continued below the generator's ceiling and found the DUT's real capacity.
    found = out.metrics["throughput_rx_fps"]
    assert isinstance(found, float)
    assert capacity - 0.1 * LINE / 100 <= found <= capacity
    assert all(t.requested_rate_fps <= LINE * 0.7 for t in out.trials[1:])
    assert any("under-delivered" in a for a in out.anomalies)
    assert not any("generator was the limit" in a for a in out.anomalies)


def test_generator_ceiling_with_loss_bounds_search_from_above() -> None:
    # The generator reaches only 70 % and loses frames itself there; the DUT could do 90 %.
    gen = LossyGenerator(SimDut(LINE * 0.9), max_fps=LINE * 0.7, own_loss_ratio=0.2)
    out = rfc2544_throughput(gen, TRAFFIC, cfg())
    found = out.metrics["throughput_rx_percent"]
    assert isinstance(found, float)
    assert 69.9 - 1e-9 <= found <= 70.0
    assert out.metrics["frame_loss_percent"] == 0.0
    assert any("generator was the limit" in a for a in out.anomalies)


def test_no_rate_passes_and_the_search_has_no_answer() -> None:
    # The DUT forwards 1 fps: below the lowest rate a search tries (0.001 % of line rate).
    out = rfc2544_throughput(SimDut(1.0), TRAFFIC, cfg(resolution_percent=1))
    assert out.metrics["throughput_rx_fps"] == 0.0
    assert out.metrics["tx_rate_fps"] == 0.0
    assert out.failure is not None
    assert re.fullmatch(r"no rate passed \(loss allowed 0 %\): the lowest rate tried, \d+ fps \(0\.00\d+ % of line "
                        r"rate\), lost 99\.\d+ % \(the DUT forwarded 1 fps\)", out.failure), out.failure
    assert any(a.startswith("no rate passed") for a in out.anomalies)
    assert len(out.trials) <= 20
    with pytest.raises(SearchError, match=r"^64 B: no rate passed"):
        out.raise_if_failed("64 B")


def test_resolution_coarser_than_the_generator_ceiling_does_not_end_at_zero() -> None:
    # pvp_tput with a QEMU guest on the Linux bridge at 1 % resolution: the generator reaches
    # 20 kfps (0.07 % of line rate, a fraction of one step), the guest forwards 19.5 kfps, so the
    # first trial under-delivers and loses frames. The search used to end there with 0 fps.
    dut = SimDut(19_500.0, generator_max_fps=20_000.0)
    out = rfc2544_throughput(dut, TRAFFIC, cfg(resolution_percent=1))
    found = out.metrics["throughput_rx_fps"]
    assert isinstance(found, float)
    assert 19_500.0 * (1 - 0.01) <= found <= 19_500.0
    assert out.failure is None
    assert len(out.trials) <= 12
    # A DUT that keeps up with a generator reaching a resolution step still ends at once.
    assert len(rfc2544_throughput(SimDut(LINE), TRAFFIC, cfg(resolution_percent=1)).trials) == 1


def test_min_rate_is_tested_when_nothing_passes_above_it() -> None:
    dut = SimDut(LINE * 0.05)
    out = rfc2544_throughput(dut, TRAFFIC, cfg(min_rate_percent=10, resolution_percent=1))
    assert out.trials[-1].requested_rate_fps == pytest.approx(LINE * 0.10)
    assert out.metrics["throughput_rx_fps"] == 0.0
    assert any("no rate passed" in a for a in out.anomalies)
    passing = rfc2544_throughput(SimDut(LINE * 0.10), TRAFFIC, cfg(min_rate_percent=10, resolution_percent=1))
    assert passing.metrics["throughput_rx_percent"] == pytest.approx(10.0)
    assert passing.anomalies == ()


def test_learning_trial_first_and_not_judged() -> None:
    out = rfc2544_throughput(SimDut(LINE * 0.3), TRAFFIC, cfg(learning_duration_s=5.0))
    first = out.trials[0]
    assert first.purpose == "learning"
    assert first.duration_s == 5.0
    assert first.requested_rate_fps == pytest.approx(LINE * LEARNING_RATE_PERCENT / 100)
    assert all(t.purpose == "search" for t in out.trials[1:])
    assert out.trials[1].requested_rate_fps == pytest.approx(LINE)


def test_verification_pass_reports_the_long_trial() -> None:
    out = rfc2544_throughput(SimDut(LINE * 0.3), TRAFFIC, cfg(verify=True, verify_duration_s=60.0))
    last = out.trials[-1]
    assert last.purpose == "verification"
    assert last.duration_s == 60.0
    assert out.metrics["tx_rate_fps"] == last.actual_tx_rate_fps
    assert out.details["verification"]["confirmed"] is True
    assert out.anomalies == ()


def test_verification_failure_steps_one_resolution_lower() -> None:
    # The DUT holds 30 % in short trials but only 29.95 % over 60 s.
    def long_trials_worse(capacity: float, duration_s: float) -> float:
        return LINE * 0.2995 if duration_s >= 60 else capacity

    dut = SimDut(LINE * 0.3, capacity_for_duration=long_trials_worse)
    out = rfc2544_throughput(dut, TRAFFIC, cfg(verify=True, verify_duration_s=60.0))
    purposes = [t.purpose for t in out.trials]
    assert purposes[-2:] == ["verification", "verification 2"]
    first, second = out.trials[-2:]
    assert second.requested_rate_fps == pytest.approx(first.requested_rate_fps - 0.001 * LINE)
    assert out.metrics["throughput_rx_fps"] == second.rx_rate_fps
    assert out.metrics["frame_loss_percent"] == 0.0
    assert any("verification trial" in a for a in out.anomalies)
    assert out.details["verification"]["confirmed"] is True


def test_verification_failing_twice_is_not_confirmed() -> None:
    def long_trials_bad(capacity: float, duration_s: float) -> float:
        return LINE * 0.2 if duration_s >= 60 else capacity

    dut = SimDut(LINE * 0.3, capacity_for_duration=long_trials_bad)
    out = rfc2544_throughput(dut, TRAFFIC, cfg(verify=True, verify_duration_s=60.0))
    assert out.details["verification"]["confirmed"] is False
    assert any("not confirmed" in a for a in out.anomalies)
    found = out.metrics["throughput_rx_fps"]
    assert isinstance(found, float)
    assert LINE * 0.299 <= found <= LINE * 0.3  # the search's answer is kept


def test_every_metric_present_and_numeric() -> None:
    out = rfc2544_throughput(SimDut(LINE * 0.4), TRAFFIC, cfg())
    for key in RATE_KEYS:
        value = out.metrics[key]
        assert isinstance(value, int | float) and not isinstance(value, bool), key
    assert out.metrics["type"] == "rfc2544_throughput"
    assert out.metrics["packet_size"] == 64
    assert out.metrics["traffic_type"] == "udp"
    rx_fps = out.metrics["throughput_rx_fps"]
    assert isinstance(rx_fps, float)
    assert out.metrics["throughput_rx_percent"] == pytest.approx(100 * rx_fps / LINE)


def test_latency_none_when_not_measured() -> None:
    out = rfc2544_throughput(SimDut(LINE * 0.4, with_latency=False), TRAFFIC, cfg())
    assert out.metrics["min_latency_ns"] is None
    assert out.metrics["avg_latency_ns"] is None
    assert out.metrics["max_latency_ns"] is None


def test_trial_log_complete_and_reported_live() -> None:
    seen: list[TrialResult] = []
    dut = SimDut(LINE * 0.37)
    out = rfc2544_throughput(
        dut, TRAFFIC, cfg(learning_duration_s=1.0, repetitions=2, verify=True), seen.append
    )
    assert tuple(seen) == out.trials
    assert len(out.trials) == len(dut.calls)
    assert out.details["trial_count"] == len(out.trials)
    assert out.details["trial_time_s"] == pytest.approx(sum(t.duration_s for t in out.trials))
    assert out.details["search"]["resolution_percent"] == 0.1
    assert out.details["search"]["line_rate_fps"] == pytest.approx(LINE)
    assert all(t.purpose for t in out.trials)
