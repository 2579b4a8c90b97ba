"""bench/bench_searches.py, part 2: ndr_pdr and mlr against CSIT's MLRsearch 1.2.1.

For each configuration (SETUPS) and DUT family, over capacities, frame sizes and seeds, the three
search NDR and PDR on the same simulated DUT with the same trial noise (bench/csit_peer.py).
ndr_pdr has no exceed ratio: with CSIT's goals it answers its own goals (exceed 0) with CSIT's
1 s trials. Printed per family: each algorithm's median trial-seconds and its ratio to
MLRsearch's median (the target: at most 1), the worst single case (its trial-seconds over
MLRsearch's in the same case: the target is 1.5), the answers outside their band and the searches
without an answer (guard hit or no lower bound), for all three.

Also MLRsearch against itself: the same DUTs with the seed moved by SELF_SEED_OFFSET (other trial
draws). Its worst single case says how far a controller as good as MLRsearch lands from it by
luck alone on a noisy DUT: the floor of any per-case target.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from multiprocessing import Pool

from search_cases import (
    CAPACITY_SETS,
    SIZES,
    WIDTH_PERCENT,
    Dut,
    Run,
    SearchSetup,
    bands,
    case_settings,
    dut_families,
    outside,
    run_csit,
    run_vsperf,
)

from vsperf.config.loader import load_settings
from vsperf.host.host import Host

SETUPS = (
    SearchSetup("60 s finals, 1 s steering, exceed 0", 60.0, 1.0),
    SearchSetup("10 s finals, 1 s steering, exceed 0", 10.0, 1.0),
    SearchSetup("CSIT's goals: 1 s trials, exceed 50 %, sum 21 s", 1.0, 1.0, 50.0, 21.0),
)
MODELS = {"uniform": (0.005, 0.01, 0.02, 0.03), "gaussian+stalls": (0.01, 0.03)}
ALGORITHMS = ("ndr_pdr", "mlr", "MLRsearch")
SELF_SEED_OFFSET = 1000
MEDIAN_TARGET = 1.0
WORST_TARGET = 1.5

Job = tuple[int, Dut]  # (setup index, DUT)


Positions = dict[str, tuple[float, float]]  # algorithm -> (NDR, PDR) place in the noise band, 0: bottom


def run_job(job: Job) -> tuple[Job, dict[str, Run], list[str], Positions]:
    """Every algorithm on one case: the runs, the problems found (answers outside the band), and
    where each answer lies in the noise band (0: its bottom, 1: its top)."""
    index, dut = job
    base = load_settings(env={}).merged({"TRAFFICGEN": "dummy"}, "bench")
    ctx = Host.probe()
    settings = case_settings(base, dut, SETUPS[index])
    runs = {alg: run_vsperf(settings, ctx, dut, alg) for alg in ALGORITHMS[:2]}
    runs["MLRsearch"] = run_csit(settings, ctx, dut)
    runs["MLRsearch'"] = run_csit(settings, ctx, dut, SELF_SEED_OFFSET)
    limits = bands(settings, ctx, dut)
    problems = [f"{alg}: {p}" for alg, run in runs.items() for p in outside(run, limits)]
    problems += [f"{alg}: no answer: {run.failure}" for alg, run in runs.items() if run.failure]
    edges = [(low / (1 - WIDTH_PERCENT / 100), high) for low, high in limits]
    positions = {alg: ((run.answers_fps[0] - edges[0][0]) / (edges[0][1] - edges[0][0]),
                       (run.answers_fps[1] - edges[1][0]) / (edges[1][1] - edges[1][0]))
                 for alg, run in runs.items() if dut.noise > 0}
    return job, runs, problems, positions


def _rst(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    rule = "  ".join("=" * w for w in widths)
    lines = [rule, "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)), rule]
    lines += ["  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join([*lines, rule])


def main(seeds: int, processes: int) -> bool:
    """Run and print part 2; True when every target holds."""
    jobs: list[Job] = [(i, Dut(model, loss, noise, caps, size, seed)) for i in range(len(SETUPS))
                       for model, loss, noise in dut_families(MODELS) for caps in CAPACITY_SETS for size in SIZES
                       for seed in range(1, seeds + 1)]
    with Pool(processes) as pool:
        results = pool.map(run_job, jobs, chunksize=8)
    by_family: dict[tuple[int, tuple[str, str, float]], list[dict[str, Run]]] = defaultdict(list)
    places: dict[tuple[int, str], list[tuple[float, float]]] = defaultdict(list)
    problems: list[str] = []
    for (index, dut), runs, found, positions in results:
        by_family[(index, dut.family)].append(runs)
        problems += [f"{SETUPS[index].name}, {dut}: {p}" for p in found]
        if dut.model == "uniform":
            for alg, place in positions.items():
                places[(index, alg)].append(place)
    met = not problems
    print(f"PART 2, against CSIT's MLRsearch 1.2.1: {len(jobs)} cases ({seeds} seeds per capacity and size); "
          "median trial-seconds (ratio to MLRsearch's median), worst case (trial-seconds over MLRsearch's "
          f"in the same case); targets: ratio <= {MEDIAN_TARGET:g}, worst <= {WORST_TARGET:g}\n")
    for index, setup in enumerate(SETUPS):
        rows = []
        for family in sorted({f for i, f in by_family if i == index}):
            cases = by_family[(index, family)]
            csit = statistics.median(c["MLRsearch"].trial_s for c in cases)
            row = [family[0], family[1], f"{100 * family[2]:g}", f"{csit:.1f}"]
            for alg in ("ndr_pdr", "mlr", "MLRsearch'"):
                median = statistics.median(c[alg].trial_s for c in cases)
                worst = max(c[alg].trial_s / c["MLRsearch"].trial_s for c in cases)
                row += [f"{median:.1f} ({median / csit:.2f})", f"{worst:.2f}"]
                if alg != "MLRsearch'":
                    met = met and median <= csit * MEDIAN_TARGET and worst <= WORST_TARGET
            rows.append(row)
        print(f"{setup.name}:\n")
        print(_rst(["DUT", "loss", "noise %", "MLRsearch", "ndr_pdr", "worst", "mlr", "worst",
                    "MLRsearch'", "worst"], rows))
        print()
    print("Where the answers lie in the noise band (uniform families; median over the cases; 0: the band's "
          "bottom, the highest load meeting the goal at the lowest capacity; 1: its top):\n")
    rows = [[setup.name, alg, f"{statistics.median(p[0] for p in places[(i, alg)]):.2f}",
             f"{statistics.median(p[1] for p in places[(i, alg)]):.2f}"]
            for i, setup in enumerate(SETUPS) for alg in ALGORITHMS]
    print(_rst(["configuration", "algorithm", "NDR", "PDR"], rows))
    print()
    runs_total = len(results) * 4
    print(f"Answers outside their band or searches without an answer: {len(problems)} of {runs_total} searches"
          " (ndr_pdr, mlr, MLRsearch and MLRsearch' each)")
    for problem in problems[:20]:
        print(f"  {problem}")
    self_worst = max(c["MLRsearch'"].trial_s / c["MLRsearch"].trial_s for cases in by_family.values() for c in cases)
    print(f"MLRsearch' is MLRsearch on the same DUTs with other trial draws (seed + {SELF_SEED_OFFSET}): its worst "
          f"case, {self_worst:.2f}, is what luck alone costs a controller as good as MLRsearch")
    return met
