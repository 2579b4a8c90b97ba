"""vsperf.history.dashboard.links: static, served and HISTORY_REPORT_URL links."""

from __future__ import annotations

from vsperf.history.dashboard.links import Links, slug


def test_static_and_served_links() -> None:
    assert Links("../").series(4) == "../series/s4.html"
    assert Links("").compare("a", "b") == "compare/a__b.html"
    assert Links("").report("20260101T000000-abc123", "/r/x/report.html") == "file:///r/x/report.html"
    assert Links("/", served=True).report("20260101T000000-abc123", "/r/x/report.html") == \
        "/report/20260101T000000-abc123/"


def test_the_report_url_template() -> None:
    links = Links("", report_url="https://ci.example.org/vsperf/{dir}/report.html?run={run_id}")
    assert links.report("20260101T000000-abc123", "/logs/results_2026/report.html") == \
        "https://ci.example.org/vsperf/results_2026/report.html?run=abc123"


def test_odd_run_ids_become_safe_file_names() -> None:
    assert slug("20260101T000000-abc123") == "20260101T000000-abc123"
    assert "/" not in slug("../../etc/passwd") and len(slug("../../etc/passwd")) == 16
