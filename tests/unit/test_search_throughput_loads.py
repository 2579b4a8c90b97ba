"""rfc2544_throughput's plan: the search selected, and the latency loads checked against its goals."""

from __future__ import annotations

import pytest

from vsperf.config import load_settings
from vsperf.errors import ConfigError
from vsperf.search.throughput_loads import ThroughputWithLoads


def test_loads_follow_the_goals_of_the_search() -> None:
    settings = load_settings(None, env={}).merged({"TRAFFICGEN_SEARCH": "ndr_pdr",
                                                   "TRAFFICGEN_LATENCY_LOADS_PERCENT": [0, 90]}, "test")
    plan = ThroughputWithLoads.from_settings(settings)
    assert plan.search.algorithm == "ndr_pdr" and plan.loads is not None and plan.loads.goal == "pdr"
    binary = settings.merged({"TRAFFICGEN_SEARCH": "binary"}, "test")
    with pytest.raises(ConfigError, match="has no such answer; valid: throughput"):
        ThroughputWithLoads.from_settings(binary)
    assert ThroughputWithLoads.from_settings(binary.merged({"TRAFFICGEN_LATENCY_LOADS_GOAL": "throughput"},
                                                           "test")).loads is not None
    assert ThroughputWithLoads.from_settings(load_settings(None, env={})).loads is None
