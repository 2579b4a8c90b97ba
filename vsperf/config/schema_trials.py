"""Settings of what every trial of a test may add: a warm start before it, and, after a throughput
search, latency measured at loads relative to the answer (vsperf.search.load_latency).

Defaults: conf/13_trials.yaml.
"""

from __future__ import annotations

from vsperf.config.types import (
    MAX_RATE_FPS,
    NAME,
    SECONDS,
    Float,
    ListOf,
    Setting,
    Str,
    Struct,
)
from vsperf.traffic.warmup import WARM_MODES

SETTINGS: dict[str, Setting] = {
    "TRAFFICGEN_WARM_START": Setting(
        Struct({
            "mode": Str(choices=WARM_MODES),
            "duration_s": SECONDS,
            "rate_percent": Float(gt=0, max=100, unit="% of the trial's rate"),
        }),
        "Frames sent before every trial and not counted (the counting starts after them): mode off, "
        "lead-in (duration_s at rate_percent of the trial's rate) or ramp (from rate_percent up to the "
        "trial's rate over duration_s)."),
    "TRAFFICGEN_LATENCY_LOADS_PERCENT": Setting(
        ListOf(Float(min=0, max=100, unit="% of the goal's rate")),
        "rfc2544_throughput: after the search, one latency trial at each of these loads, % of the goal's "
        "rate (CSIT: 0, 10, 50, 90 % of PDR; 0 is TRAFFICGEN_LATENCY_LOADS_LOW_FPS); empty: none."),
    "TRAFFICGEN_LATENCY_LOADS_GOAL": Setting(
        NAME,
        "The search answer the loads are relative to: a goal of the search (ndr, pdr, or an mlr goal's "
        "name), or throughput (the search's throughput answer, e.g. the binary search's)."),
    "TRAFFICGEN_LATENCY_LOADS_LOW_FPS": Setting(
        Float(gt=0, max=MAX_RATE_FPS, unit="frames/s"),
        "The rate of the 0 % load (a low fixed rate: CSIT's latency streams send 9 kpps)."),
    "TRAFFICGEN_LATENCY_LOADS_DURATION_S": Setting(
        SECONDS, "Duration of each latency trial at a load."),
}
