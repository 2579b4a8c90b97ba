"""Change detection measured: `vsperf trend --gate` (jumpavg over the newest HISTORY_TREND_RUNS
runs) beside `vsperf compare --threshold` (one run against a stored baseline, or against the run
before), as a CI job would run them after every run.

1. Synthetic series: 1 % and 3 % run-to-run noise (relative standard deviation), a step of
   -5 % or -10 % after 40 runs, and noise-only series. After each run from the 31st on, each
   gate says "regression" or not. Printed per scenario: detection rate (the gate fired within
   10 runs of the step), detection delay (runs from the step to the first alarm, 1 = the first
   run after the step), false alarms per 100 runs of noise-only series (and before the step).
2. Real runs of the simulated DUT (`vsperf phy2phy_tput --trafficgen dummy`, TRAFFICGEN_DUMMY_DUT
   noise 1 %) whose capacity drops 10 % after run 14: which run each gate fires on.

Run: PYTHONPATH=. .venv/bin/python bench/bench_history_detection.py [--quick]
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from vsperf.history.trend import REGRESSION, classify
from vsperf.verdicts.compare import RULES, compare_values

WINDOW = 50  # HISTORY_TREND_RUNS' default
THRESHOLD = 5.0  # COMPARE_THRESHOLD_PERCENT's default
HISTORY, AFTER, FIRST_CHECKED = 40, 10, 30
Gate = Callable[[Sequence[float]], bool]  # values so far, oldest first -> alarm on the newest?


def trend_gate(values: Sequence[float]) -> bool:
    return classify(values[-WINDOW:], "higher").classification == REGRESSION


def baseline_gate(values: Sequence[float]) -> bool:  # the stored baseline: the first run
    return compare_values(RULES["throughput_rx_fps"], values[0], values[-1], THRESHOLD)[1]


def previous_gate(values: Sequence[float]) -> bool:  # each run against the one before
    return compare_values(RULES["throughput_rx_fps"], values[-2], values[-1], THRESHOLD)[1]


GATES: dict[str, Gate] = {"trend --gate (jumpavg, 50 runs)": trend_gate,
                          f"compare --threshold {THRESHOLD:g} vs baseline": baseline_gate,
                          f"compare --threshold {THRESHOLD:g} vs previous": previous_gate}


def alarms(values: Sequence[float], gate: Gate) -> list[int]:
    """Indices of the runs (from FIRST_CHECKED on) whose check fires."""
    return [i for i in range(FIRST_CHECKED, len(values)) if gate(values[:i + 1])]


def synthetic(series: int) -> None:
    print(f"Synthetic series: {HISTORY} runs, then {AFTER} runs after the step; checked from run {FIRST_CHECKED + 1};"
          f" {series} series per scenario")
    print(f"{'noise':>5} {'step':>5}  {'gate':<34} {'detected':>8} {'delay med':>9} {'delay max':>9} "
          f"{'false/100 runs':>14}")
    rng = random.Random(2544)
    for noise in (0.01, 0.03):
        for step in (-0.05, -0.10, 0.0):
            data = [[1e6 * (1 + rng.gauss(0, noise)) * (1 + step if i >= HISTORY else 1.0)
                     for i in range(HISTORY + AFTER)] for _ in range(series)]
            for name, gate in GATES.items():
                found = [alarms(values, gate) for values in data]
                before = sum(1 for runs in found for i in runs if i < HISTORY)
                checked_before = series * (HISTORY - FIRST_CHECKED)
                if step == 0.0:
                    false = 100 * sum(len(runs) for runs in found) / (series * (HISTORY + AFTER - FIRST_CHECKED))
                    print(f"{noise:>5.0%} {'none':>5}  {name:<34} {'':>8} {'':>9} {'':>9} {false:>14.1f}")
                    continue
                delays = [next(i for i in runs if i >= HISTORY) - HISTORY + 1 for runs in found
                          if any(i >= HISTORY for i in runs)]
                rate = len(delays) / series
                median = f"{statistics.median(delays):.0f}" if delays else "-"
                worst = f"{max(delays)}" if delays else "-"
                print(f"{noise:>5.0%} {step:>5.0%}  {name:<34} {rate:>8.0%} {median:>9} {worst:>9} "
                      f"{100 * before / checked_before:>14.1f}")


def dummy_runs(count: int, step_after: int) -> None:
    print(f"\nReal runs of the simulated DUT: phy2phy_tput 64 B, capacity 3 Mfps with 1 % noise, -10 % from run "
          f"{step_after + 1}")
    with tempfile.TemporaryDirectory(prefix="vsperf-bench-detect-") as tmp:
        root = Path(tmp)
        db = str(root / "store.sqlite")
        fired: dict[str, list[int]] = {"trend --gate": [], "compare vs baseline": []}
        for i in range(count):
            capacity = 3_000_000 * (0.9 if i >= step_after else 1.0)
            dut = json.dumps({"capacity_fps": capacity, "noise": 0.01, "seed": i + 1})
            params = (f"TRAFFICGEN_PKT_SIZES=(64,);TRAFFICGEN_DURATION=1;TRAFFICGEN_DUMMY_DUT={dut};"
                      f"HISTORY_DB='{db}'")
            run = root / f"run{i:02d}"
            subprocess.run([sys.executable, "-m", "vsperf", "phy2phy_tput", "--trafficgen", "dummy", "--test-params",
                            params, "--results-dir", str(run), "--report-format", "rst"], check=True,
                           capture_output=True)
            gate = subprocess.run([sys.executable, "-m", "vsperf", "trend", "--gate", "--db", db, "--size", "64",
                                   "--metric", "throughput_rx_fps"], capture_output=True, text=True)
            compare = subprocess.run([sys.executable, "-m", "vsperf", "compare", str(root / "run00"), str(run),
                                      "--metrics", "throughput_rx_fps"], capture_output=True, text=True)
            value = json.loads((run / "results.json").read_text())["tests"][0]["results"][0]["metrics"][
                "throughput_rx_fps"]
            verdicts = {"trend --gate": gate.returncode, "compare vs baseline": compare.returncode}
            for name, code in verdicts.items():
                if code == 1:
                    fired[name].append(i + 1)
            print(f"  run {i + 1:>2}: {value:>12,.0f} fps   trend --gate exit {gate.returncode}   "
                  f"compare exit {compare.returncode}")
        for name, runs in fired.items():
            first = next((r for r in runs if r > step_after), None)
            false = [r for r in runs if r <= step_after]
            delay = f"run {first} (delay {first - step_after})" if first else "never"
            print(f"  {name:<20} first alarm after the step: {delay}; false alarms before it: {len(false)}")


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    synthetic(8 if quick else 40)
    dummy_runs(10 if quick else 20, 6 if quick else 14)
