"""What the report concludes from the results: anomalies, rationale and conclusions.

Pure functions over `vsperf.results.model`; every sentence is computed from the data, so
"No anomalies were detected" appears only when nothing in the results says otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vsperf.report.anomalies import FLAG_MEANINGS, anomalies_of
from vsperf.report.markup import format_value
from vsperf.results.model import RunResults, TestResult
from vsperf.results.sizes import PacketSize, size_label
from vsperf.search.measurer import FLAG_UNDER_DELIVERY
from vsperf.verdicts.criteria import evaluate_run

__all__ = ["FLAG_MEANINGS", "anomalies_of", "conclusions", "is_simulated", "rationale"]

# The figure a conclusion quotes for a test, with the unit it is in.
HEADLINE_METRICS = (("throughput_rx_fps", "fps"), ("b2b_frames", "frames"))


def is_simulated(run: RunResults, test: TestResult) -> bool:
    """True when no frame of `test` reached a real device (the run or its deployment simulated)."""
    return run.simulated or any(c.name == "simulated" for c in test.components)


def _numeric(test: TestResult, key: str) -> list[tuple[PacketSize, int | float]]:
    values: list[tuple[PacketSize, int | float]] = []
    for result in test.results:
        value = result.metrics.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            values.append((result.packet_size, value))
    return values


def _headline(test: TestResult) -> str | None:
    for key, unit in HEADLINE_METRICS:
        values = _numeric(test, key)
        if not values:
            continue
        percent = dict(_numeric(test, "throughput_rx_percent")) if unit == "fps" else {}

        def show(size: PacketSize, value: float, unit: str = unit,
                 percent: dict[PacketSize, int | float] = percent) -> str:
            text = f"{format_value(value)} {unit}"
            if size in percent:
                text += f" ({format_value(percent[size])} % of line rate)"
            return f"{text} at {size_label(size)}"

        low = min(values, key=lambda sv: sv[1])
        high = max(values, key=lambda sv: sv[1])
        if len(values) == 1:
            return f"{key} was {show(*low)}"
        return f"{key} ranged from {show(*low)} to {show(*high)}"
    return None


def conclusions(run: RunResults, findings: Sequence[Sequence[str]] | None = None) -> list[str]:
    """Conclusions computed from the results: test statuses, figures found, pass criteria,
    anomalies (`findings`: each test's anomalies by index; computed here when not given)."""
    out: list[str] = []
    by_status: dict[str, list[str]] = {}
    for test in run.tests:
        by_status.setdefault(test.status, []).append(test.name)
    if not run.tests:
        out.append("No test was run.")
    else:
        parts = [f"{len(names)} {status} ({', '.join(names)})" for status, names in by_status.items()]
        out.append(f"{len(run.tests)} test(s) ran: {'; '.join(parts)}.")
    if run.status != "finished":
        out.append(
            f"The run did not finish normally (status: {run.status}); the report holds what was "
            "measured until it stopped."
        )
    if run.simulated:
        out.append(
            "The device under test was simulated: the figures show how vsperf's searches behave, "
            "not how any switch performs."
        )
    for test in run.tests:
        headline = _headline(test)
        if headline:
            out.append(f"{test.name} ({test.deployment}, {test.traffic_type}): {headline}.")
        elif test.results:
            out.append(f"{test.name} ({test.deployment}): no throughput or back-to-back figure was measured.")
    verdicts = [v for v in evaluate_run(run) if v is not None]
    if verdicts:
        failed = [v.test_name for v in verdicts if not v.passed]
        out.append(
            f"Pass criteria: {len(verdicts) - len(failed)} of {len(verdicts)} test(s) with criteria met them"
            + (f"; not met by {', '.join(failed)}." if failed else ".")
        )
    flagged = sum(len(r.flagged_trials) for t in run.tests for r in t.results)
    if findings is None:
        findings = [anomalies_of(t, run) for t in run.tests]
    noted = sum(len(f) for f in findings)
    if noted:
        out.append(
            f"{noted} anomal{'y was' if noted == 1 else 'ies were'} recorded ({flagged} flagged "
            "trial(s)); see each test's Anomalies section before relying on its figures."
        )
    else:
        out.append("No anomalies were recorded in any test.")
    return out


def _setting(settings: Mapping[str, Any], name: str) -> Any:
    return settings.get(name)


def rationale(run: RunResults) -> list[str]:
    """How the figures were obtained, from the run's settings and trials."""
    settings = run.settings
    types = {t.traffic_type for t in run.tests}
    if any(v is not None for v in evaluate_run(run)):
        criteria = (
            "Pass criteria on the performance figures (setting CRITERIA) were checked at every packet "
            "size; each test's Pass criteria section lists them. Besides them, a test 'passed' when it "
            "ran to completion, 'failed' when an error stopped it and 'interrupted' when the run was "
            "stopped."
        )
    else:
        criteria = (
            "The tests have no pass/fail criteria on the performance figures: a test 'passed' when it "
            "ran to completion, 'failed' when an error stopped it and 'interrupted' when the run was "
            "stopped. The figures are reported as measured."
        )
    out = [
        criteria,
        "Frame loss is counted against the frames the generator actually sent, after traffic "
        "has stopped; a trial where the generator could not reach the requested rate is flagged "
        f"{FLAG_UNDER_DELIVERY} and reported, never counted as loss of the device under test.",
    ]
    loss = _setting(settings, "TRAFFICGEN_LOSSRATE")
    if "rfc2544_throughput" in types:
        allowed = f"{format_value(loss)} %" if loss is not None else "the configured loss rate"
        out.append(
            "Throughput (RFC 2544 section 26.1) is the highest offered rate at which the frame "
            f"loss did not exceed {allowed} (TRAFFICGEN_LOSSRATE)."
        )
    if "rfc2544_back2back" in types:
        out.append(
            "Back-to-back (RFC 2544 section 26.4) is the longest burst at line rate forwarded without loss."
        )
    if "rfc2544_continuous" in types:
        out.append(
            "Continuous tests offer a fixed rate for the configured duration and report what was received."
        )
    duration = _setting(settings, "TRAFFICGEN_DURATION")
    durations = sorted(
        {t.duration_s for test in run.tests for r in test.results for t in r.trials if t.kind == "rate"}
    )
    if duration is not None:
        out.append(f"The configured trial duration was TRAFFICGEN_DURATION = {format_value(duration)} s.")
    if durations:
        span = (
            f"{format_value(durations[0])} s"
            if len(durations) == 1
            else f"from {format_value(durations[0])} s to {format_value(durations[-1])} s"
        )
        out.append(
            f"Rate trials in this run lasted {span}; the trial log of each packet size lists every trial."
        )
    return out
