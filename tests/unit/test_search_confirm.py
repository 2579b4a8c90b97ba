"""Placing the long trials of ndr_pdr and mlr: band probes, scouts, then a width below the upper bound."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest
from dutsim import SimDut
from settings_util import make_settings

from vsperf.executor import LocalExecutor
from vsperf.host.workdir import RunContext
from vsperf.search.confirm import (
    PROBE_LABEL,
    SPLIT_LABEL,
    confirm_order,
    max_probes,
)
from vsperf.search.goal_config import goal_search_config_from_settings
from vsperf.search.measurer import TrialResult
from vsperf.search.mlr import mlr_throughput
from vsperf.search.mlr_goals import SearchGoal
from vsperf.search.ndr_pdr import ndr_pdr_throughput
from vsperf.search.outcome import SearchOutcome
from vsperf.traffic import Traffic
from vsperf.trafficgen.dummy.backend import DummyTrafficGenerator

T64 = Traffic(frame_size_bytes=64)
LINE = T64.line_rate_fps
CAP = 0.4 * LINE
WIDTH = 0.005
FINAL_S = 60.0
PDR_RATIO = 0.005  # TRAFFICGEN_PDR_LOSSRATE shipped: 0.5 %


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


@pytest.mark.parametrize("algorithm", ["ndr_pdr", "mlr"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_long_trial_follows_a_passing_shorter_one_at_its_load(algorithm: str, seed: int) -> None:
    out = search(algorithm, SimDut(CAP, capacities=noisy_capacities(0.02, seed)))
    finals = [i for i, t in enumerate(out.trials) if t.duration_s >= FINAL_S]
    assert finals
    for index in finals:
        long_trial = out.trials[index]
        allowed = 0.0 if long_trial.purpose.startswith("ndr") else PDR_RATIO
        load = long_trial.requested_rate_fps
        shorter = [p for p in out.trials[:index] if p.duration_s < FINAL_S and p.requested_rate_fps == load]
        assert shorter and shorter[-1].loss_ratio <= allowed  # a scout (or a shorter target's trial) passed
        goal = long_trial.purpose.split()[0]
        scouts = [p for p in shorter if p.purpose.endswith(" scout") and p.purpose.split()[0] == goal]
        assert len(scouts) <= 1, "one scout per candidate (issue 22: more cost more than they saved)"


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
    # Short trials see a DUT above CAP; every long trial sees it 3 % lower: PDR's confirmations (first)
    # fail until one lands 3 % lower; NDR's own long trial, below PDR's answer, passes at once.
    dut = SimDut(CAP, capacity_for_duration=lambda cap, s: cap * (0.97 if s >= FINAL_S else 1.0))
    out = search("ndr_pdr", dut)
    failed = out.metrics["pdr_failed_confirmations"]
    assert isinstance(failed, int) and failed >= 1
    assert out.metrics["ndr_failed_confirmations"] == 0
    ndr = out.metrics["ndr_tx_rate_fps"]
    assert isinstance(ndr, float) and ndr <= CAP * 0.97
    spread = out.metrics["ndr_rx_spread_percent"]
    assert spread == 0.0  # NDR's one long trial: nothing to spread
    pdr_spread = out.metrics["pdr_rx_spread_percent"]
    assert isinstance(pdr_spread, float) and pdr_spread > 0.0  # its failed confirmations forwarded less


@pytest.mark.parametrize("algorithm", ["ndr_pdr", "mlr"])
def test_a_pdr_trial_losing_below_its_ratio_is_no_failed_ndr_confirmation(algorithm: str) -> None:
    # Loss grows gradually above CAP: PDR's answer lies a few widths above NDR's, and PDR's long
    # trial there loses frames (fewer than PDR allows). NDR's own long trial passes first time.
    out = search(algorithm, SimDut(CAP, loss="ramp", ramp=0.25))
    ndr, pdr = out.metrics["ndr_tx_rate_fps"], out.metrics["pdr_tx_rate_fps"]
    assert isinstance(ndr, float) and isinstance(pdr, float)
    pdr_long = [t for t in out.trials if t.purpose.startswith("pdr") and t.duration_s >= FINAL_S]
    assert any(t.requested_rate_fps > ndr and 0 < t.loss_ratio <= PDR_RATIO for t in pdr_long)
    ndr_long = [t for t in out.trials if t.purpose.startswith("ndr") and t.duration_s >= FINAL_S]
    assert [t.loss_frames for t in ndr_long] == [0]
    assert out.metrics["ndr_failed_confirmations"] == 0
    assert out.metrics["pdr_failed_confirmations"] == 0


def test_mlr_without_preceding_targets_halves_a_far_gap_with_short_trials() -> None:
    # bench_searches case: cliff DUT, 3 Mfps +-0.5 %, seed 2, 10 s finals, 1 s steering. The
    # forwarding-rate guess passes short and the upper bound stays the maximum load (29.8 Mfps):
    # walking down one width per scout, the search ran into the 300-trial guard (NDR and PDR 0).
    cap, noise, final_s = 3_000_000.0, 0.005, 10.0
    dut = {"capacity_fps": cap, "noise": noise, "seed": 2, "loss_model": "cliff"}
    settings = make_settings({"TRAFFICGEN_DUMMY_DUT": dut, "TRAFFICGEN_DURATION": final_s,
                              "TRAFFICGEN_SEARCH_INITIAL_DURATION_S": 1.0, "TRAFFICGEN_MLR_PRECEDING_TARGETS": 0,
                              "TRAFFICGEN_SEARCH_WIDTH_PERCENT": 100 * WIDTH,
                              "TRAFFICGEN_PDR_LOSSRATE": 100 * PDR_RATIO})
    ctx = RunContext(run_id="t", results_dir=Path("/nonexistent"), work_dir=Path("/nonexistent"),
                     executor=LocalExecutor())
    cfg = goal_search_config_from_settings(settings, "mlr")
    assert cfg.preceding_targets == 0
    out = mlr_throughput(DummyTrafficGenerator(settings, ctx), T64, cfg)
    assert out.anomalies == ()
    assert out.details["trial_count"] < 60
    low, high = cap * (1 - noise), cap * (1 + noise)  # a tail-drop DUT: NDR truth is its capacity
    ndr, pdr = out.metrics["ndr_tx_rate_fps"], out.metrics["pdr_tx_rate_fps"]
    assert isinstance(ndr, float) and low * (1 - WIDTH) <= ndr <= high
    assert isinstance(pdr, float) and low / (1 - PDR_RATIO) * (1 - WIDTH) <= pdr <= high / (1 - PDR_RATIO)
    assert any(t.purpose.endswith(SPLIT_LABEL) for t in out.trials)


def dummy_search(algorithm: str, loss_model: str, noise: float, seed: int) -> SearchOutcome:
    """A search on the dummy generator's noisy DUT (capacity 4 Mfps, 64 B), 60 s finals, 1 s steering."""
    dut = {"capacity_fps": 4_000_000, "noise": noise, "seed": seed, "loss_model": loss_model}
    settings = make_settings({"TRAFFICGEN_DUMMY_DUT": dut, "TRAFFICGEN_DURATION": FINAL_S,
                              "TRAFFICGEN_SEARCH_INITIAL_DURATION_S": 1.0})
    ctx = RunContext(run_id="t", results_dir=Path("/nonexistent"), work_dir=Path("/nonexistent"),
                     executor=LocalExecutor())
    cfg = goal_search_config_from_settings(settings, algorithm)  # type: ignore[arg-type]
    run = ndr_pdr_throughput if algorithm == "ndr_pdr" else mlr_throughput
    return run(DummyTrafficGenerator(settings, ctx), T64, cfg)


# Seeded noisy DUTs where the controller before band probes (scouts only) failed 2-3 long trials
# and spent 267-322 trial-seconds; with band probes none fails.
@pytest.mark.parametrize(
    ("algorithm", "loss_model", "noise", "seed"),
    [("ndr_pdr", "gradual", 0.03, 5), ("ndr_pdr", "cliff", 0.03, 10), ("mlr", "gradual", 0.03, 2),
     ("mlr", "gradual", 0.02, 10)],
)
def test_long_trials_placed_at_the_band_bottom_do_not_fail(algorithm: str, loss_model: str, noise: float,
                                                            seed: int) -> None:
    out = dummy_search(algorithm, loss_model, noise, seed)
    failed = [t for t in out.trials if t.duration_s >= FINAL_S
              and t.loss_ratio > (0.0 if t.purpose.startswith("ndr") else PDR_RATIO)]
    assert failed == []
    assert any(t.purpose.endswith(PROBE_LABEL) for t in out.trials)  # the band probes ran
    assert out.details["trial_time_s"] < 220.0
    ndr, pdr = out.metrics["ndr_tx_rate_fps"], out.metrics["pdr_tx_rate_fps"]
    assert isinstance(ndr, float) and isinstance(pdr, float)
    assert 4e6 * (1 - noise) * (1 - WIDTH) <= ndr <= 4e6 * (1 + noise)  # the draft's answer, in the band
    assert ndr <= pdr


def test_a_dut_off_the_power_law_costs_a_bounded_number_of_probes() -> None:
    # Loss ramping linearly in offered / capacity fits no exponent well: probes stay bounded.
    out = search("ndr_pdr", SimDut(CAP, loss="ramp", ramp=0.05, capacities=noisy_capacities(0.02, 1)))
    probes = [t for t in out.trials if t.purpose.endswith(PROBE_LABEL)]
    assert len(probes) <= 2 * max_probes(FINAL_S / 1.0)  # per goal
    assert out.metrics["ndr_tx_rate_fps"] != 0.0


def test_goals_with_larger_loss_ratios_are_confirmed_first() -> None:
    ndr = SearchGoal(name="ndr", loss_ratio=0.0, exceed_ratio=0.0, final_duration_s=60, duration_sum_s=60,
                     width=0.005, initial_duration_s=1)
    pdr = replace(ndr, name="pdr", loss_ratio=0.005)
    assert [g.name for g in confirm_order([ndr, pdr])] == ["pdr", "ndr"]


def bench_case(algorithm: str, noise: float, capacity_fps: float, size: int, seed: int) -> SearchOutcome:
    """One bench_searches case: gradual loss, 60 s finals, 1 s steering, shipped goals."""
    dut = {"capacity_fps": capacity_fps, "noise": noise, "seed": seed, "loss_model": "gradual"}
    settings = make_settings({"TRAFFICGEN_DUMMY_DUT": dut, "TRAFFICGEN_DURATION": FINAL_S,
                              "TRAFFICGEN_SEARCH_INITIAL_DURATION_S": 1.0})
    ctx = RunContext(run_id="t", results_dir=Path("/nonexistent"), work_dir=Path("/nonexistent"),
                     executor=LocalExecutor())
    cfg = goal_search_config_from_settings(settings, algorithm)  # type: ignore[arg-type]
    run = ndr_pdr_throughput if algorithm == "ndr_pdr" else mlr_throughput
    return run(DummyTrafficGenerator(settings, ctx), Traffic(frame_size_bytes=size), cfg)


# bench_searches cases (binary: 18 full-length trials, 1080 s) that cost more than a fifth of
# binary before probes went off the grid to the band's safe bottom and the loss exponent was fitted
# on groups of nearby loads: a long trial failed (probes on the grid a width below the bottom
# estimate climbed into the band), or 100+ short probes sat below the PDR band (one load's probes
# made the tail-drop exponent fit best, and so their own capacities look like the bottom).
@pytest.mark.parametrize(
    ("algorithm", "noise", "capacity_fps", "size", "seed"),
    [("ndr_pdr", 0.005, 420_000, 1518, 4), ("ndr_pdr", 0.02, 420_000, 1518, 3), ("mlr", 0.01, 4_000_000, 256, 4),
     ("mlr", 0.02, 20_000_000, 64, 2), ("mlr", 0.03, 1_500_000, 1518, 1), ("mlr", 0.03, 1_500_000, 1518, 2)],
)
def test_noisy_bench_cases_cost_at_most_a_fifth_of_binary(algorithm: str, noise: float, capacity_fps: float,
                                                           size: int, seed: int) -> None:
    out = bench_case(algorithm, noise, capacity_fps, size, seed)
    failed = [t for t in out.trials if t.duration_s >= FINAL_S
              and t.loss_ratio > (0.0 if t.purpose.startswith("ndr") else PDR_RATIO)]
    assert failed == []
    assert out.details["trial_time_s"] <= 1080.0 / 5
    ndr = out.metrics["ndr_tx_rate_fps"]
    assert isinstance(ndr, float) and capacity_fps * (1 - noise) * (1 - WIDTH) <= ndr <= capacity_fps * (1 + noise)


# bench_searches cases where the maximum load (line rate) passed PDR in its short trial, losing
# nearly the 0.5 % PDR allows: the maximum lies inside PDR's noise band. Before the maximum got a
# band probe, its 60 s trial was staked there and failed (202 and 226 trial-seconds).
@pytest.mark.parametrize(("noise", "seed"), [(0.01, 4), (0.03, 5)])
def test_a_maximum_load_inside_the_noise_band_gets_a_probe_before_its_long_trial(noise: float, seed: int) -> None:
    out = bench_case("ndr_pdr", noise, 1_500_000, 1518, seed)
    line = Traffic(frame_size_bytes=1518).line_rate_fps
    first_pdr = next(i for i, t in enumerate(out.trials)
                     if t.purpose.startswith("pdr") and "bisection" not in t.purpose)
    assert out.trials[first_pdr].purpose.endswith(PROBE_LABEL)
    assert out.trials[first_pdr].requested_rate_fps < line
    failed = [t for t in out.trials if t.duration_s >= FINAL_S
              and t.loss_ratio > (0.0 if t.purpose.startswith("ndr") else PDR_RATIO)]
    assert failed == []
    assert out.details["trial_time_s"] < 180.0
