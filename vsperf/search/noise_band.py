"""What the lossy trials of a noisy DUT say about the bottom of its capacity band.

Used by `vsperf.search.confirm` to place full-length trials where they are unlikely to fail.
Pass/fail alone says little about a low quantile of a noisy capacity: to learn that one load
fails in 2 % of the trials takes about a hundred trials there. The size of the loss says more.
Above its capacity `c` a DUT loses a share of the offered load `x` that grows with the overload;
a tail-drop DUT loses `1 - c / x`, a DUT whose loss sets in gradually less, e.g. `(1 - c / x)**2`.
With such a power law (exponent `k`), every lossy trial gives the capacity the DUT had during
that trial: `c = x * (1 - loss ** (1 / k))`. The exponent is the one under which the trials
agree best: the smallest spread from the lowest capacity to the highest of the capacities and
of the loads that lost nothing, one (median) capacity per group of loads within about 1 %
(under a wrong exponent the capacities of trials far above the band move away from those just
above it, or below every lossless load; many trials at one load would always pick the flattest
exponent, which shrinks the spread their noise should show). Every goal then has its own
capacity per trial, the highest load at which that trial would have met the goal's loss ratio
`r`: `c / (1 - r ** (1 / k))`; the band's bottom for the goal is the lowest of them.

The lowest capacity seen is a biased estimate of the band's bottom: whatever the distribution,
the next trial's capacity is below the lowest of m with probability 1 / (m + 1). The safe bottom
lies a margin lower: GAP_MARGIN times the band's span over the trials known not to have had a
lower capacity (the lossy ones, and those that lost nothing at a load above the bottom: in the
likelihood of a uniform band's bottom they count like a measured capacity). For a uniform band
that is the expected gap below the lowest capacity seen; it shrinks as trials accumulate.

Nothing here decides an answer: the draft's classification (`vsperf.search.mlr_goals`) does that
from the trials alone, so a DUT that follows no power law costs trials, never accuracy.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from vsperf.search.measurer import TrialResult

LOSS_EXPONENTS = (1.0, 1.5, 2.0, 3.0)  # tail drop, ..., a loss setting in very gently
MIN_LOSSY_TRIALS = 3  # fewer lossy trials cannot tell the exponent from the noise
MIN_LOAD_SPAN = 0.02  # lossy trials must span this much (relative) load to tell exponents apart
GAP_MARGIN = 1.0  # see CapacityBand.margin_fps (bench_searches: 0.25-3 tried)
LOAD_BIN = 0.01  # loads within about 1 % are one group when fitting the exponent
PREFER_STEEPER = 0.9  # a steeper exponent (lower capacities: the safer side) wins near-ties


@dataclass(frozen=True)
class CapacityBand:
    """The capacities the lossy trials imply, under the loss exponent that fits them best."""

    exponent: float  # k in loss = (1 - c / x) ** k
    capacities_fps: tuple[float, ...]  # one per lossy trial, frames/s, sorted
    lossless_loads_fps: tuple[float, ...] = ()  # loads of the trials that lost nothing, frames/s

    def __post_init__(self) -> None:
        if not self.capacities_fps or self.exponent <= 0:
            raise ValueError("a capacity band needs a positive exponent and at least one capacity")

    def goal_capacity_fps(self, capacity_fps: float, loss_ratio: float) -> float:
        """Highest load at which a trial with this capacity loses at most `loss_ratio`."""
        return capacity_fps / (1.0 - float(loss_ratio ** (1.0 / self.exponent)))

    def bottom_fps(self, loss_ratio: float) -> float:
        """Lowest goal capacity seen (for a goal with this loss ratio)."""
        return self.goal_capacity_fps(self.capacities_fps[0], loss_ratio)

    def informed_trials(self, floor_fps: float) -> int:
        """Trials that tell the band's bottom is not below `floor_fps`: the lossy ones, and those
        that lost nothing at a load at or above it (their capacity was at least that load)."""
        return len(self.capacities_fps) + sum(1 for load in self.lossless_loads_fps if load >= floor_fps)

    @property
    def margin_fps(self) -> float:
        """How far below the lowest capacity seen the band's bottom may lie: GAP_MARGIN times the
        band's span over the trials that tell about it. Lossless trials count from the bottom
        the margin implies (found in two rounds: they count only above it, and it shrinks as they count)."""
        caps = self.capacities_fps
        span = max([caps[-1], *self.lossless_loads_fps]) - caps[0]
        margin = GAP_MARGIN * span / self.informed_trials(caps[0])
        for _ in range(2):
            margin = GAP_MARGIN * span / self.informed_trials(caps[0] - margin)
        return margin

    def span_fps(self, loss_ratio: float) -> float:
        """The band's span for a goal: from its lowest to its highest goal capacity."""
        return self.goal_capacity_fps(self.capacities_fps[-1], loss_ratio) - self.bottom_fps(loss_ratio)

    def safe_bottom_fps(self, loss_ratio: float) -> float:
        """`bottom_fps` a margin lower (see the module docstring)."""
        return self.goal_capacity_fps(max(self.capacities_fps[0] - self.margin_fps, 0.0), loss_ratio)


def trial_capacity_fps(load_fps: float, loss_ratio: float, exponent: float) -> float:
    """Capacity the DUT had in a trial at `load_fps` that lost `loss_ratio` (0 < loss < 1)."""
    return load_fps * (1.0 - float(loss_ratio ** (1.0 / exponent)))


def capacity_band(trials: Iterable[tuple[float, TrialResult]]) -> CapacityBand | None:
    """The band the trials (load, trial) imply, or None when too few lost frames, or they are
    too close together in load, to fit an exponent."""
    trials = list(trials)
    # One lost frame less than counted: a trial that lost a frame or two says little more than
    # that it failed (under a steep exponent one frame in 10**5 already means 0.3 % of load).
    lossy = [(load, (t.loss_frames - 1) / t.tx_frames) for load, t in trials
             if t.tx_frames > 0 and t.loss_frames > 1 and t.rx_frames > 0]
    lossless = [load for load, t in trials if t.tx_frames > 0 and t.loss_frames == 0]
    if len(lossy) < MIN_LOSSY_TRIALS:
        return None
    loads = [load for load, _ in lossy]
    if max(loads) / min(loads) - 1.0 < MIN_LOAD_SPAN:
        return None
    best: CapacityBand | None = None
    best_spread = math.inf
    for exponent in sorted(LOSS_EXPONENTS, reverse=True):
        caps = sorted(trial_capacity_fps(load, loss, exponent) for load, loss in lossy)
        if caps[0] <= 0:
            continue
        # One capacity per group of nearby loads (their median): the many probes near the band's
        # bottom would otherwise decide the exponent alone, and at one load the smallest
        # exponent always spreads their capacities least (it shrinks the noise it should show).
        groups: dict[int, list[float]] = {}
        for load, loss in lossy:
            groups.setdefault(round(math.log(load) / LOAD_BIN), []).append(trial_capacity_fps(load, loss, exponent))
        medians = [statistics.median(group) for group in groups.values()]
        spread = math.log(max([*medians, *lossless]) / min(medians))
        if best is None or spread < best_spread * PREFER_STEEPER:
            best, best_spread = CapacityBand(exponent, tuple(caps), tuple(lossless)), spread
    return best


def capacity_guess_fps(trials: Iterable[tuple[float, TrialResult]], loss_ratio: float) -> float | None:
    """Where a goal with `loss_ratio` is likely met, from the lossy trials above it: the lowest
    goal capacity they imply under the loss exponent on which they agree best (any two lossy
    trials 2 % of load apart tell a tail-drop DUT, whose forwarding rate is its capacity, from a
    gradual one, whose forwarding rate overestimates it); None without a lossy trial. With one
    load only, the tail-drop guess (forwarding rate over 1 - loss ratio)."""
    lossy = [(load, t.loss_ratio) for load, t in trials if t.tx_frames > 0 and 0 < t.loss_frames < t.tx_frames]
    if not lossy:
        return None
    loads = [load for load, _ in lossy]
    exponents = LOSS_EXPONENTS if max(loads) / min(loads) - 1.0 >= MIN_LOAD_SPAN else (1.0,)
    best, best_spread = 1.0, math.inf
    for exponent in exponents:
        caps = [trial_capacity_fps(load, loss, exponent) for load, loss in lossy]
        spread = math.log(max(caps) / min(caps)) if min(caps) > 0 else math.inf
        if spread < best_spread * PREFER_STEEPER:
            best, best_spread = exponent, spread
    lowest = min(trial_capacity_fps(load, loss, best) for load, loss in lossy)
    return lowest / (1.0 - float(loss_ratio ** (1.0 / best)))
