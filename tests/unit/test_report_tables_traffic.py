"""The report's tables of the latency at loads and of the frames received per size of a mix."""

from __future__ import annotations

from vsperf.report.tables_traffic import load_latency_table, size_counts_table, traffic_tables
from vsperf.results.model import FrameSizeResult
from vsperf.search.measurer import TrialResult


def _trial(sizes: tuple[tuple[int, int], ...]) -> TrialResult:
    return TrialResult("rate", 334, 1.0, 1.0, 12, 12, 1.0, 10.0, rx_frames_by_size=sizes)


def test_latency_at_loads_together() -> None:
    entries = [{"load_percent": p, "goal": "pdr", "rate_fps": 1000.0 * (p or 1), "loss_percent": 0.0,
                "min_ns": 1000.0, "avg_ns": 2000.0, "max_ns": 9000.0, "percentiles_ns": {"p99": 5000.0}}
               for p in (0, 50, 90)]
    title, table = load_latency_table(FrameSizeResult(64, {}, {"load_latency": entries}))  # type: ignore[misc]
    lines = str(table).splitlines()
    assert title == "Latency at loads" and "p99 (µs)" in lines[1] and "p99.9" not in lines[1]
    assert "| 90 % of pdr |" in str(table) and "5.000" in str(table)
    assert load_latency_table(FrameSizeResult(64, {})) is None


def test_frames_per_size_against_the_mix() -> None:
    result = FrameSizeResult("aaaaaaaddddg", {}, trials=(_trial(((64, 7), (512, 4), (1518, 1))),) * 2)
    title, table = size_counts_table(result)  # type: ignore[misc]
    assert title == "Frames received per size"
    assert "|       64 |              14 |    58.333 |        58.333 |" in str(table)
    assert size_counts_table(FrameSizeResult(64, {}, trials=(_trial(((64, 1),)),))) is None
    assert [t for t, _ in traffic_tables(result)] == ["Frames received per size"]
