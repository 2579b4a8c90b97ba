"""Per-test CSV files: VSPERF's names, columns and one row per frame size."""

from __future__ import annotations

import csv
from pathlib import Path

from vsperf.results.csvfile import ATTRIBUTE_COLUMNS, csv_filename, format_cell
from vsperf.results.model import ComponentInfo
from vsperf.results.writer import ResultsWriter
from vsperf.search.outcome import SearchOutcome


def _writer(tmp_path: Path) -> ResultsWriter:
    return ResultsWriter(
        tmp_path,
        run_id="abc123",
        command_line=["vsperf"],
        simulated=True,
        environment={},
        settings={"TRAFFIC": {"l3": {"proto": "udp"}}, "VSWITCH": "ovs", "TRAFFICGEN": "dummy"},
        settings_sources={},
    )


def _start(writer: ResultsWriter, name: str, deployment: str = "p2p") -> int:
    return writer.start_test(
        name=name,
        description="",
        deployment=deployment,
        traffic_type="rfc2544_throughput",
        bidir=True,
        frame_modification=None,
        parameters={},
        components=[],
    )


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_file_names_are_vsperfs() -> None:
    assert csv_filename(0, "phy2phy_tput", "p2p") == "result_0_phy2phy_tput_p2p.csv"
    assert csv_filename(12, "my test/1", "pvvp2") == "result_12_my_test_1_pvvp2.csv"


def test_cells_are_plain() -> None:
    assert format_cell(None) == ""
    assert float(format_cell(14880952.380952381)) == 14880952.380952381
    assert format_cell(0.1) == "0.1"
    assert format_cell(21713) == "21713"
    assert format_cell(True) == "True"
    assert format_cell(float("nan")) == ""


def test_rows_columns_and_values(tmp_path: Path) -> None:
    writer = _writer(tmp_path)
    _start(writer, "first")
    index = _start(writer, "phy2phy_tput")
    writer.set_components(
        index, [ComponentInfo("vswitch", "ovs", "3.1.0"), ComponentInfo("trafficgen", "dummy", "2")]
    )
    writer.add_frame_size(
        index,
        64,
        SearchOutcome(
            metrics={"min_latency_ns": None, "throughput_rx_fps": 14880952.380952381, "tx_rate_fps": 1.5e7},
            trials=(),
        ),
    )
    writer.add_frame_size(
        index, 128, SearchOutcome(metrics={"throughput_rx_fps": 8445945.9, "latency_p99_ns": 7.0}, trials=())
    )
    path = tmp_path / "result_1_phy2phy_tput_p2p.csv"
    with path.open(newline="") as fh:
        header = next(csv.reader(fh))
    assert header == [
        "tx_rate_fps",
        "throughput_rx_fps",
        "min_latency_ns",
        "latency_p99_ns",
        *ATTRIBUTE_COLUMNS,
    ]
    rows = _read(path)
    assert [r["packet_size"] for r in rows] == ["64", "128"]
    first, second = rows
    assert float(first["throughput_rx_fps"]) == 14880952.380952381
    assert first["min_latency_ns"] == "" and first["latency_p99_ns"] == ""
    assert second["tx_rate_fps"] == "" and second["latency_p99_ns"] == "7.0"
    # VSPERF's type, vsperf's precise one beside it
    assert first["type"] == "rfc2544" and first["test_type"] == "rfc2544_throughput"
    assert first["traffic_type"] == "udp"
    assert first["start_time"] and first["stop_time"] == "" and first["test_execution_time"] == ""
    assert (first["id"], first["deployment"], first["vswitch"], first["vswitch_version"]) == (
        "phy2phy_tput",
        "p2p",
        "ovs",
        "3.1.0",
    )
    assert (first["trafficgen"], first["trafficgen_version"]) == ("dummy", "2")
    assert (first["run_id"], first["simulated"], first["test_status"]) == ("abc123", "True", "running")
    assert '"' not in path.read_text()  # numbers are never quoted
    # A test without frame sizes has no CSV yet.
    assert not (tmp_path / "result_0_first_p2p.csv").exists()


def test_status_and_fallbacks(tmp_path: Path) -> None:
    writer = _writer(tmp_path)
    index = _start(writer, "back2back")
    writer.add_frame_size(
        index, 64, SearchOutcome(metrics={"b2b_frames": 21713, "type": "rfc2544_back2back"}, trials=())
    )
    writer.finish_test(index, "passed")
    (row,) = _read(tmp_path / "result_0_back2back_p2p.csv")
    assert row["b2b_frames"] == "21713"
    # the search's own value wins, read as VSPERF's type (a results.json of an earlier version)
    assert (row["type"], row["test_type"]) == ("rfc2544", "rfc2544_back2back")
    assert row["test_execution_time"] != "" and len(row["stop_time"]) == len("2026-01-01 00:00:00")
    assert (row["vswitch"], row["trafficgen"], row["vswitch_version"]) == ("ovs", "dummy", "")
    assert row["test_status"] == "passed"
