"""TRAFFICGEN_SEARCH picks the throughput algorithm; dependent tests get their throughput."""

from __future__ import annotations

import pytest
from dutsim import SimDut
from settings_util import make_settings

from vsperf.search.measurer import TrialResult
from vsperf.search.select import ThroughputSearch, ThroughputSource, run_throughput, throughput_for
from vsperf.traffic import Traffic

T64 = Traffic(traffic_type="rfc2544_latency", frame_size_bytes=64)
LINE = T64.line_rate_fps


def _source(overrides: dict[str, object]) -> ThroughputSource:
    return ThroughputSource.from_settings(make_settings(overrides))


def test_a_source_is_a_percentage_or_a_search() -> None:
    assert _source({"TRAFFICGEN_THROUGHPUT_PERCENT": 10}) == ThroughputSource(10.0, None)
    searched = _source({"TRAFFICGEN_SEARCH": "ndr_pdr"})
    assert searched.percent is None and searched.search is not None and searched.search.algorithm == "ndr_pdr"
    with pytest.raises(ValueError, match="either a percentage or a search"):
        ThroughputSource(None, None)


@pytest.mark.parametrize("algorithm", ["binary", "ndr_pdr", "mlr"])
def test_each_algorithm_is_selectable(algorithm: str) -> None:
    settings = make_settings({"TRAFFICGEN_SEARCH": algorithm, "TRAFFICGEN_DURATION": 5})
    out = run_throughput(SimDut(0.4 * LINE), T64, ThroughputSearch.from_settings(settings))
    assert out.details["search"]["algorithm"] == algorithm
    found = out.metrics["tx_rate_fps"]
    assert isinstance(found, float) and 0.39 * LINE <= found <= 0.4 * LINE


def test_given_throughput_wins_then_the_setting() -> None:
    dut = SimDut(0.4 * LINE)
    assert throughput_for(dut, T64, _source({"TRAFFICGEN_THROUGHPUT_PERCENT": 10}), None, 123.0).rate_fps == 123.0
    known = throughput_for(dut, T64, _source({"TRAFFICGEN_THROUGHPUT_PERCENT": 10}), None, None)
    assert known.source == "setting" and known.trials == ()
    assert known.rate_fps == pytest.approx(0.1 * LINE)
    assert dut.calls == []
    with pytest.raises(ValueError, match="negative"):
        throughput_for(dut, T64, _source({}), None, -1.0)


def test_measured_throughput_keeps_its_trials_tagged() -> None:
    seen: list[TrialResult] = []
    settings = make_settings({"TRAFFICGEN_SEARCH": "mlr", "TRAFFICGEN_DURATION": 5})
    known = throughput_for(SimDut(0.4 * LINE), T64, ThroughputSource.from_settings(settings), seen.append, None)
    assert known.source == "measured" and known.outcome is not None
    assert 0.39 * LINE <= known.rate_fps <= 0.4 * LINE
    assert known.trials and all(t.purpose.startswith("throughput: ") for t in known.trials)
    assert tuple(seen) == known.trials
    assert known.as_dict()["algorithm"] == "mlr"
    assert known.outcome.metrics["type"] == "rfc2544_throughput"


def test_no_passing_rate_gives_zero_and_its_anomalies() -> None:
    known = throughput_for(SimDut(1.0), T64, _source({"TRAFFICGEN_DURATION": 1}), None, None)
    assert known.rate_fps == 0.0
    assert any(a.startswith("throughput search: no rate passed") for a in known.anomalies)
