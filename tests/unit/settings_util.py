"""Settings for tests, built the way production builds them: the shipped conf/ plus overrides.

Backends and config objects read complete `Settings` (every default lives in conf/*.yaml only), so
a test states just the values it cares about and gets every other one from the shipped defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vsperf.config import Settings, load_settings
from vsperf.run.kinds import configure_traffic, run_traffic
from vsperf.search.measurer import Measurer
from vsperf.search.outcome import SearchOutcome
from vsperf.search.trials import OnTrial
from vsperf.traffic import Traffic
from vsperf.trafficgen.dummy.model import DutModel, model_from_settings


def make_settings(overrides: dict[str, Any] | None = None, **kwargs: Any) -> Settings:
    """The shipped defaults with `overrides` (and keyword overrides) layered on top, validated."""
    values = {**(overrides or {}), **kwargs}
    return load_settings(env={}).merged(values, "test")


def dut_model(**overrides: Any) -> DutModel:
    """The dummy generator's simulated DUT: conf's TRAFFICGEN_DUMMY_DUT with `overrides`
    (capacity_fps may also be given as the model's ((frame size, fps), ...) points)."""
    if isinstance(overrides.get("capacity_fps"), tuple):
        overrides["capacity_fps"] = dict(overrides["capacity_fps"])
    return model_from_settings(make_settings(TRAFFICGEN_DUMMY_DUT=overrides)["TRAFFICGEN_DUMMY_DUT"])


def run_from_settings(measurer: Measurer, traffic: Traffic, settings: Mapping[str, Any],
                      on_trial: OnTrial | None = None, **kwargs: Any) -> SearchOutcome:
    """Plan `traffic` with `settings` (as vsperf.run.plan does) and run it: `kwargs` are
    run_traffic's (throughput_fps, dut, bench)."""
    return run_traffic(measurer, configure_traffic(traffic, settings), on_trial, **kwargs)
