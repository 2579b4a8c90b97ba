"""The report's latency distributions: the curves a test has data for, drawn as valid PNG files."""

from __future__ import annotations

from pathlib import Path

import pytest

from vsperf.report.figure import save_png
from vsperf.report.plots_latency import (
    distribution_figure,
    distribution_lines,
    loads_figure,
    loads_lines,
)
from vsperf.results.model import FrameSizeResult, TestResult
from vsperf.search import hdr
from vsperf.search.measurer import LatencyStats, TrialResult

pytest.importorskip("matplotlib", reason="plots need matplotlib")


def _trial(purpose: str, values: range) -> TrialResult:
    text = hdr.encode_values(values)
    latency = LatencyStats(min(values), 1.0, max(values), hdr.percentiles(text), len(values), text)
    return TrialResult("rate", 64, 1.0, 1.0, len(values), len(values), 1.0, 10.0, latency=latency, purpose=purpose)


def _test(traffic_type: str, result: FrameSizeResult) -> TestResult:
    return TestResult(0, "t", "", "p2p", traffic_type, True, None, (), {}, "passed", None, "x", "y", (result,))


def test_a_latency_test_adds_up_its_trials_and_skips_the_search_run_first(tmp_path: Path) -> None:
    trials = (_trial("throughput: search", range(1, 5)), _trial("latency 1/2", range(100, 200)),
              _trial("latency 2/2", range(100, 300)))
    result = FrameSizeResult(64, {}, trials=trials)
    ((label, text),) = distribution_lines(_test("rfc2544_latency", result), result)
    assert label == "64 B, 2 trials" and hdr.total_count(text) == 300
    assert distribution_lines(_test("rfc2544_throughput", result), result) == []
    figure = distribution_figure(_test("rfc2544_latency", result), result)
    assert figure is not None
    save_png(figure, tmp_path / "d.png")
    assert (tmp_path / "d.png").stat().st_size > 1000


def test_latency_at_loads_one_curve_per_load(tmp_path: Path) -> None:
    trials = (_trial("search", range(1, 3)), _trial("latency at 10 % of pdr", range(10, 20)),
              _trial("latency at 90 % of pdr", range(10, 90)))
    entries = [{"load_percent": 10.0, "goal": "pdr", "rate_fps": 100.0, "trial": 2},
               {"load_percent": 90.0, "goal": "pdr", "rate_fps": 900.0, "trial": 3},
               {"load_percent": 95.0, "goal": "pdr", "rate_fps": 950.0, "trial": 9}]  # no such trial: left out
    result = FrameSizeResult("IMIX x", {}, {"load_latency": entries}, trials=trials)
    assert [label for label, _ in loads_lines(result)] == ["10 % of pdr (100 fps)", "90 % of pdr (900 fps)"]
    figure = loads_figure(_test("rfc2544_throughput", result), result)
    assert figure is not None
    save_png(figure, tmp_path / "l.png")
    assert loads_lines(FrameSizeResult(64, {})) == []
