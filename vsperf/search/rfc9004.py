"""RFC 9004 back-to-back frames: N independent back-to-back searches and the corrected DUT
buffer time, only where the DUT buffers at all.

The throughput comes first (see `vsperf.search.select`). RFC 9004: a frame size whose throughput
is the line rate has nothing to buffer, so it is reported as such (metrics None, an anomaly), not
measured. Otherwise the RFC 2544 back-to-back search (`vsperf.search.back2back`, longest burst
TRAFFICGEN_DURATION at line rate, granularity TRAFFICGEN_B2B_GRANULARITY_FRAMES) runs
TRAFFICGEN_RFC9004_TESTS times (RFC 2544: at least 50), independently, and the result carries:

* `b2b_frames` (average of the N searches, rounded) with `_min` / `_max`;
* `b2b_buffer_time_s`: implied DUT buffer time, average burst / line rate;
* `b2b_corrected_buffer_time_s`: that times (1 - throughput / line rate), since the DUT forwards
  at its throughput while the burst arrives;
* `throughput_fps`: the throughput used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vsperf.search.at_throughput import AtThroughputTest, any_measurer
from vsperf.search.back2back import rfc2544_back2back
from vsperf.search.config import Back2BackConfig, integer, number
from vsperf.search.measurer import DutControl, Measurer
from vsperf.search.outcome import SearchOutcome
from vsperf.search.outcome_build import AtThroughput, after_throughput

TRAFFIC_TYPE = "rfc9004_back2back"
METRICS = ("b2b_frames", "b2b_buffer_time_s", "b2b_corrected_buffer_time_s")


def rfc9004_config_from_settings(settings: Mapping[str, Any]) -> Back2BackConfig:
    """The back-to-back search, repeated TRAFFICGEN_RFC9004_TESTS times."""
    return Back2BackConfig(
        duration_s=number(settings, "TRAFFICGEN_DURATION"),
        granularity_frames=integer(settings, "TRAFFICGEN_B2B_GRANULARITY_FRAMES"),
        repetitions=integer(settings, "TRAFFICGEN_RFC9004_TESTS"),
    )


def _measure(
    run: AtThroughput, measurer: Measurer, cfg: Back2BackConfig, _dut: DutControl | None
) -> SearchOutcome:
    """The back-to-back searches, unless the throughput is the line rate."""
    known, traffic = run.known, run.traffic
    if run.at_line_rate:
        return run.not_measured(
            f"the throughput is the line rate ({known.rate_fps:.0f} fps): the DUT buffers nothing at this frame "
            "size, so back-to-back frames are not measured (RFC 9004)"
        )
    b2b = rfc2544_back2back(measurer, traffic, cfg, run.log.on_trial, throughput_fps=known.rate_fps)
    return after_throughput(
        TRAFFIC_TYPE, traffic, known, b2b.trials, dict(b2b.metrics), dict(b2b.details),
        (*known.anomalies, *b2b.anomalies),
    )


# RFC 9004 back-to-back at one frame size (see the module docstring).
rfc9004_back2back: AtThroughputTest[Back2BackConfig, Measurer] = AtThroughputTest(
    TRAFFIC_TYPE, METRICS, any_measurer, _measure
)
