"""Choose and run the search for a traffic type: the one entry point the runner calls."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vsperf.errors import ConfigError
from vsperf.search.back2back import rfc2544_back2back
from vsperf.search.config import (
    back2back_config_from_settings,
    burst_config_from_settings,
    continuous_config_from_settings,
    throughput_config_from_settings,
)
from vsperf.search.continuous import burst, rfc2544_continuous
from vsperf.search.measurer import Measurer
from vsperf.search.outcome import SearchOutcome
from vsperf.search.throughput import rfc2544_throughput
from vsperf.search.trials import OnTrial
from vsperf.traffic import Traffic

TRAFFIC_TYPES = ("rfc2544_throughput", "rfc2544_back2back", "rfc2544_continuous", "burst")


def run_traffic(
    measurer: Measurer,
    traffic: Traffic,
    settings: Mapping[str, Any],
    on_trial: OnTrial | None = None,
    *,
    throughput_fps: float | None = None,
) -> SearchOutcome:
    """Run what `traffic.traffic_type` asks for, configured from `settings`.

    The search configuration is built (and validated) from the settings before the first trial.
    `on_trial` is called after every trial. `throughput_fps`, when known, lets a back-to-back
    test report RFC 9004's corrected buffer time; other traffic types ignore it.
    """
    kind = traffic.traffic_type
    if kind == "rfc2544_throughput":
        return rfc2544_throughput(measurer, traffic, throughput_config_from_settings(settings), on_trial)
    if kind == "rfc2544_back2back":
        b2b_cfg = back2back_config_from_settings(settings)
        return rfc2544_back2back(measurer, traffic, b2b_cfg, on_trial, throughput_fps=throughput_fps)
    if kind == "rfc2544_continuous":
        cont_cfg = continuous_config_from_settings(settings, traffic)
        return rfc2544_continuous(measurer, traffic, cont_cfg, on_trial)
    if kind == "burst":
        return burst(measurer, traffic, burst_config_from_settings(settings, traffic).frames, on_trial)
    raise ConfigError(f"unknown traffic_type {kind!r}; valid: {', '.join(TRAFFIC_TYPES)}")
