"""The simulated DUTs and search configurations of bench/bench_searches.py, and one case's runs.

A case is one DUT (the dummy generator's model through the real settings loader) and one search
configuration; every algorithm of a case runs on a fresh generator with the same seed, so for
the same trial index they draw the same capacity noise (and stalls). Trial-seconds are traffic
time (durations, no waits).

DUT models:
* "uniform": the searches' own families: capacity noise drawn uniformly within +-noise per
  trial, loss cliff (tail drop) or gradual (the cliff's ratio squared) above it;
* "gaussian+stalls": a model the searches were not tuned on: capacity noise from a normal
  distribution (sigma noise / 3, within +-noise) and forwarding stalls, STALLS_PER_S a second on
  average (Poisson), each long enough to overflow the queue above STALL_THRESHOLD of the nominal
  capacity: loss then grows with the trial's length (a 1 s trial meets a stall 1 time in 20, a
  60 s trial 19 times in 20).

The band an answer must lie in (`bands`): for each goal, from the highest load meeting its loss
ratio when the capacity is at the bottom of the noise band, less the width (and, with stalls,
from the stall threshold less the width when that is lower: above it the DUT really loses frames
whenever a stall hits), to the same load at the top of the band.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from csit_peer import csit_search

from vsperf.config.loader import Settings
from vsperf.host.host import Host
from vsperf.run.kinds import configure_traffic, run_traffic
from vsperf.search.goal_config import goal_search_config_from_settings
from vsperf.search.outcome import SearchOutcome
from vsperf.traffic import Traffic
from vsperf.trafficgen.dummy.backend import DummyTrafficGenerator
from vsperf.trafficgen.dummy.model import capacity_at_fps, max_rate_for_loss_fps, port_line_rate_fps

WIDTH_PERCENT = 0.5
PDR_PERCENT = 0.5
BINARY_RESOLUTION_PERCENT = 0.1  # the shipped TRAFFICGEN_RFC2544_RESOLUTION_PERCENT
SIZES = (64, 256, 1518)
# Aggregate (bidirectional 10 GbE) capacities: about 10/20/26 %, 30/44/74 % and 67/83/92 % of line rate.
CAPACITY_SETS: dict[str, dict[int, float]] = {
    "low": {64: 3_000_000, 256: 2_000_000, 1518: 420_000},
    "mid": {64: 9_000_000, 256: 4_000_000, 1518: 1_200_000},
    "high": {64: 20_000_000, 256: 7_500_000, 1518: 1_500_000},
}
LOSS_MODELS = ("cliff", "gradual")
STALLS_PER_S = 0.05
STALL_THRESHOLD = 0.97  # of the nominal capacity: a stall overflows the queue above it
BUFFER_FRAMES = 20_000


@dataclass(frozen=True)
class SearchSetup:
    """The goals' configuration: final trials, steering (initial) trials, exceed ratio, duration sum."""

    name: str
    final_s: float
    initial_s: float
    exceed_percent: float = 0.0
    sum_s: float | None = None  # None: one final trial

    def settings(self) -> dict[str, object]:
        return {"TRAFFICGEN_DURATION": self.final_s, "TRAFFICGEN_SEARCH_INITIAL_DURATION_S": self.initial_s,
                "TRAFFICGEN_MLR_EXCEED_RATIO_PERCENT": self.exceed_percent,
                "TRAFFICGEN_MLR_DURATION_SUM_S": self.sum_s}


@dataclass(frozen=True)
class Dut:
    """One simulated DUT family member."""

    model: str  # "uniform" or "gaussian+stalls"
    loss_model: str
    noise: float
    capacities: str
    size: int
    seed: int

    @property
    def family(self) -> tuple[str, str, float]:
        return (self.model, self.loss_model, self.noise)

    def settings(self, base: Settings) -> dict[str, object]:
        dut: dict[str, object] = {**base["TRAFFICGEN_DUMMY_DUT"], "capacity_fps": CAPACITY_SETS[self.capacities],
                                  "noise": self.noise, "seed": self.seed, "loss_model": self.loss_model,
                                  "buffer_frames": BUFFER_FRAMES}
        if self.model == "gaussian+stalls":
            capacity = CAPACITY_SETS[self.capacities][self.size]
            dut.update(noise_shape="gaussian", stall_per_s=STALLS_PER_S,
                       stall_s=BUFFER_FRAMES / (STALL_THRESHOLD * capacity))
        return {"TRAFFICGEN_DUMMY_DUT": dut}


@dataclass(frozen=True)
class Run:
    """One algorithm on one case."""

    algorithm: str
    trial_s: float
    trials: int
    answers_fps: tuple[float, float]  # NDR, PDR (0: none)
    failure: str | None  # the search had no answer (guard, no lower bound)
    outcome: SearchOutcome | None = None  # vsperf's searches: the whole outcome


def case_settings(base: Settings, dut: Dut, setup: SearchSetup, **extra: object) -> Settings:
    return base.merged({**dut.settings(base), **setup.settings(), "TRAFFICGEN_PDR_LOSSRATE": PDR_PERCENT,
                        "TRAFFICGEN_SEARCH_WIDTH_PERCENT": WIDTH_PERCENT,
                        "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT": BINARY_RESOLUTION_PERCENT, **extra}, "bench")


def bands(settings: Settings, ctx: Host, dut: Dut) -> tuple[tuple[float, float], tuple[float, float]]:
    """The NDR and PDR bands of this DUT (see the module docstring)."""
    gen = DummyTrafficGenerator(settings, ctx)
    traffic = Traffic(frame_size_bytes=dut.size)
    capacity = capacity_at_fps(gen.model, dut.size)
    line = port_line_rate_fps(gen.model, traffic)
    out = []
    for loss in (0.0, PDR_PERCENT / 100):
        low, high = (min(line, max_rate_for_loss_fps(gen.model, capacity * f, loss)) for f in (1 - dut.noise,
                                                                                                1 + dut.noise))
        if dut.model == "gaussian+stalls":
            low = min(low, STALL_THRESHOLD * capacity)
        out.append((low * (1 - WIDTH_PERCENT / 100), high))
    return out[0], out[1]


def outside(run: Run, ndr_pdr_bands: tuple[tuple[float, float], tuple[float, float]]) -> list[str]:
    """The answers of `run` outside their bands, as text (empty: both within)."""
    problems = []
    for name, found, (low, high) in zip(("NDR", "PDR"), run.answers_fps, ndr_pdr_bands, strict=True):
        if not low * (1 - 1e-5) <= found <= high * (1 + 1e-5):
            problems.append(f"{name} {found:.0f} fps outside [{low:.0f}, {high:.0f}]")
    return problems


def run_vsperf(settings: Settings, ctx: Host, dut: Dut, algorithm: str) -> Run:
    """ndr_pdr or mlr as `vsperf phy2phy_tput` runs it."""
    chosen = settings.merged({"TRAFFICGEN_SEARCH": algorithm}, "bench")
    out = run_traffic(DummyTrafficGenerator(chosen, ctx), configure_traffic(Traffic(frame_size_bytes=dut.size), chosen))
    answers = (float(out.metrics["ndr_tx_rate_fps"] or 0.0), float(out.metrics["pdr_tx_rate_fps"] or 0.0))
    return Run(algorithm, out.details["trial_time_s"], out.details["trial_count"], answers, out.failure, out)


def run_binary(settings: Settings, ctx: Host, dut: Dut) -> Run:
    """Two VSPERF binary searches (NDR, then PDR), each on a fresh DUT with the same seed."""
    trial_s, count, found, failures = 0.0, 0, [], []
    for loss in (0.0, PDR_PERCENT):
        chosen = settings.merged({"TRAFFICGEN_SEARCH": "binary", "TRAFFICGEN_LOSSRATE": loss}, "bench")
        plan = configure_traffic(Traffic(frame_size_bytes=dut.size), chosen)
        out = run_traffic(DummyTrafficGenerator(chosen, ctx), plan)
        trial_s += out.details["trial_time_s"]
        count += out.details["trial_count"]
        found.append(float(out.metrics["tx_rate_fps"] or 0.0))
        failures += [out.failure] if out.failure else []
    return Run("binary", trial_s, count, (found[0], found[1]), "; ".join(failures) or None)


def run_csit(settings: Settings, ctx: Host, dut: Dut, seed_offset: int = 0) -> Run:
    """MLRsearch 1.2.1 for the same goals as mlr; `seed_offset` moves the DUT's seed (the same DUT
    with other trial draws: MLRsearch against its own luck)."""
    chosen = settings
    if seed_offset:
        model = {**settings["TRAFFICGEN_DUMMY_DUT"], "seed": dut.seed + seed_offset}
        chosen = settings.merged({"TRAFFICGEN_DUMMY_DUT": model}, "bench")
    goals = goal_search_config_from_settings(chosen, "mlr").goals
    answer = csit_search(DummyTrafficGenerator(chosen, ctx), Traffic(frame_size_bytes=dut.size), goals)
    ndr, pdr = (x or 0.0 for x in answer.lower_bounds_fps)
    missing = [g.name for g, x in zip(goals, answer.lower_bounds_fps, strict=True) if x is None]
    return Run("MLRsearch" if not seed_offset else "MLRsearch'", answer.trial_time_s, len(answer.trials), (ndr, pdr),
               f"no lower bound for {', '.join(missing)}" if missing else None)


def dut_families(models: Mapping[str, tuple[float, ...]]) -> list[tuple[str, str, float]]:
    """(model, loss model, noise) of each family: `models` maps a model to its noises."""
    return [(model, loss, noise) for model, noises in models.items() for loss in LOSS_MODELS for noise in noises]
