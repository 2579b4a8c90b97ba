"""bench/bench_searches.py, part 1: two binary searches vs ndr_pdr vs mlr on noisy simulated DUTs.

For every case the three run in the same process on DUTs with the same seed:
* binary: two RFC 2544 binary searches as VSPERF runs them (NDR with TRAFFICGEN_LOSSRATE 0, PDR
  with 0.5 %), every trial as long as the final trial, at the shipped resolution (0.1 % of line
  rate; issue 16 measured it at 0.5 %);
* ndr_pdr and mlr: one search for both goals, relative width 0.5 %, steering (initial) trials of
  1/60 of the final trial (RFC 2544's 60 s final trials with the shipped 1 s steering trials);
  families with the shipped 1 s steering trials at 10 and 30 s finals are printed as well (a
  controller cannot be 5x cheaper there: two 10 s confirmations plus a bisection of 1 s trials to
  0.5 % already cost more than 36 s, binary's 180 s / 5).

Cases (`vsperf.trafficgen.dummy.model`, through the dummy generator): loss model cliff or gradual;
capacity noise 0.5, 1, 2 and 3 % (the capacity of each trial is drawn uniformly within +-noise),
and 0 % as the deterministic reference (shown, not part of the target);
three capacity sets per frame size (64, 256 and 1518 B); final trial durations 10, 30 and 60 s;
seeds 1..SEEDS. The settings come from the shipped conf through the real loader.
Trial-seconds are traffic time; wall seconds add RFC 2544's 2 s residual wait after each trial
(short trials are many: wall ratios are lower).

Printed:
1. where the trial-seconds go, per algorithm and final duration (mean seconds per search):
   short (steering) trials, full-length trials that passed, full-length trials that failed (a
   failed confirmation), and the part of all that was spent at loads already decided for every
   goal the trial served (classified lower or upper bound before the trial ran);
2. per family (loss model, noise, final duration): worst, median and mean ratio of binary's
   trial-seconds to the algorithm's over capacities, sizes and seeds;
3. the accuracy checks of every case: NDR must lie in [truth at the bottom of the noise band times
   (1 - width), truth at the top of the band], PDR likewise for its loss ratio ("truth": the
   highest load losing at most the goal's loss ratio when the capacity is at that band edge);
   and the cases where binary's PDR search ran a single full-length trial (it passed its first
   trial, at line rate), where 5x cannot be reached, apart from the others.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vsperf.config.loader import Settings, load_settings
from vsperf.host.host import Host
from vsperf.run.kinds import configure_traffic, run_traffic
from vsperf.search.mlr_goals import SearchGoal, classify
from vsperf.search.outcome import SearchOutcome
from vsperf.traffic import Traffic
from vsperf.trafficgen.dummy.backend import DummyTrafficGenerator
from vsperf.trafficgen.dummy.model import capacity_at_fps, max_rate_for_loss_fps, port_line_rate_fps

WIDTH_PERCENT = 0.5
BINARY_RESOLUTION_PERCENT = 0.1  # the shipped TRAFFICGEN_RFC2544_RESOLUTION_PERCENT
FINAL_PER_STEERING = 60.0  # final trial duration / steering trial duration (RFC 2544: 60 s, 1 s)
PDR_PERCENT = 0.5
SIZES = (64, 256, 1518)
# Aggregate (bidirectional 10 GbE) capacities: about 10/20/26 %, 30/44/74 % and 67/83/92 % of line rate.
CAPACITY_SETS: dict[str, dict[int, float]] = {
    "low": {64: 3_000_000, 256: 2_000_000, 1518: 420_000},
    "mid": {64: 9_000_000, 256: 4_000_000, 1518: 1_200_000},
    "high": {64: 20_000_000, 256: 7_500_000, 1518: 1_500_000},
}
LOSS_MODELS = ("cliff", "gradual")
NOISES = (0.0, 0.005, 0.01, 0.02, 0.03)  # 0: the deterministic reference, not in the target
FINALS_S = (10.0, 30.0, 60.0)
SHIPPED_STEERING_S = 1.0  # TRAFFICGEN_SEARCH_INITIAL_DURATION_S in conf/05_search.yaml
RESIDUAL_WAIT_S = 2.0
ALGORITHMS = ("binary", "ndr_pdr", "mlr")
CATEGORIES = ("short", "full passed", "full failed", "at decided load")


@dataclass(frozen=True)
class Case:
    loss_model: str
    noise: float
    final_s: float
    capacities: str
    size: int
    seed: int
    steering_s: float  # ndr_pdr's and mlr's shortest trials

    @property
    def family(self) -> tuple[str, float, float, float]:
        return (self.loss_model, self.noise, self.final_s, self.steering_s)

    @property
    def main(self) -> bool:
        """A family of the target: a noisy DUT, steering trials 1/60 of the final ones."""
        return self.noise > 0 and abs(self.steering_s * FINAL_PER_STEERING - self.final_s) < 1e-9


@dataclass
class Run:
    case: Case
    algorithm: str
    trial_s: float
    trials: int
    ndr_fps: float
    pdr_fps: float
    seconds: dict[str, float] = field(default_factory=dict)  # CATEGORIES -> trial-seconds
    problems: list[str] = field(default_factory=list)  # failed accuracy checks
    pdr_single: bool = False  # binary: its PDR search passed its first trial, at line rate, and ended


def _goals_of(label: str, goals: Mapping[str, SearchGoal]) -> list[SearchGoal]:
    if label == "all goals":
        return list(goals.values())
    return [goals[name] for name in label.split("+") if name in goals]


def where_seconds_go(out: SearchOutcome, final_s: float) -> dict[str, float]:
    """Split the trial-seconds of a search into CATEGORIES (see the module docstring)."""
    seconds = dict.fromkeys(CATEGORIES, 0.0)
    goals = {g["name"]: SearchGoal(name=g["name"], loss_ratio=g["loss_percent"] / 100,
                                   exceed_ratio=g["exceed_percent"] / 100,
                                   final_duration_s=g["final_duration_s"], duration_sum_s=g["duration_sum_s"],
                                   width=g["width_percent"] / 100, initial_duration_s=g["initial_duration_s"])
             for g in out.details["search"]["goals"]} if "trial_outcomes" in out.details else {}
    notes = out.details.get("trial_outcomes")
    if notes is None:  # binary: every trial is full-length
        for trial in out.trials:
            seconds["full passed" if trial.loss_percent <= out.details["search"]["loss_rate_percent"]
                    else "full failed"] += trial.duration_s
        return seconds
    seen: dict[float, list[Any]] = defaultdict(list)
    for note in notes:
        trial = out.trials[note["trial_index"]]
        served = _goals_of(note["goal"], goals)
        before = seen[note["load_fps"]]
        if served and before and all(classify(before, g.targets(0)[-1]) != "undecided" for g in served):
            seconds["at decided load"] += trial.duration_s
        if trial.duration_s < final_s - 1e-9:
            seconds["short"] += trial.duration_s
        elif any(g.name in note["high_loss_for"] for g in served):
            seconds["full failed"] += trial.duration_s
        else:
            seconds["full passed"] += trial.duration_s
        if note["judged"]:
            before.append(trial)
    return seconds


def truth_band(gen: DummyTrafficGenerator, traffic: Traffic, noise: float, loss_percent: float) -> tuple[float, float]:
    """Lowest and highest noise-band answer for a loss ratio, before the width allowance."""
    capacity = capacity_at_fps(gen.model, traffic.frame_size_bytes)
    line = port_line_rate_fps(gen.model, traffic)
    return tuple(min(line, max_rate_for_loss_fps(gen.model, capacity * f, loss_percent / 100))  # type: ignore[return-value]
                 for f in (1 - noise, 1 + noise))


def _check(name: str, found: float, band: tuple[float, float]) -> list[str]:
    low, high = band[0] * (1 - WIDTH_PERCENT / 100), band[1]
    # Slack: the model loses whole frames (ceil), 1 fps of 10**6 below the float truth at a band edge.
    if low * (1 - 1e-5) <= found <= high * (1 + 1e-5):
        return []
    return [f"{name} {found:.0f} fps outside [{low:.0f}, {high:.0f}]"]


def run_case(base: Settings, ctx: Host, case: Case) -> list[Run]:
    dut = {**base["TRAFFICGEN_DUMMY_DUT"], "capacity_fps": CAPACITY_SETS[case.capacities],
           "noise": case.noise, "seed": case.seed, "loss_model": case.loss_model}
    common = base.merged({"TRAFFICGEN_DUMMY_DUT": dut, "TRAFFICGEN_DURATION": case.final_s,
                          "TRAFFICGEN_PDR_LOSSRATE": PDR_PERCENT,
                          "TRAFFICGEN_SEARCH_WIDTH_PERCENT": WIDTH_PERCENT,
                          "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT": BINARY_RESOLUTION_PERCENT,
                          "TRAFFICGEN_SEARCH_INITIAL_DURATION_S": case.steering_s}, "bench")
    traffic = Traffic(frame_size_bytes=case.size)
    probe = DummyTrafficGenerator(common, ctx)
    ndr_band = truth_band(probe, traffic, case.noise, 0.0)
    pdr_band = truth_band(probe, traffic, case.noise, PDR_PERCENT)
    runs = []
    for algorithm in ALGORITHMS:
        if algorithm == "binary":
            found, trial_s, count, seconds = [], 0.0, 0, dict.fromkeys(CATEGORIES, 0.0)
            pdr_single = False
            for loss in (0.0, PDR_PERCENT):  # two searches, each on a fresh DUT (same seed)
                settings = common.merged({"TRAFFICGEN_LOSSRATE": loss}, "bench")
                out = run_traffic(DummyTrafficGenerator(settings, ctx), configure_traffic(traffic, settings))
                trial_s += out.details["trial_time_s"]
                count += out.details["trial_count"]
                pdr_single = loss > 0 and out.details["trial_count"] == 1
                found.append(float(out.metrics["tx_rate_fps"] or 0.0))
                for key, value in where_seconds_go(out, case.final_s).items():
                    seconds[key] += value
            ndr, pdr = found
        else:
            settings = common.merged({"TRAFFICGEN_SEARCH": algorithm}, "bench")
            out = run_traffic(DummyTrafficGenerator(settings, ctx), configure_traffic(traffic, settings))
            trial_s, count = out.details["trial_time_s"], out.details["trial_count"]
            ndr, pdr = float(out.metrics["ndr_tx_rate_fps"] or 0.0), float(out.metrics["pdr_tx_rate_fps"] or 0.0)
            seconds = where_seconds_go(out, case.final_s)
        run = Run(case, algorithm, trial_s, count, ndr, pdr, seconds, pdr_single=algorithm == "binary" and pdr_single)
        run.problems = _check("NDR", ndr, ndr_band) + _check("PDR", pdr, pdr_band)
        runs.append(run)
    return runs


def _rst_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    rule = "  ".join("=" * w for w in widths)
    lines = [rule, "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)), rule]
    lines += ["  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join([*lines, rule])


def _ratios(runs: list[Run], binary: Mapping[Case, Run], algorithm: str, wall: bool = False) -> list[float]:
    def cost(r: Run) -> float:
        return r.trial_s + (RESIDUAL_WAIT_S * r.trials if wall else 0.0)

    return [cost(binary[r.case]) / cost(r) for r in runs if r.algorithm == algorithm]


def _steering(final_s: float) -> tuple[float, ...]:
    return (final_s / FINAL_PER_STEERING,) + ((SHIPPED_STEERING_S,) if final_s < FINAL_PER_STEERING else ())


def main(seeds: int = 5) -> bool:
    """Run and print part 1; True when issue 16's target holds (outside the single-trial PDR cases)."""
    cases = [Case(loss, noise, final, caps, size, seed, steering) for loss in LOSS_MODELS for noise in NOISES
             for final in FINALS_S for steering in _steering(final) for caps in CAPACITY_SETS for size in SIZES
             for seed in range(1, seeds + 1)]
    base = load_settings(env={}).merged({"TRAFFICGEN": "dummy"}, "bench")
    ctx = Host.probe()
    runs = [run for case in cases for run in run_case(base, ctx, case)]
    binary = {r.case: r for r in runs if r.algorithm == "binary"}
    main_runs = [r for r in runs if r.case.main]

    print(f"PART 1, against two binary searches: {sum(c.main for c in cases)} noisy cases ({seeds} seeds each) "
          "with steering trials 1/60 of the final "
          "ones, plus 1 s steering at 10 and 30 s finals and noise-free references\n\n"
          "1. Where the trial-seconds go on the noisy DUTs (mean seconds per search; "
          "'at decided load' overlaps the other columns)\n")
    rows = []
    for final in FINALS_S:
        for steering in _steering(final):
            for alg in ALGORITHMS:
                mine = [r for r in runs if r.algorithm == alg and r.case.final_s == final
                        and r.case.steering_s == steering and r.case.noise > 0]
                rows.append([f"{final:g}", f"{steering:.3g}" if alg != "binary" else "-", alg,
                             f"{statistics.mean(r.trials for r in mine):.1f}",
                             f"{statistics.mean(r.trial_s for r in mine):.1f}",
                             f"{statistics.mean(r.trial_s + RESIDUAL_WAIT_S * r.trials for r in mine):.1f}",
                             *(f"{statistics.mean(r.seconds[c] for r in mine):.1f}" for c in CATEGORIES)])
    print(_rst_table(["final s", "steering s", "algorithm", "trials", "trial-s", "wall-s", *CATEGORIES], rows))

    print("\n2. Ratio binary trial-seconds / algorithm trial-seconds per family (worst, median, mean over "
          "capacities, sizes and seeds; 'wall': the median with 2 s per trial added)\n")
    rows = []
    for family in sorted({c.family for c in cases}):
        mine = [r for r in runs if r.case.family == family]
        row = [family[0], f"{100 * family[1]:g}", f"{family[2]:g}", f"{family[3]:.3g}"]
        for alg in ALGORITHMS[1:]:
            ratios = _ratios(mine, binary, alg)
            row += [f"{min(ratios):.1f}", f"{statistics.median(ratios):.1f}", f"{statistics.mean(ratios):.1f}",
                    f"{statistics.median(_ratios(mine, binary, alg, wall=True)):.1f}"]
        rows.append(row)
    print(_rst_table(["loss", "noise %", "final s", "steering s", "ndr_pdr worst", "median", "mean", "wall",
                      "mlr worst", "median", "mean", "wall"], rows))

    print("\n3. Accuracy checks (every case, every seed) and ratios over the noisy families with 1/60 steering\n")
    rows = []
    for alg in ALGORITHMS:
        mine = [r for r in runs if r.algorithm == alg]
        failed = [r for r in mine if r.problems]
        ratios = _ratios(main_runs, binary, alg)
        below = sum(1 for x in ratios if x < 5)
        rows.append([alg, f"{len(mine) - len(failed)}/{len(mine)}", f"{min(ratios):.2f}",
                     f"{statistics.median(ratios):.2f}", f"{statistics.mean(ratios):.2f}",
                     f"{below}/{len(ratios)}" if alg != "binary" else "-"])
    print(_rst_table(["algorithm", "accuracy checks passed", "x binary worst", "median", "mean", "cases below 5"],
                     rows))
    for r in runs:
        if r.problems and r.algorithm != "binary":
            c = r.case
            print(f"  FAILED {r.algorithm} {c.loss_model} noise {100 * c.noise:g} % final {c.final_s:g} s "
                  f"steering {c.steering_s:.3g} s {c.capacities} {c.size} B seed {c.seed}: {'; '.join(r.problems)}")
    binary_failed = sum(1 for r in runs if r.problems and r.algorithm == "binary")
    print(f"  (binary, for reference: {binary_failed} cases outside the band; its resolution is "
          f"{BINARY_RESOLUTION_PERCENT:g} % of line rate)")
    # Binary's PDR search ends after one trial when its first trial, at line rate, passes: binary
    # then costs its NDR search and one trial, and 5x leaves too little for NDR and PDR's full-length
    # trial each plus a steering trial. Such cases are outside the target (the author).
    short_binary = {c for c, r in binary.items() if c.main and r.pdr_single}
    for alg in ALGORITHMS[1:]:
        mine = [r for r in main_runs if r.algorithm == alg]
        rest = [binary[r.case].trial_s / r.trial_s for r in mine if r.case not in short_binary]
        # There the best any controller can do is 2 full-length trials and the one steering trial
        # that fails within a width above NDR's (its upper bound).
        short = [(binary[r.case].trial_s / r.trial_s,
                  binary[r.case].trial_s / (2 * r.case.final_s + r.case.steering_s))
                 for r in mine if r.case in short_binary]
        reach = (f": worst {min(x for x, _ in short):.2f}, median {statistics.median(x for x, _ in short):.2f}, "
                 f"the most reachable {max(b for _, b in short):.2f}") if short else ""
        print(f"  {alg}: {len(short_binary)} cases where binary's PDR search ran one trial (outside the target: "
              f"NDR and PDR need a full-length trial each plus a steering trial){reach}; the other "
              f"{len(rest)}: worst {min(rest):.2f}, {sum(1 for x in rest if x < 5)} below 5")
    worst = min(binary[r.case].trial_s / r.trial_s for r in main_runs
                if r.algorithm != "binary" and r.case not in short_binary)
    accurate = not any(r.problems for r in runs if r.algorithm != "binary")
    shipped = [r for r in runs if r.case.noise > 0 and not r.case.main]
    worst_shipped = min(min(_ratios(shipped, binary, alg)) for alg in ALGORITHMS[1:])
    met = worst >= 5 and accurate
    print(f"\nTARGET of issue 16 (worst-seed ratio >= 5 for ndr_pdr and mlr outside binary's single-trial PDR "
          f"cases, every accuracy check): {'MET' if met else 'NOT MET'} (worst {worst:.2f}; "
          f"with 1 s steering at 10-30 s finals: worst {worst_shipped:.2f})")
    return met
