"""NDR and PDR on the real local lab: phy2phy_tput against OVS on vsgen, mlr vs two binary searches.

Needs root (the local lab deploys a private OVS and namespaced veth ports). Each repeat runs, one
after the other, `vsperf phy2phy_tput --vswitch ovs` three times:
* binary with TRAFFICGEN_LOSSRATE 0 (NDR) and binary with 0.5 (PDR): VSPERF's two searches, every
  trial TRAFFICGEN_DURATION long;
* mlr (TRAFFICGEN_SEARCH=mlr): NDR and PDR in one search, steering trials of FINAL_S / 12;
* mlr with an exceed ratio (issue 22): the same with TRAFFICGEN_MLR_EXCEED_RATIO_PERCENT 50 and a
  duration sum of three final trials (docs/searches.rst's settings for DUTs whose losses come in
  bursts: a load is a lower bound when at most half of its trial seconds lost too much).
All with final trials of FINAL_S, 64 B frames, the first trial at MAX_PERCENT of line rate (far
above what OVS forwards here), binary's resolution RESOLUTION_PERCENT of line rate (about 0.5 % of
the answer: the same width as mlr's 0.5 %), and a short residual wait (the lab's counters settle
fast). It prints, per algorithm: NDR and PDR of every repeat, their spread across the repeats
((max - min) / max), trial-seconds and trials per answer, the confidence mlr reports (full-length
trials, failed confirmations), and the ratio of binary's trial-seconds per answer to mlr's. The
machine is shared: the load average is printed before each repeat and at the end.

Run (root): .venv/bin/python bench/bench_search_lab.py [REPEATS]   (default 3; ~2 min per repeat)
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FINAL_S = 3.0
STEERING_S = FINAL_S / 12
MAX_PERCENT = 10.0  # per direction; OVS here forwards ~2 % of 64 B line rate per direction (lab.sh)
RESOLUTION_PERCENT = 0.01  # about 0.5 % of the answer
PDR_PERCENT = 0.5
COMMON = {
    "TRAFFICGEN_DURATION": FINAL_S,
    "TRAFFICGEN_PKT_SIZES": "(64,)",
    "TRAFFICGEN_RESIDUAL_WAIT_S": 0.3,
    "TRAFFICGEN_RFC2544_MAX_RATE_PERCENT": MAX_PERCENT,
    "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT": RESOLUTION_PERCENT,
    "TRAFFICGEN_PDR_LOSSRATE": PDR_PERCENT,
}
RUNS: dict[str, dict[str, Any]] = {
    "binary NDR": {"TRAFFICGEN_SEARCH": "binary", "TRAFFICGEN_LOSSRATE": 0.0},
    "binary PDR": {"TRAFFICGEN_SEARCH": "binary", "TRAFFICGEN_LOSSRATE": PDR_PERCENT},
    "mlr": {"TRAFFICGEN_SEARCH": "mlr", "TRAFFICGEN_LOSSRATE": 0.0, "TRAFFICGEN_SEARCH_INITIAL_DURATION_S": STEERING_S},
    "mlr exceed": {"TRAFFICGEN_SEARCH": "mlr", "TRAFFICGEN_LOSSRATE": 0.0,
                   "TRAFFICGEN_SEARCH_INITIAL_DURATION_S": STEERING_S, "TRAFFICGEN_MLR_EXCEED_RATIO_PERCENT": 50,
                   "TRAFFICGEN_MLR_DURATION_SUM_S": 3 * FINAL_S},
}
MLR_RUNS = ("mlr", "mlr exceed")


@dataclass
class Measured:
    name: str
    metrics: dict[str, Any]
    trials: int
    trial_s: float
    generator_short: bool  # the generator under-delivered in some trial (an anomaly says so)
    failure: str | None = None  # the test failed (a search without an answer): why


def run_vsperf(name: str, overrides: dict[str, Any], results_dir: Path) -> Measured:
    params = ";".join(f"{k}={v}" for k, v in {**COMMON, **overrides}.items())
    command = [sys.executable, "-m", "vsperf", "phy2phy_tput", "--vswitch", "ovs", "--results-dir",
               str(results_dir), "--test-params", params]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRAFFIC", "VSWITCH", "VNF"))}
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800)
    if proc.returncode not in (0, 1) or not (results_dir / "results.json").exists():
        raise SystemExit(f"{name}: vsperf exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    test = json.loads((results_dir / "results.json").read_text())["tests"][0]
    if not test["results"]:
        raise SystemExit(f"{name}: the test failed before measuring: {test['error']}")
    result = test["results"][0]
    trials = result["trials"]
    short = any("generator under-delivered" in a for a in result.get("anomalies", ()))
    return Measured(name, result["metrics"], len(trials), sum(t["duration_s"] for t in trials), short,
                    test["error"] if test["status"] == "failed" else None)


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _spread(values: list[float]) -> float:
    return 100.0 * (max(values) - min(values)) / max(values) if max(values) > 0 else 0.0


def main(repeats: int = 3) -> None:
    if os.geteuid() != 0:
        raise SystemExit("bench_search_lab needs root (it deploys OVS and namespaced ports); run it as root")
    found: dict[str, list[Measured]] = {name: [] for name in RUNS}
    with tempfile.TemporaryDirectory(prefix="vsperf-bench-lab-") as tmp:
        for repeat in range(1, repeats + 1):
            print(f"repeat {repeat}: load average {_load()}", flush=True)
            for name, overrides in RUNS.items():
                m = run_vsperf(name, overrides, Path(tmp) / f"{repeat}-{name.replace(' ', '_')}")
                found[name].append(m)
                note = " (the generator under-delivered)" if m.generator_short else ""
                note += f" FAILED: {m.failure}" if m.failure else ""
                print(f"repeat {repeat} {name:<10}: {m.trials:3d} trials, {m.trial_s:6.1f} trial-s{note}", flush=True)
    print(f"\nphy2phy_tput, OVS (userspace datapath, AF_PACKET ports) on vsgen, 64 B, final trials {FINAL_S:g} s, "
          f"{repeats} repeats; load average at the end {_load()}\n")
    pairs = list(zip(found["binary NDR"], found["binary PDR"], strict=True))
    answers = {"binary (2 searches)": ([float(a.metrics["tx_rate_fps"]) for a, _ in pairs],
                                       [float(b.metrics["tx_rate_fps"]) for _, b in pairs])}
    for name in MLR_RUNS:
        answers[name] = ([float(m.metrics["ndr_tx_rate_fps"]) for m in found[name]],
                         [float(m.metrics["pdr_tx_rate_fps"]) for m in found[name]])
    seconds = {"binary (2 searches)": [a.trial_s + b.trial_s for a, b in pairs],
               **{name: [m.trial_s for m in found[name]] for name in MLR_RUNS}}
    counts = {"binary (2 searches)": [a.trials + b.trials for a, b in pairs],
              **{name: [m.trials for m in found[name]] for name in MLR_RUNS}}
    rows = [
        ("NDR fps per repeat", {k: " ".join(f"{x:.0f}" for x in v[0]) for k, v in answers.items()}),
        ("PDR fps per repeat", {k: " ".join(f"{x:.0f}" for x in v[1]) for k, v in answers.items()}),
        ("NDR spread over repeats %", {k: f"{_spread(v[0]):.2f}" for k, v in answers.items()}),
        ("PDR spread over repeats %", {k: f"{_spread(v[1]):.2f}" for k, v in answers.items()}),
        ("trial-s per answer (mean)", {k: f"{statistics.mean(v) / 2:.1f}" for k, v in seconds.items()}),
        ("trials per answer (mean)", {k: f"{statistics.mean(v) / 2:.1f}" for k, v in counts.items()}),
    ]
    print(f"{'':<28}" + "".join(f"{k:>30}" for k in answers))
    for label, cells in rows:
        print(f"{label:<28}" + "".join(f"{cells[k]:>30}" for k in answers))
    for name in MLR_RUNS:
        confidence = [(m.metrics.get("ndr_full_trials"), m.metrics.get("ndr_failed_confirmations"),
                       m.metrics.get("pdr_full_trials"), m.metrics.get("pdr_failed_confirmations"))
                      for m in found[name]]
        print(f"{name} confidence per repeat (NDR full trials, failed confirmations, PDR full, failed): {confidence}")
    for name in MLR_RUNS:
        ratios = [b / m for b, m in zip(seconds["binary (2 searches)"], seconds[name], strict=True)]
        print(f"binary trial-seconds / {name} trial-seconds: worst {min(ratios):.2f}, "
              f"mean {statistics.mean(ratios):.2f}")
    failed = [f"{name} repeat {i + 1}: {m.failure}" for name in RUNS for i, m in enumerate(found[name]) if m.failure]
    print("searches without an answer (failed tests): " + ("; ".join(failed) if failed else "none"))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
