"""Search configs as the shipped conf builds them, with a test's few changes on top.

The configs' dataclasses have no defaults (conf/*.yaml is the only home of a default), so a
test that needs, say, a throughput search with 1 s trials takes the shipped one through the
real loader and changes just that: `shipped(ThroughputSearchConfig, duration_s=1.0)`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import cache
from typing import Any, TypeVar

from settings_util import make_settings

from vsperf.config import Settings
from vsperf.search.config import (
    Back2BackConfig,
    ThroughputSearchConfig,
    back2back_config_from_settings,
    throughput_config_from_settings,
)
from vsperf.search.frame_loss import FrameLossConfig, frame_loss_config_from_settings
from vsperf.search.latency import LatencyConfig, latency_config_from_settings
from vsperf.search.recovery import RecoveryConfig, recovery_config_from_settings
from vsperf.search.reset import ResetConfig, reset_config_from_settings
from vsperf.search.rfc2889 import (
    AddressConfig,
    ForwardingConfig,
    address_config_from_settings,
    forwarding_config_from_settings,
)

T = TypeVar("T")

_BUILDERS: Mapping[type, Callable[[Settings], Any]] = {
    ThroughputSearchConfig: throughput_config_from_settings,
    Back2BackConfig: back2back_config_from_settings,
    FrameLossConfig: frame_loss_config_from_settings,
    LatencyConfig: latency_config_from_settings,
    RecoveryConfig: recovery_config_from_settings,
    ResetConfig: reset_config_from_settings,
    ForwardingConfig: forwarding_config_from_settings,
    AddressConfig: address_config_from_settings,
}


@cache
def _shipped_settings() -> Settings:
    return make_settings()


def shipped(config_type: type[T], **changes: Any) -> T:
    """The config the shipped settings build, with `changes` (validated like any config)."""
    config: T = _BUILDERS[config_type](_shipped_settings())
    return replace(config, **changes)  # type: ignore[type-var]
