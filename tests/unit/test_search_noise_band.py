"""The capacity band read from the size of the losses (vsperf.search.noise_band)."""

from __future__ import annotations

import pytest

from vsperf.search.measurer import TrialResult
from vsperf.search.noise_band import CapacityBand, capacity_band, trial_capacity_fps

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
