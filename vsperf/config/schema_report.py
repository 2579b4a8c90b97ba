"""Report and observability settings: collectors, report formats, anomaly thresholds, run
comparison, the performance matrix and pass criteria. Defaults: conf/04_report.yaml.
"""

from __future__ import annotations

from vsperf.config.types import NAME, SECONDS, Bool, Float, ListOf, MapOf, OneOf, Setting, Str

REPORT_FORMATS = ("rst", "md", "html", "pdf")

_NAME = NAME
_METRIC = Str(min_len=1, max_len=100)  # a result key, printed in tables and verdicts
_TEST = Str(min_len=1, max_len=100)  # a test's name (vsperf.catalog.NAME_MAX_CHARS) or '*'
# One criterion: {"min": number} and/or {"max": number}.
_BOUNDS = MapOf(Str(choices=("min", "max")), Float(), min_len=1)

SETTINGS: dict[str, Setting] = {
    "COLLECTOR": Setting(
        OneOf(_NAME, ListOf(_NAME)),
        "Statistics collectors run around every frame size's traffic (vsperf --list-collectors): a "
        "name or a list of names (VSPERF's 'Pidstat' is accepted)."),
    "COLLECTOR_PROCESSES": Setting(
        ListOf(_NAME),
        "Extra processes, by name, whose statistics the pidstat collector records besides the "
        "DUT's own (vswitch, VNFs and load generators)."),
    "COLLECTOR_INTERVAL_S": Setting(
        SECONDS,
        "How often the pidstat collector samples its processes (VSZ and RSS are averaged over the samples)."),
    "REPORT_FORMATS": Setting(
        ListOf(Str(choices=REPORT_FORMATS)),
        "Formats of the Level Test Report written after a run: rst, md, html, pdf (pdf needs WeasyPrint)."),
    "REPORT_PLOTS": Setting(
        Bool(),
        "Draw plots (PNG, matplotlib) into the report: throughput and latency against frame size, "
        "search trajectories, per-second rates."),
    "REPORT_SPREAD_THRESHOLD_PERCENT": Setting(
        Float(min=0, max=1000, unit="percent"),
        "The report flags a result whose repetitions (TRAFFICGEN_RFC2544_TESTS > 1) spread more than "
        "this, (max - min) / mean."),
    "COMPARE_THRESHOLD_PERCENT": Setting(
        Float(gt=0, max=1000, unit="percent"),
        "vsperf compare: a change worse than this is a regression (relative change; percentage points "
        "for loss metrics)."),
    "MATRIX_METRIC": Setting(
        _METRIC,
        "The metric of the performance matrix (--matrix): every test against the first one."),
    "CRITERIA": Setting(
        MapOf(_TEST, MapOf(_METRIC, _BOUNDS)),
        "Pass criteria: test name (or '*' for every test) -> metric -> {min: x, max: y}, checked at "
        "every frame size. A test that misses one fails (exit code 1, xUnit failure)."),
}
