"""NDR and PDR: binary (two searches) vs ndr_pdr vs mlr, on simulated DUTs with known answers.

Every algorithm runs with RFC 2544-compliant final trials of 60 s and a 0.5 % width:
* binary: two RFC 2544 binary searches (NDR with TRAFFICGEN_LOSSRATE 0, PDR with 0.5 %), every
  trial 60 s, resolution 0.5 % of line rate (VSPERF's meaning of the setting);
* ndr_pdr and mlr: one search for both, 1 s steering trials, 60 s final trials, relative width 0.5 %.

DUTs (`vsperf.trafficgen.dummy.model`, through the dummy generator): "cliff" (tail drop above capacity),
"gradual" (loss grows smoothly above capacity), "noisy" (cliff whose capacity varies by +-1 % per
trial, seeds 1..5), at 64, 256 and 1518 B (capacity 30 %, 44 % and 74 % of line rate); and "line
rate", a DUT faster than the ports (64 B), where binary needs one trial per search: it is shown
but left out of the summary.

Columns: trials, trial-seconds (traffic time), wall seconds as a real generator would spend them
(trial time plus RFC 2544's 2 s residual wait per trial; the simulation itself takes milliseconds),
and the error of NDR and PDR against the model's noise-free truth, in % (negative: below). The
summary, for deterministic and for noisy DUTs, gives the ratio of binary's trial-seconds to each
algorithm's and the worst errors.

Run: PYTHONPATH=. .venv/bin/python bench/bench_searches.py
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vsperf.context import RunContext
from vsperf.executor import LocalExecutor
from vsperf.search.dispatch import run_traffic
from vsperf.traffic import Traffic
from vsperf.trafficgen.dummy.backend import DummyTrafficGenerator
from vsperf.trafficgen.dummy.model import throughput_truth_fps

FINAL_S = 60.0
WIDTH_PERCENT = 0.5
PDR_PERCENT = 0.5
RESIDUAL_WAIT_S = 2.0  # RFC 2544's wait after each trial, before counters are read
SIZES = (64, 256, 1518)
CAPACITY_FPS = {64: 9_000_000, 256: 4_000_000, 1518: 1_200_000}  # aggregate, bidirectional 10 GbE
LINE_RATE = "line rate"
SCENARIOS: list[tuple[str, dict[str, Any], tuple[int, ...]]] = [
    ("cliff", {"loss_model": "cliff"}, SIZES),
    ("gradual", {"loss_model": "gradual"}, SIZES),
    *[(f"noisy s{seed}", {"loss_model": "cliff", "noise": 0.01, "seed": seed}, SIZES) for seed in range(1, 6)],
    (LINE_RATE, {"capacity_fps": 1e9}, (64,)),
]
ALGORITHMS = ("binary", "ndr_pdr", "mlr")


@dataclass
class Run:
    scenario: str
    size: int
    algorithm: str
    trials: int
    trial_s: float
    compute_s: float
    ndr_error_percent: float
    pdr_error_percent: float

    @property
    def wall_s(self) -> float:
        return self.trial_s + RESIDUAL_WAIT_S * self.trials

    @property
    def deterministic(self) -> bool:
        return not self.scenario.startswith("noisy")


def _generator(ctx: RunContext, dut: Mapping[str, Any]) -> DummyTrafficGenerator:
    model = {"capacity_fps": CAPACITY_FPS, **dut}
    return DummyTrafficGenerator({"TRAFFICGEN_DUMMY_DUT": model}, ctx)


def _error(found: Any, truth: float) -> float:
    return 100.0 * (float(found) - truth) / truth


def run_one(ctx: RunContext, scenario: str, dut: Mapping[str, Any], size: int, algorithm: str) -> Run:
    traffic = Traffic(frame_size_bytes=size)
    common = {"TRAFFICGEN_DURATION": FINAL_S, "TRAFFICGEN_PDR_LOSSRATE": PDR_PERCENT}
    started = time.perf_counter()
    gen = _generator(ctx, dut)
    ndr_truth = throughput_truth_fps(gen.model, traffic, 0.0)
    pdr_truth = throughput_truth_fps(gen.model, traffic, PDR_PERCENT)
    if algorithm == "binary":
        trials, trial_s, found = 0, 0.0, []
        for loss in (0.0, PDR_PERCENT):  # two searches, each on a fresh DUT (same seed)
            out = run_traffic(_generator(ctx, dut), traffic, {
                **common, "TRAFFICGEN_LOSSRATE": loss, "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT": WIDTH_PERCENT})
            trials += out.details["trial_count"]
            trial_s += out.details["trial_time_s"]
            found.append(out.metrics["tx_rate_fps"])
        ndr, pdr = found
    else:
        out = run_traffic(gen, traffic, {**common, "TRAFFICGEN_SEARCH": algorithm,
                                         "TRAFFICGEN_SEARCH_WIDTH_PERCENT": WIDTH_PERCENT})
        trials, trial_s = out.details["trial_count"], out.details["trial_time_s"]
        ndr, pdr = out.metrics["ndr_tx_rate_fps"], out.metrics["pdr_tx_rate_fps"]
    return Run(scenario, size, algorithm, trials, trial_s, time.perf_counter() - started,
               _error(ndr, ndr_truth), _error(pdr, pdr_truth))


def _rst_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    rule = "  ".join("=" * w for w in widths)
    lines = [rule, "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)), rule]
    lines += ["  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    return "\n".join([*lines, rule])


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ctx = RunContext(run_id="bench", results_dir=Path(tmp), work_dir=Path(tmp), executor=LocalExecutor())
        runs = [run_one(ctx, name, dut, size, alg)
                for name, dut, sizes in SCENARIOS for size in sizes for alg in ALGORITHMS]
    binary_s = {(r.scenario, r.size): r.trial_s for r in runs if r.algorithm == "binary"}
    print("Per DUT and frame size (errors against the noise-free truth, %)\n")
    rows = [[r.scenario, str(r.size), r.algorithm, str(r.trials), f"{r.trial_s:.0f}", f"{r.wall_s:.0f}",
             f"{binary_s[(r.scenario, r.size)] / r.trial_s:.1f}", f"{r.ndr_error_percent:+.3f}",
             f"{r.pdr_error_percent:+.3f}"] for r in runs]
    print(_rst_table(["DUT", "size", "algorithm", "trials", "trial-s", "wall-s", "x binary", "NDR err %",
                      "PDR err %"], rows))
    print("\nSummary over the frame sizes below line rate (x binary: binary's trial-seconds / the algorithm's)\n")
    summary = []
    for group, keep in (("deterministic", True), ("noisy", False)):
        for alg in ALGORITHMS:
            mine = [r for r in runs if r.algorithm == alg and r.scenario != LINE_RATE and r.deterministic == keep]
            ratios = [binary_s[(r.scenario, r.size)] / r.trial_s for r in mine]
            summary.append([
                group, alg, f"{statistics.mean(r.trials for r in mine):.1f}",
                f"{statistics.mean(r.trial_s for r in mine):.0f}", f"{statistics.mean(r.wall_s for r in mine):.0f}",
                f"{min(ratios):.1f}", f"{statistics.mean(ratios):.1f}",
                f"{max(abs(r.ndr_error_percent) for r in mine):.3f}", f"{max(r.ndr_error_percent for r in mine):+.3f}",
                f"{max(abs(r.pdr_error_percent) for r in mine):.3f}",
            ])
    print(_rst_table(["DUTs", "algorithm", "trials", "trial-s", "wall-s", "x binary min", "x binary mean",
                      "NDR max abs err %", "NDR max err %", "PDR max abs err %"], summary))
    print(f"\ncompute time of the whole benchmark: {sum(r.compute_s for r in runs):.2f} s")

if __name__ == "__main__":
    main()
