"""Placing the long trials of ndr_pdr and mlr: scouts first, then a width below the upper bound."""

from __future__ import annotations

import random

import pytest
from dutsim import SimDut
from settings_util import make_settings

from vsperf.search.confirm import MAX_SCOUTS, noise_seen, scout_count
from vsperf.search.goal_config import goal_search_config_from_settings
from vsperf.search.measurer import TrialResult
from vsperf.search.mlr import mlr_throughput
from vsperf.search.ndr_pdr import ndr_pdr_throughput
from vsperf.search.outcome import SearchOutcome
from vsperf.traffic import Traffic

T64 = Traffic(frame_size_bytes=64)
LINE = T64.line_rate_fps
CAP = 0.4 * LINE
WIDTH = 0.005
FINAL_S = 60.0


def trial(load: float, loss_ratio: float) -> TrialResult:
    tx = 1_000_000
    return TrialResult(kind="rate", frame_size_bytes=64, requested_rate_fps=load, duration_s=1.0, tx_frames=tx,
                       rx_frames=tx - round(tx * loss_ratio), actual_tx_rate_fps=load, line_rate_fps=LINE)


def noisy_capacities(noise: float, seed: int, count: int = 400) -> list[float]:
    draw = random.Random(seed)
    return [CAP * (1 + noise * draw.uniform(-1, 1)) for _ in range(count)]


def search(algorithm: str, dut: SimDut) -> SearchOutcome:
    settings = make_settings({"TRAFFICGEN_DURATION": FINAL_S, "TRAFFICGEN_SEARCH_INITIAL_DURATION_S": 1.0})
    cfg = goal_search_config_from_settings(settings, algorithm)  # type: ignore[arg-type]
    run = ndr_pdr_throughput if algorithm == "ndr_pdr" else mlr_throughput
    return run(dut, T64, cfg)


def test_noise_is_seen_when_loss_falls_as_the_load_grows() -> None:
    steady = [(1.0, trial(1.0, 0.0)), (2.0, trial(2.0, 0.01)), (3.0, trial(3.0, 0.2))]
    assert not noise_seen(steady)
    assert noise_seen([*steady, (2.5, trial(2.5, 0.0))])  # a pass above a failure
    assert noise_seen([(1.0, trial(1.0, 0.3)), (2.0, trial(2.0, 0.1))])  # less loss at more load
    assert not noise_seen([(1.0, trial(1.0, 0.1)), (1.0, trial(1.0, 0.0))])  # one load: not an order


def test_scouts_grow_with_what_a_failed_long_trial_costs() -> None:
    assert scout_count(noisy=False, long_s=60, short_s=1) == 1
    assert scout_count(noisy=True, long_s=1, short_s=1) == 0  # nothing longer to protect
    assert scout_count(noisy=True, long_s=4, short_s=1) == 2
    assert scout_count(noisy=True, long_s=9, short_s=1) == 3
    assert scout_count(noisy=True, long_s=60, short_s=1) == MAX_SCOUTS


@pytest.mark.parametrize("algorithm", ["ndr_pdr", "mlr"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_ndr_long_trial_follows_a_passing_shorter_one_at_its_load(algorithm: str, seed: int) -> None:
    out = search(algorithm, SimDut(CAP, capacities=noisy_capacities(0.02, seed)))
    finals = [i for i, t in enumerate(out.trials) if t.duration_s >= FINAL_S and t.purpose == "ndr final"]
    assert finals
    for index in finals:
        load = out.trials[index].requested_rate_fps
        shorter = [p for p in out.trials[:index] if p.duration_s < FINAL_S and p.requested_rate_fps == load]
        assert shorter and shorter[-1].loss_ratio == 0  # a scout (or a shorter target's trial) passed there


@pytest.mark.parametrize("algorithm", ["ndr_pdr", "mlr"])
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_noisy_answers_stay_in_the_noise_band(algorithm: str, seed: int) -> None:
    noise = 0.02
    out = search(algorithm, SimDut(CAP, capacities=noisy_capacities(noise, seed)))
    ndr = out.metrics["ndr_tx_rate_fps"]
    assert isinstance(ndr, float)
    assert CAP * (1 - noise) * (1 - WIDTH) <= ndr <= CAP * (1 + noise)
    assert out.metrics["ndr_full_trials"] == 1  # exceed ratio 0: one full-length pass decides


def test_a_failed_confirmation_is_counted_and_the_answer_is_below_it() -> None:
    # Short trials see a DUT above CAP; every long trial sees it 3 % lower: the first confirmation fails.
    dut = SimDut(CAP, capacity_for_duration=lambda cap, s: cap * (0.97 if s >= FINAL_S else 1.0))
    out = search("ndr_pdr", dut)
    failed = out.metrics["ndr_failed_confirmations"]
    assert isinstance(failed, int) and failed >= 1
    ndr = out.metrics["ndr_tx_rate_fps"]
    assert isinstance(ndr, float) and ndr <= CAP * 0.97
    spread = out.metrics["ndr_rx_spread_percent"]
    assert isinstance(spread, float) and spread >= 0.0
