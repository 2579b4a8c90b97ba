"""Shared pieces of the outcomes of the tests beyond throughput."""

from __future__ import annotations

from dutsim import SimDut

from vsperf.search.outcome_build import keep_phase, not_measured, row_keys, under_delivery_notes
from vsperf.search.select import KnownThroughput
from vsperf.search.trials import TrialLog
from vsperf.traffic import Traffic

T = Traffic(frame_size_bytes=128)


def test_keep_phase_tags_and_reports_the_trial() -> None:
    seen: list[object] = []
    log = TrialLog(SimDut(1e6), seen.append)
    phase = SimDut(1e6).trial(T, 1000.0, 1.0)
    kept = keep_phase(log, phase, "reset 1/1")
    assert kept.purpose == "reset 1/1" and log.trials == [kept] and seen == [kept]


def test_not_measured_has_none_metrics_and_says_why() -> None:
    out = not_measured("rfc2544_reset", T, ("reset_time_s",), "no throughput", KnownThroughput(0.0, "given"))
    assert out.metrics["reset_time_s"] is None and out.metrics["throughput_fps"] == 0.0
    assert out.metrics["packet_size"] == 128 and out.anomalies == ("no throughput",)
    assert out.details["trial_count"] == 0
    assert row_keys("x", T) == {"type": "x", "packet_size": 128, "traffic_type": "udp"}


def test_under_delivery_notes_one_per_short_trial() -> None:
    dut = SimDut(1e9, generator_max_fps=100.0)
    trials = [dut.trial(T, 50.0, 1.0), dut.trial(T, 500.0, 1.0)]
    assert len(under_delivery_notes(trials)) == 1
