"""The search settings section: every default in conf/, read by the searches through the loader."""

from __future__ import annotations

import pytest

from vsperf.config import SETTINGS_SCHEMA, load_settings
from vsperf.config.schema_search import SETTINGS
from vsperf.errors import ConfigError
from vsperf.search.config import setting
from vsperf.search.goal_config import goal_search_config_from_settings


def test_section_is_merged_and_defaults_match() -> None:
    assert set(SETTINGS) <= set(SETTINGS_SCHEMA)
    settings = load_settings(env={})
    for name in SETTINGS:
        assert setting(settings, name) == settings[name], name  # conf gives each its default
    for algorithm in ("ndr_pdr", "mlr"):
        assert goal_search_config_from_settings(settings, algorithm).goals  # built from conf alone


def test_goals_and_algorithm_through_the_loader() -> None:
    settings = load_settings(env={}, test_params=(
        "TRAFFICGEN_SEARCH=mlr;TRAFFICGEN_MLR_GOALS=[{'name': 'x', 'loss_percent': 0.1, 'exceed_percent': 0, "
        "'final_duration_s': 30, 'duration_sum_s': 30, 'width_percent': 1, 'initial_duration_s': 1}]"))
    assert [g.name for g in goal_search_config_from_settings(settings, "mlr").goals] == ["x"]
    with pytest.raises(ConfigError, match="TRAFFICGEN_SEARCH"):
        load_settings(env={}, test_params="TRAFFICGEN_SEARCH=golden")
    with pytest.raises(ConfigError, match="TRAFFICGEN_MLR_GOALS"):
        load_settings(env={}, test_params="TRAFFICGEN_MLR_GOALS=[{'name': 'x'}]")
    with pytest.raises(ConfigError, match="TRAFFICGEN_FRAME_LOSS_STEP_PERCENT"):
        load_settings(env={}, test_params="TRAFFICGEN_FRAME_LOSS_STEP_PERCENT=20")
