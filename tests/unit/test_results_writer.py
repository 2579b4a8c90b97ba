"""ResultsWriter: results.json written at once, after every frame size, atomically."""

from __future__ import annotations

import errno
import json
import math
import os
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from vsperf.outputs import OutputLost
from vsperf.results.load import load_results
from vsperf.results.model import ComponentInfo
from vsperf.results.writer import RESERVE_NAME, ResultsWriter, close_abandoned
from vsperf.search.measurer import LatencyStats, TrialResult
from vsperf.search.outcome import SearchOutcome


def _writer(tmp_path: Path, **changes: Any) -> ResultsWriter:
    kwargs: dict[str, Any] = {
        "run_id": "abc123",
        "command_line": ["vsperf", "phy2phy_tput"],
        "simulated": False,
        "environment": {"os": "Debian GNU/Linux 12 (bookworm)", "memory_kb": 24683656},
        "settings": {"TRAFFICGEN_PKT_SIZES": (64, 128), "TRAFFICGEN_LOSSRATE": 0.0},
        "settings_sources": {"TRAFFICGEN_PKT_SIZES": "--test-params"},
    }
    kwargs.update(changes)
    return ResultsWriter(tmp_path / "run", **kwargs)


def _start(writer: ResultsWriter, name: str = "phy2phy_tput") -> int:
    return writer.start_test(
        name=name,
        description="LTD.Throughput.RFC2544.PacketLossRatio",
        deployment="p2p",
        traffic_type="rfc2544_throughput",
        bidir=True,
        frame_modification=None,
        parameters={"TRAFFIC": {"traffic_type": "rfc2544_throughput"}},
        components=[],
    )


def _outcome(size: int, fps: float) -> SearchOutcome:
    line = 14_880_952.380952381 * 64 / size
    trial = TrialResult(
        kind="rate",
        frame_size_bytes=size,
        requested_rate_fps=fps,
        duration_s=60.0,
        tx_frames=int(fps * 60),
        rx_frames=int(fps * 60),
        actual_tx_rate_fps=fps,
        line_rate_fps=line,
        latency=LatencyStats(min_ns=5420.0, avg_ns=9002.0, max_ns=190440.0),
        purpose="verification",
    )
    return SearchOutcome(
        metrics={
            "throughput_rx_fps": fps,
            "throughput_rx_percent": 100.0 * fps / line,
            "frame_loss_percent": 0.0,
            "min_latency_ns": 5420.0,
            "b2b_frames": None,
        },
        trials=(trial,),
        details={"search": "binary"},
    )


def test_results_json_exists_right_away(tmp_path: Path) -> None:
    writer = _writer(tmp_path)
    assert writer.path == tmp_path / "run" / "results.json"
    data = json.loads(writer.path.read_text())
    assert data["schema_version"] == 2
    assert data["status"] == "running"
    assert data["tests"] == []
    assert data["settings"]["TRAFFICGEN_PKT_SIZES"] == [64, 128]
    assert datetime.fromisoformat(data["started_at"]).utcoffset() is not None


def test_round_trip_keeps_every_number(tmp_path: Path) -> None:
    writer = _writer(tmp_path)
    first = _start(writer)
    second = _start(writer, "back2back")
    assert (first, second) == (0, 1)
    components = [ComponentInfo("trafficgen", "dummy", "1.0"), ComponentInfo("vswitch", "ovs", "3.1.0")]
    writer.set_components(first, components)
    outcomes = {64: _outcome(64, 14_880_952.380952381), 128: _outcome(128, 8_445_945.945945946)}
    for size, outcome in outcomes.items():
        writer.add_frame_size(first, size, outcome)
    writer.add_frame_size(second, 64, _outcome(64, 1.0), {"Process: ovs-vswitchd": {"%CPU": 199.9, "PID": 7}})
    writer.finish_test(first, "passed")
    writer.finish_test(second, "failed", "trafficgen died")
    writer.finish_run("finished")

    run = load_results(writer.path.parent)
    assert run.status == "finished" and run.finished_at is not None
    assert run.command_line == ("vsperf", "phy2phy_tput")
    test = run.tests[0]
    assert test.status == "passed" and test.components == tuple(components)
    assert test.packet_sizes == (64, 128)
    for result in test.results:
        outcome = outcomes[result.packet_size]
        assert result.metrics == outcome.metrics
        assert result.trials == outcome.trials
        assert result.details == {"search": "binary"}
    assert run.tests[1].status == "failed" and run.tests[1].error == "trafficgen died"
    assert run.tests[1].results[0].statistics == {"Process: ovs-vswitchd": {"%CPU": 199.9, "PID": 7}}
    assert test.results[0].statistics == {}
    assert run == writer.results


def test_every_frame_size_is_on_disk_before_the_next(tmp_path: Path) -> None:
    writer = _writer(tmp_path)
    index = _start(writer)
    for count, size in enumerate((64, 128, 256), start=1):
        writer.add_frame_size(index, size, _outcome(size, 1000.0 * size))
        on_disk = load_results(writer.path)
        assert on_disk.tests[0].packet_sizes == (64, 128, 256)[:count]
        assert on_disk.status == "running"


def test_rewrite_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = _writer(tmp_path)
    index = _start(writer)
    writer.add_frame_size(index, 64, _outcome(64, 1e6))
    before = writer.path.read_bytes()

    def crash(src: object, dst: object) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", crash)
    # A failed write stops the run (OutputLost, a KeyboardInterrupt: the runner's stop path).
    with pytest.raises(OutputLost, match=r"cannot write .*results\.json: disk gone"):
        writer.add_frame_size(index, 128, _outcome(128, 1e6))
    assert writer.path.read_bytes() == before
    assert load_results(writer.path).tests[0].packet_sizes == (64,)
    assert sorted(p.name for p in writer.path.parent.iterdir()) == [
        RESERVE_NAME,  # the room results.json's closing write will use
        "result_0_phy2phy_tput_p2p.csv",
        "results.json",
    ]


def test_interrupted_run_keeps_measured_sizes(tmp_path: Path) -> None:
    writer = _writer(tmp_path)
    index = _start(writer)
    writer.add_frame_size(index, 64, _outcome(64, 1e6))
    writer.add_frame_size(index, 128, _outcome(128, 5e5))
    # Ctrl-C during 256 B: the runner closes the run without finishing the test.
    writer.finish_run("interrupted")
    run = load_results(writer.path)
    assert run.status == "interrupted"
    test = run.tests[0]
    assert test.status == "interrupted"
    assert test.error == "the run ended (interrupted) before this test finished"
    assert [r.metrics["throughput_rx_fps"] for r in test.results] == [1e6, 5e5]


def test_killed_run_still_loads(tmp_path: Path) -> None:
    writer = _writer(tmp_path)
    index = _start(writer)
    writer.add_frame_size(index, 64, _outcome(64, 1e6))
    del writer  # kill -9: nothing else is written
    run = load_results(tmp_path / "run")
    assert run.status == "running" and run.tests[0].status == "running"
    assert run.tests[0].results[0].metrics["throughput_rx_fps"] == 1e6


def test_non_finite_numbers_become_null(tmp_path: Path) -> None:
    writer = _writer(tmp_path, settings={"X": math.inf})
    index = _start(writer)
    writer.add_frame_size(index, 64, SearchOutcome(metrics={"avg_latency_ns": math.nan}, trials=()))

    def refuse(token: str) -> None:
        raise AssertionError(f"non-standard JSON token {token}")

    data = json.loads(writer.path.read_text(), parse_constant=refuse)
    assert data["settings"]["X"] is None
    assert data["tests"][0]["results"][0]["metrics"]["avg_latency_ns"] is None


def test_misuse_is_refused(tmp_path: Path) -> None:
    writer = _writer(tmp_path)
    index = _start(writer)
    with pytest.raises(IndexError):
        writer.add_frame_size(5, 64, _outcome(64, 1.0))
    with pytest.raises(ValueError, match="finished test's status"):
        writer.finish_test(index, "running")
    writer.finish_test(index, "passed")
    with pytest.raises(ValueError, match="already passed"):
        writer.add_frame_size(index, 64, _outcome(64, 1.0))
    with pytest.raises(ValueError, match="finished run's status"):
        writer.finish_run("done")


def test_clock_stamps_every_change(tmp_path: Path) -> None:
    ticks = iter(f"2024-05-11T07:00:0{i}+00:00" for i in range(10))
    writer = _writer(tmp_path, clock=lambda: next(ticks))
    index = _start(writer)
    writer.finish_test(index, "passed")
    writer.finish_run("finished")
    run = load_results(writer.path)
    assert run.started_at.endswith("00+00:00")
    assert (run.tests[0].started_at, run.tests[0].finished_at) == (
        "2024-05-11T07:00:01+00:00",
        "2024-05-11T07:00:02+00:00",
    )
    assert run.finished_at == "2024-05-11T07:00:03+00:00"


def test_file_is_exactly_the_whole_run_encoded_after_every_change(tmp_path: Path) -> None:
    # Frame sizes are encoded once and spliced in (vsperf.results.encode): the text must stay
    # byte for byte what encoding the whole run gives, at every step, nested lists included.
    writer = _writer(tmp_path, settings={"TRAFFICGEN_PKT_SIZES": (64, 128), "NESTED": [[1, "\0x"], {"k": []}]})

    def expected() -> str:
        return json.dumps(writer.results.to_dict(), indent=2, allow_nan=False) + "\n"

    states = [writer.path.read_text()]
    assert states[-1] == expected()
    for name in ("phy2phy_tput", "back2back"):
        index = _start(writer, name)
        for size, fps in ((64, 1e6), (128, 9e5), (1518, 8e5)):
            writer.add_frame_size(index, size, _outcome(size, fps), {"cpu": {"vswitchd_percent": 99.5}})
            assert writer.path.read_text() == expected()
        writer.finish_test(index, "passed")
        assert writer.path.read_text() == expected()
    writer.finish_run("finished")
    assert writer.path.read_text() == expected()
    assert len(load_results(writer.path.parent).tests[1].results) == 3


def test_a_full_disk_stops_the_run_and_results_json_is_still_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = _writer(tmp_path)
    index = _start(writer)
    writer.add_frame_size(index, 64, _outcome(64, 1e6))
    assert (writer.path.parent / RESERVE_NAME).exists()
    real_replace = os.replace

    def no_space(src: Any, dst: Any) -> None:
        if (writer.path.parent / RESERVE_NAME).exists():  # no room but the reserve's
            raise OSError(errno.ENOSPC, "No space left on device")
        real_replace(src, dst)

    # The disk fills: every write fails while the reserve still holds its room.
    monkeypatch.setattr(os, "replace", no_space)
    with pytest.raises(OutputLost, match="No space left on device"):
        writer.add_frame_size(index, 128, _outcome(128, 1e6))
    writer.finish_test(index, "interrupted", "the disk filled")  # never raises again
    # Releasing the reserve gives the closing write its room back (here: os.replace works again).
    writer.finish_run("interrupted")
    run = load_results(writer.path)
    assert run.status == "interrupted" and run.finished_at is not None
    assert run.tests[0].status == "interrupted"
    assert [r.packet_size for r in run.tests[0].results] == [64, 128]  # what was measured is kept
    assert not (writer.path.parent / RESERVE_NAME).exists()


def test_closing_falls_back_to_what_results_json_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = _writer(tmp_path)
    index = _start(writer)
    writer.add_frame_size(index, 64, _outcome(64, 1e6))
    written = writer.path.stat().st_size
    real_replace = os.replace

    def room_for_the_old_size_only(src: Any, dst: Any) -> None:
        if Path(src).stat().st_size > written + 200:  # the new frame size does not fit any more
            raise OSError(errno.ENOSPC, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", room_for_the_old_size_only)
    with pytest.raises(OutputLost):
        writer.add_frame_size(index, 128, _outcome(128, 1e6))
    writer.finish_run("interrupted")
    run = load_results(writer.path)
    assert run.status == "interrupted" and run.finished_at is not None
    assert [r.packet_size for r in run.tests[0].results] == [64]


def test_close_abandoned(tmp_path: Path) -> None:
    writer = _writer(tmp_path)
    _start(writer)  # a signal came before the runner could close it
    assert load_results(writer.path).status == "running"
    assert close_abandoned(writer.path.parent)
    run = load_results(writer.path)
    assert run.status == "interrupted" and run.finished_at is not None and run.tests[0].status == "interrupted"
    assert not close_abandoned(writer.path.parent)  # closed already
    assert not close_abandoned(tmp_path / "nothing")
