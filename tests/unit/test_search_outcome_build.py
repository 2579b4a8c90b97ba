"""Shared pieces of the outcomes of the tests beyond throughput."""

from __future__ import annotations

from dutsim import SimDut

from vsperf.search.outcome import SearchOutcome
from vsperf.search.outcome_build import (
    AtThroughput,
    after_throughput,
    keep_phase,
    not_measured,
    row_keys,
    under_delivery_notes,
)
from vsperf.search.select import KnownThroughput
from vsperf.search.trials import TrialLog, mean_or_zero
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


def _measured_throughput(rate_fps: float) -> KnownThroughput:
    search = SearchOutcome(metrics={}, trials=(SimDut(1e6).trial(T, rate_fps, 2.0),), details={}, anomalies=("slow",))
    return KnownThroughput(rate_fps, "measured", search)


def test_after_throughput_counts_the_search_and_ends_with_the_row_keys() -> None:
    known = _measured_throughput(1000.0)
    own = SimDut(1e6).trial(T, 1000.0, 3.0)
    out = after_throughput("rfc2544_latency", T, known, [own], {"x": 1.0}, {"parameters": {}}, ("own",))
    assert list(out.metrics) == ["x", "throughput_fps", "type", "packet_size", "traffic_type"]
    assert out.metrics["throughput_fps"] == 1000.0 and len(out.trials) == 2
    assert out.details["trial_count"] == 2 and out.details["trial_time_s"] == 5.0
    assert out.details["throughput"]["rate_fps"] == 1000.0 and out.anomalies == ("own",)


def test_at_throughput_starts_with_the_search_anomalies() -> None:
    seen: list[object] = []
    known_slow = _measured_throughput(500.0).anomalies  # the search's, as the throughput states them
    assert len(known_slow) == 1
    run = AtThroughput.start("rfc2544_reset", ("reset_time_s",), SimDut(1e6), T, lambda: _measured_throughput(500.0),
                             seen.append)
    assert run.anomalies.as_tuple() == known_slow and not run.at_line_rate
    run.log.rate(T, 500.0, 1.0, "reset 1/1")
    run.anomalies.add("late")
    out = run.outcome({"reset_time_s": 0.1}, {})
    assert out.anomalies == (*known_slow, "late") and len(out.trials) == 2 and len(seen) == 1
    assert run.not_measured("why").metrics["reset_time_s"] is None
    line = AtThroughput.start("x", (), SimDut(1e9), T, lambda: KnownThroughput(T.line_rate_fps, "given"), None)
    assert line.at_line_rate


def test_mean_or_zero() -> None:
    assert mean_or_zero([1.0, 2.0, 4.5]) == 2.5 and mean_or_zero([]) == 0.0
