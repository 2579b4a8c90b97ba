"""Statistics tables (per process as seeds/001, CPU lines and ports as tables) and the overview."""

from __future__ import annotations

from pathlib import Path

from report_fixtures import make_run

from vsperf.report.tables import OVERVIEW_MAX_METRICS, overview_table, statistics_tables
from vsperf.results.load import load_results
from vsperf.results.model import FrameSizeResult


def _lines(table: str) -> list[str]:
    return [line for line in table.splitlines() if line.startswith("|")]


def test_a_process_is_a_statistic_value_table() -> None:
    result = FrameSizeResult(64, {}, statistics={"Process: x": {"UID": 0, "PID": 7, "%CPU": 12.5, "CPU": 1}})
    ((group, table),) = statistics_tables(result)
    assert group == "Process: x"
    assert _lines(table) == [
        "| Statistic | Value  |", "| UID       |      0 |", "| PID       |      7 |", "| %CPU      | 12.500 |",
        "| CPU       |      1 |",
    ]


def test_few_rows_become_columns_many_stay_rows() -> None:
    few = {"System CPU": {"all": {"%usr": 1.0, "%idle": 99.0}, "0": {"%usr": 2.0, "%idle": 98.0}}}
    ((_, table),) = statistics_tables(FrameSizeResult(64, {}, statistics=few))
    assert _lines(table)[0] == "| Statistic | CPU all | CPU 0  |"
    many = {"System CPU": {str(c): {"%usr": float(c)} for c in range(4)}}
    ((_, table),) = statistics_tables(FrameSizeResult(64, {}, statistics=many))
    assert _lines(table)[0] == "| CPU | %usr  |"
    assert len(_lines(table)) == 5
    assert statistics_tables(FrameSizeResult(64, {}, statistics={"Empty": {}})) == []


def test_overview(tmp_path: Path) -> None:
    run = load_results(make_run(tmp_path / "run"))
    table = overview_table(run.tests[0])
    assert table is not None
    header = [c.strip() for c in _lines(table)[0].strip("|").split("|")]
    # six metrics at most (max_latency_ns is left to the metrics tables), then the trial count
    assert header == ["packet_size", "tx_rate_fps", "throughput_rx_fps", "throughput_rx_percent",
                      "throughput_rx_mbps", "frame_loss_percent", "avg_latency_ns", "trials"]
    assert len(header) == OVERVIEW_MAX_METRICS + 2
    assert _lines(table)[1].strip("|").split("|")[0].strip() == "64"
    assert overview_table(run.tests[2]) is None  # no result
