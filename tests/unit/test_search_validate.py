"""Every configuration of a test, built from its settings before anything is deployed."""

from __future__ import annotations

import pytest
from settings_util import make_settings

from vsperf.config import Settings
from vsperf.errors import ConfigError
from vsperf.run.kinds import TRAFFIC_KINDS, TRAFFIC_TYPES, configure_traffic
from vsperf.search.config import Back2BackConfig, ContinuousConfig, ThroughputSearchConfig
from vsperf.search.goal_config import GoalSearchConfig
from vsperf.search.latency import LatencyConfig
from vsperf.search.reset import ResetConfig
from vsperf.search.select import ThroughputSearch
from vsperf.search.throughput_loads import ThroughputWithLoads
from vsperf.traffic import Traffic


@pytest.mark.parametrize(
    ("overrides", "traffic_type", "message"),
    [
        ({"TRAFFICGEN_LOSSRATE": 100}, "rfc2544_throughput", r"^TRAFFICGEN_LOSSRATE must be in \[0, 100\), got 100"),
        ({"TRAFFICGEN_LOSSRATE": 0.5, "TRAFFICGEN_PDR_LOSSRATE": 0.1}, "rfc2544_throughput",
         r"^TRAFFICGEN_PDR_LOSSRATE must be in \[TRAFFICGEN_LOSSRATE=0.5, 100\), got 0.1"),
        ({"TRAFFICGEN_RESET_AT_S": 70}, "rfc2544_reset",
         r"^TRAFFICGEN_RESET_AT_S must be in \[0, TRAFFICGEN_RESET_DURATION_S=60\), got 70"),
        ({"TRAFFICGEN_SEARCH": "mlr", "TRAFFICGEN_MLR_DURATION_SUM_S": 5}, "rfc2544_latency",
         "TRAFFICGEN_MLR_DURATION_SUM_S"),
    ],
)
def test_bad_values_fail_in_one_line_naming_the_setting(
    overrides: dict[str, object], traffic_type: str, message: str
) -> None:
    settings = make_settings(overrides)  # the loader accepts them: only the search config knows
    with pytest.raises(ConfigError, match=message) as caught:
        configure_traffic(Traffic(traffic_type=traffic_type), settings)
    assert "\n" not in str(caught.value)


def kinds(settings: Settings, traffic_type: str) -> list[type]:
    """The types of the configurations a test of `traffic_type` runs with: its own (a throughput
    search's is the algorithm's), then the throughput search it runs first, if any."""
    plan = configure_traffic(Traffic(traffic_type=traffic_type), settings)  # type: ignore[arg-type]
    config = plan.config.search if isinstance(plan.config, ThroughputWithLoads) else plan.config
    configs = [config.config if isinstance(config, ThroughputSearch) else config]
    if plan.throughput is not None and plan.throughput.search is not None:
        configs.append(plan.throughput.search.config)
    return [type(c) for c in configs]


def test_the_configs_each_traffic_type_uses() -> None:
    shipped = make_settings()
    assert kinds(shipped, "rfc2544_throughput") == [ThroughputSearchConfig]
    mlr = make_settings(TRAFFICGEN_SEARCH="mlr")
    assert kinds(mlr, "rfc2544_throughput") == [GoalSearchConfig]
    assert kinds(shipped, "rfc2544_back2back") == [Back2BackConfig]
    assert kinds(shipped, "rfc2544_latency") == [
        LatencyConfig, ThroughputSearchConfig]  # the throughput it measures first
    given = make_settings(TRAFFICGEN_THROUGHPUT_PERCENT=40)
    assert kinds(given, "rfc2544_reset") == [ResetConfig]
    assert kinds(shipped, "rfc2544_continuous") == [ContinuousConfig]


def test_the_table_covers_every_traffic_type_the_schema_accepts() -> None:
    assert sorted(TRAFFIC_KINDS) == sorted(TRAFFIC_TYPES)
