"""The capacity band read from the size of the losses (vsperf.search.noise_band)."""

from __future__ import annotations

import pytest

from vsperf.search.measurer import TrialResult
from vsperf.search.noise_band import GAP_MARGIN, CapacityBand, capacity_band, trial_capacity_fps

TX = 10_000_000  # frames per trial: loss ratios resolve to 1e-7


def trial(load: float, capacity: float, exponent: float) -> tuple[float, TrialResult]:
    """A trial at `load` on a DUT of this capacity whose loss is (1 - capacity / load) ** exponent."""
    loss = max(0.0, 1.0 - capacity / load) ** exponent
    lost = round(TX * loss)
    result = TrialResult(kind="rate", frame_size_bytes=64, requested_rate_fps=load, duration_s=1.0, tx_frames=TX,
                         rx_frames=TX - lost, actual_tx_rate_fps=load, line_rate_fps=2 * load)
    return load, result


@pytest.mark.parametrize("exponent", [1.0, 2.0])
def test_the_exponent_and_the_capacities_of_a_noisy_dut_are_recovered(exponent: float) -> None:
    # Capacity 100 +- 3 per trial; trials from just above the band to far above it, one lossless.
    capacities = [97.5, 102.0, 99.0, 100.5, 101.0, 98.0]
    loads = [104.0, 106.0, 110.0, 125.0, 150.0, 180.0]
    trials = [trial(x, c, exponent) for x, c in zip(loads, capacities, strict=True)] + [trial(99.5, 100.0, exponent)]
    band = capacity_band(trials)
    assert band is not None
    assert band.exponent == exponent
    assert band.capacities_fps[0] == pytest.approx(97.5, rel=1e-3)  # the lowest capacity seen
    assert band.capacities_fps[-1] == pytest.approx(102.0, rel=1e-3)
    # PDR-like goal (0.5 %): the highest load at which the weakest trial loses at most that.
    assert band.bottom_fps(0.005) == pytest.approx(97.5 / (1 - 0.005 ** (1 / exponent)), rel=1e-3)
    assert band.bottom_fps(0.0) == pytest.approx(97.5, rel=1e-3)


def test_too_few_lossy_trials_or_too_narrow_a_load_span_fit_no_band() -> None:
    assert capacity_band([trial(110.0, 100.0, 1.0), trial(120.0, 100.0, 1.0)]) is None  # two lossy trials
    close = [trial(x, 100.0, 1.0) for x in (105.0, 105.5, 106.0)]  # 1 % of load apart
    assert capacity_band(close) is None
    # A trial that lost a single frame is only a failure: it adds no capacity.
    single = TrialResult(kind="rate", frame_size_bytes=64, requested_rate_fps=101.0, duration_s=1.0, tx_frames=TX,
                         rx_frames=TX - 1, actual_tx_rate_fps=101.0, line_rate_fps=202.0)
    assert capacity_band([trial(110.0, 100.0, 1.0), trial(130.0, 100.0, 1.0), (101.0, single)]) is None


def test_the_capacity_of_one_trial_and_a_band_needs_capacities() -> None:
    # At load 200, capacity 100: a tail-drop DUT loses 50 %, a squared-loss one 25 %.
    assert trial_capacity_fps(200.0, 0.25, 2.0) == pytest.approx(100.0)
    assert trial_capacity_fps(200.0, 0.5, 1.0) == pytest.approx(100.0)
    with pytest.raises(ValueError, match="capacity band"):
        CapacityBand(exponent=1.0, capacities_fps=())


# (load, loss ratio) of the first 32 trials of mlr on bench_searches' gradual (squared-loss) DUT,
# capacity 100 +- 3 % (1518 B, seed 2): a few trials spread in load, then band probes at two loads.
BENCH_TRIALS = [
    (108.366, 0.005128), (107.81, 0.003198), (107.271, 0.003435), (106.201, 0.004903), (104.093, 0.002557),
    (100.001, 0.0), (102.027, 0.002246), (101.009, 0.0), (101.517, 0.0), (107.824, 0.007637),
    *((104.629, loss) for loss in (0.002082, 0.000714, 0.004633, 0.000443, 0.000343, 0.004871, 0.005246)),
    *((103.586, loss) for loss in (9.6e-05, 9.3e-05, 0.000118, 0.002959, 0.000162, 0.000626, 9.9e-05, 0.003082,
                                   0.000577, 0.000514, 0.004034, 0.002174, 0.002067, 0.002697, 0.001904)),
]


def measured(load: float, loss: float) -> tuple[float, TrialResult]:
    lost = round(TX * loss)
    return load, TrialResult(kind="rate", frame_size_bytes=64, requested_rate_fps=load, duration_s=1.0, tx_frames=TX,
                             rx_frames=TX - lost, actual_tx_rate_fps=load, line_rate_fps=2 * load)


def test_many_trials_at_one_load_do_not_decide_the_exponent() -> None:
    # At one load the flattest exponent spreads the probes' capacities least (it shrinks the noise
    # they show): counted one per load, 1.5 fitted best, and PDR's bottom came out at 103.3, below
    # the DUT's whole PDR band (97 / (1 - sqrt(0.005)) = 104.4): probes there could never fail.
    band = capacity_band([measured(load, loss) for load, loss in BENCH_TRIALS])
    assert band is not None and band.exponent == 2.0
    assert band.capacities_fps[0] == pytest.approx(97.0, rel=1e-3)
    assert band.bottom_fps(0.005) == pytest.approx(97.0 / (1 - 0.005**0.5), rel=1e-3)


def test_the_safe_bottom_lies_below_the_lowest_capacity_by_less_as_trials_tell_more() -> None:
    capacities = [97.5, 102.0, 99.0, 100.5, 101.0, 98.0]
    loads = [104.0, 106.0, 110.0, 125.0, 150.0, 180.0]
    lossy = [trial(x, c, 2.0) for x, c in zip(loads, capacities, strict=True)]
    band = capacity_band(lossy)
    assert band is not None
    # GAP_MARGIN spans over the informed trials: (102 - 97.5) / 6 below the lowest capacity.
    assert band.margin_fps == pytest.approx(GAP_MARGIN * 4.5 / 6, rel=1e-3)
    assert band.safe_bottom_fps(0.0) == pytest.approx(97.5 - band.margin_fps, rel=1e-3)
    # Trials that lost nothing at 97.8 (above the bottom) say no capacity was below it: the margin
    # shrinks; ones far below the band say nothing about its bottom.
    passes = [trial(97.8, 100.0, 2.0) for _ in range(6)]
    below = [trial(80.0, 100.0, 2.0) for _ in range(6)]
    with_passes, with_below = capacity_band([*lossy, *passes]), capacity_band([*lossy, *below])
    assert with_passes is not None and with_below is not None
    assert with_passes.margin_fps == pytest.approx(band.margin_fps / 2, rel=1e-3)
    assert with_below.margin_fps == pytest.approx(band.margin_fps, rel=1e-3)
    assert band.span_fps(0.0) == pytest.approx(4.5, rel=1e-3)
