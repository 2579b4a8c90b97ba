"""VSPERF's result keys, added beside vsperf's own so that scripts parsing VSPERF's CSVs read ours.

Per frame size (into the metrics, by the runner):
- `type` holds VSPERF's value (rfc2544, rfc2889; rfc9004 for the RFC 9004 test VSPERF lacked;
  a benchmark keeps its own), and `test_type` vsperf's precise traffic type (rfc2544_back2back);
- RFC 2889 under VSPERF's names: forwarding_rate_fps, caching_capacity_addrs,
  optimal_learning_rate_fps, addr_learned_percent;
- back-to-back: b2b_tx_count, b2b_rx_fps, b2b_tx_fps, b2b_rx_percent, b2b_tx_percent,
  b2b_frame_loss_frames, from the longest lossless burst (VSPERF's generators reported that burst);
- with multistream: stream_count, match_type, pre-installed_flows ('Yes'/'No', VSPERF's words);
- with VNFs: guest_loopback;
- with a frame mix: imix_genome (the mix's name: its genome, or its size list) and
  imix_avg_framesize (its mean size, bytes), and packet_size the mix's name.
Per test (into every CSV row): start_time and stop_time ('YYYY-MM-DD HH:MM:SS', UTC) and
test_execution_time (seconds, a number: VSPERF wrote its run time as is).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from vsperf.search.measurer import TrialResult
from vsperf.search.outcome import MetricValue, SearchOutcome
from vsperf.search.trials import percent_of
from vsperf.traffic import Traffic

# vsperf's precise traffic type, stored beside VSPERF's `type`
TEST_TYPE = "test_type"
# VSPERF key -> the vsperf metric it repeats
RFC2889_ALIASES = {
    "forwarding_rate_fps": "max_forwarding_rate_fps",
    "caching_capacity_addrs": "caching_capacity_addresses",
    "optimal_learning_rate_fps": "address_learning_rate_fps",
}
VSPERF_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def vsperf_type(test_type: str) -> str:
    """VSPERF's `type` value of a traffic type: rfc2544_* and burst -> rfc2544, rfc2889_* -> rfc2889."""
    if test_type.startswith("rfc2544") or test_type == "burst":
        return "rfc2544"
    for family in ("rfc2889", "rfc9004"):
        if test_type.startswith(family):
            return family
    return test_type


def _b2b_keys(trials: Sequence[TrialResult], b2b_frames: MetricValue) -> dict[str, MetricValue]:
    lossless = [t for t in trials if t.kind == "burst" and t.loss_frames == 0 and t.tx_frames > 0]
    if not lossless:
        bursts = [t for t in trials if t.kind == "burst" and t.tx_frames > 0]
        if not bursts:
            return {}
        lossless = [min(bursts, key=lambda t: t.tx_frames)]  # none lossless: the shortest tried
    best = max(lossless, key=lambda t: t.tx_frames)
    return {
        "b2b_tx_count": best.tx_frames if b2b_frames else 0,
        "b2b_rx_fps": best.rx_rate_fps,
        "b2b_tx_fps": best.actual_tx_rate_fps,
        "b2b_rx_percent": percent_of(best.rx_rate_fps, best.line_rate_fps),
        "b2b_tx_percent": percent_of(best.actual_tx_rate_fps, best.line_rate_fps),
        "b2b_frame_loss_frames": best.loss_frames,
    }


def frame_size_keys(metrics: Mapping[str, MetricValue], trials: Sequence[TrialResult], traffic: Traffic,
                    guest_loopback: str | None = None) -> dict[str, MetricValue]:
    """VSPERF's keys for one frame size's metrics (see the module docstring); `metrics` unchanged."""
    precise = str(metrics.get("type") or traffic.traffic_type)
    keys: dict[str, MetricValue] = {"type": vsperf_type(precise), TEST_TYPE: precise}
    for vsperf_key, ours in RFC2889_ALIASES.items():
        if ours in metrics:
            keys[vsperf_key] = metrics[ours]
    if "address_learning_rate_fps" in metrics:
        learned = metrics["address_learning_rate_fps"]
        # the learning search reports the highest rate at which every address was learned
        keys["addr_learned_percent"] = 100.0 if isinstance(learned, int | float) and learned > 0 else 0.0
    if "b2b_frames" in metrics:
        keys.update(_b2b_keys(trials, metrics["b2b_frames"]))
    if traffic.multistream:
        keys["stream_count"] = traffic.multistream
        keys["match_type"] = traffic.stream_type
        keys["pre-installed_flows"] = "Yes" if traffic.pre_installed_flows else "No"
    if guest_loopback:
        keys["guest_loopback"] = guest_loopback
    if traffic.mix is not None:
        mix = traffic.mix
        keys.update(packet_size=mix.name, imix_genome=mix.name, imix_avg_framesize=mix.mean_bytes)
    return keys


def with_vsperf_keys(outcome: SearchOutcome, traffic: Traffic, guest_loopback: str | None = None) -> SearchOutcome:
    """`outcome` with VSPERF's keys added to its metrics (vsperf's own stay)."""
    keys = frame_size_keys(outcome.metrics, outcome.trials, traffic, guest_loopback)
    return dataclasses.replace(outcome, metrics={**outcome.metrics, **keys})


def _vsperf_time(iso: str | None) -> datetime | None:
    if not iso:
        return None
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return None


def time_keys(started_at: str, finished_at: str | None) -> dict[str, Any]:
    """VSPERF's start_time, stop_time and test_execution_time (s) of a test (None while running)."""
    start, stop = _vsperf_time(started_at), _vsperf_time(finished_at)
    return {
        "test_execution_time": round((stop - start).total_seconds(), 3) if start and stop else None,
        "start_time": start.strftime(VSPERF_TIME_FORMAT) if start else None,
        "stop_time": stop.strftime(VSPERF_TIME_FORMAT) if stop else None,
    }


def with_trial_notes(outcome: SearchOutcome) -> SearchOutcome:
    """`outcome` with what its generator said it could not do (the trials' `notes`), each once,
    among its anomalies: a result says what it lacks."""
    notes = [f"generator: {note}" for note in dict.fromkeys(n for t in outcome.trials for n in t.notes)]
    return dataclasses.replace(outcome, anomalies=(*outcome.anomalies, *notes)) if notes else outcome
