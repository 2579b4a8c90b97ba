"""A search without an answer it stands behind says why in one line, and the test fails."""

from __future__ import annotations

import re

import pytest
from dutsim import SimDut
from search_shipped import shipped
from settings_util import make_settings

from vsperf.errors import SearchError
from vsperf.search import throughput
from vsperf.search.config import ThroughputSearchConfig
from vsperf.search.goal_config import goal_search_config_from_settings
from vsperf.search.latency import LatencyConfig, rfc2544_latency
from vsperf.search.mlr import mlr_throughput
from vsperf.search.ndr_pdr import ndr_pdr_throughput
from vsperf.search.select import ThroughputSource, throughput_for
from vsperf.traffic import Traffic

T64 = Traffic(frame_size_bytes=64)
LINE = T64.line_rate_fps


@pytest.mark.parametrize("search", [mlr_throughput, ndr_pdr_throughput], ids=["mlr", "ndr_pdr"])
def test_no_load_meets_a_goal(search: object) -> None:
    # capacity_fps 100: below the lowest load a goal search tries (0.001 % of line rate).
    cfg = goal_search_config_from_settings(make_settings({"TRAFFICGEN_DURATION": 10}),
                                           "mlr" if search is mlr_throughput else "ndr_pdr")
    out = search(SimDut(100.0), T64, cfg)  # type: ignore[operator]
    assert out.metrics["ndr_tx_rate_fps"] == 0.0
    assert out.failure == ("no load met ndr (loss at most 0 %): even the lowest load tried, 298 fps (0.001 % of line "
                           "rate), lost 66.67 % (the DUT forwarded 99 fps)")
    assert out.failure in out.anomalies
    with pytest.raises(SearchError, match=r"^64 B: no load met ndr"):
        out.raise_if_failed("64 B")


def test_an_answer_is_no_failure() -> None:
    cfg = goal_search_config_from_settings(make_settings({"TRAFFICGEN_DURATION": 10}), "mlr")
    out = mlr_throughput(SimDut(0.4 * LINE), T64, cfg)
    assert out.failure is None
    out.raise_if_failed("64 B")  # nothing raised


def test_binary_guard_is_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(throughput, "MAX_SEARCH_TRIALS", 3)
    out = throughput.rfc2544_throughput(SimDut(0.4 * LINE), T64, shipped(ThroughputSearchConfig, duration_s=1.0))
    assert len(out.trials) == 3
    assert out.failure == "the binary search stopped at its guard of 3 trials without converging"


def test_one_repetition_without_a_passing_rate_fails_the_search() -> None:
    capacities = [0.4 * LINE] * 11 + [1.0] * 200  # the DUT dies after the first repetition
    cfg = shipped(ThroughputSearchConfig, duration_s=1.0, repetitions=2)
    out = throughput.rfc2544_throughput(SimDut(0.4 * LINE, capacities=capacities), T64, cfg)
    assert out.failure is not None
    assert re.match(r"no rate passed \(loss allowed 0 %\) in 1 of 2 repetitions: the lowest rate tried", out.failure)


def test_a_test_at_the_throughput_fails_with_its_search() -> None:
    settings = make_settings({"TRAFFICGEN_DURATION": 1, "TRAFFICGEN_SEARCH": "mlr"})
    dut = SimDut(100.0)
    cfg = LatencyConfig(duration_s=1.0, repetitions=1)
    source = ThroughputSource.from_settings(settings)
    out = rfc2544_latency(dut, T64, cfg, lambda: throughput_for(dut, T64, source, None, None))
    assert out.metrics["avg_latency_ns"] is None
    assert out.failure is not None and out.failure.startswith("throughput search: no load met ndr")
