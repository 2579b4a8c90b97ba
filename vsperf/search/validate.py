"""Every search configuration a test will use, built from its settings before anything is deployed.

`search_config_from_settings(settings, traffic_type)` builds (and so validates) what
`vsperf.search.dispatch.run_traffic` would build for that traffic type, plus the throughput search
of the tests that measure a throughput first (latency, recovery, reset, RFC 9004 back-to-back).
A bad value raises the same one-line ConfigError naming the setting that a search would raise
after deployment, e.g. TRAFFICGEN_LOSSRATE=100, TRAFFICGEN_PDR_LOSSRATE below TRAFFICGEN_LOSSRATE,
or TRAFFICGEN_RESET_AT_S not inside TRAFFICGEN_RESET_DURATION_S. `vsperf.plan.plan_tests` calls it
for every test, so such a run exits 2 with nothing deployed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vsperf.search.config import (
    back2back_config_from_settings,
    check,
    number,
    throughput_config_from_settings,
)
from vsperf.search.frame_loss import frame_loss_config_from_settings
from vsperf.search.goal_config import goal_search_config_from_settings, known_throughput_percent, search_algorithm
from vsperf.search.latency import latency_config_from_settings
from vsperf.search.recovery import recovery_config_from_settings
from vsperf.search.reset import reset_config_from_settings
from vsperf.search.rfc2889 import address_config_from_settings, forwarding_config_from_settings
from vsperf.search.rfc9004 import rfc9004_config_from_settings

# Tests that need a throughput first: measured with TRAFFICGEN_SEARCH unless
# TRAFFICGEN_THROUGHPUT_PERCENT gives it.
_NEED_THROUGHPUT = ("rfc2544_latency", "rfc2544_recovery", "rfc2544_reset", "rfc9004_back2back")


def check_loss_rates(settings: Mapping[str, Any]) -> None:
    """TRAFFICGEN_LOSSRATE in [0, 100) and TRAFFICGEN_PDR_LOSSRATE in [TRAFFICGEN_LOSSRATE, 100),
    whichever search runs: a PDR below the NDR's loss, or a loss of every frame, is never meant."""
    ndr = number(settings, "TRAFFICGEN_LOSSRATE")
    check(0 <= ndr < 100, "TRAFFICGEN_LOSSRATE", ndr, "in [0, 100)")
    pdr = number(settings, "TRAFFICGEN_PDR_LOSSRATE")
    check(ndr <= pdr < 100, "TRAFFICGEN_PDR_LOSSRATE", pdr, f"in [TRAFFICGEN_LOSSRATE={ndr:g}, 100)")


def throughput_search_config(settings: Mapping[str, Any]) -> object:
    """The throughput search TRAFFICGEN_SEARCH selects, as the settings configure it."""
    algorithm = search_algorithm(settings)
    if algorithm == "binary":
        return throughput_config_from_settings(settings)
    return goal_search_config_from_settings(settings, algorithm)


def search_config_from_settings(settings: Mapping[str, Any], traffic_type: str) -> tuple[object, ...]:
    """Every search config a test of `traffic_type` uses (see the module docstring); raises
    ConfigError naming the first bad setting. Traffic types that run no search (continuous,
    burst and the seeds' benchmarks, whose own checks run elsewhere) give ()."""
    check_loss_rates(settings)
    configs: list[object] = []
    if traffic_type == "rfc2544_throughput":
        configs.append(throughput_search_config(settings))
    elif traffic_type == "rfc2544_back2back":
        configs.append(back2back_config_from_settings(settings))
    elif traffic_type == "rfc2544_frame_loss":
        configs.append(frame_loss_config_from_settings(settings))
    elif traffic_type == "rfc2544_latency":
        configs.append(latency_config_from_settings(settings))
    elif traffic_type == "rfc2544_recovery":
        configs.append(recovery_config_from_settings(settings))
    elif traffic_type == "rfc2544_reset":
        configs.append(reset_config_from_settings(settings))
    elif traffic_type == "rfc9004_back2back":
        configs.append(rfc9004_config_from_settings(settings))
    elif traffic_type == "rfc2889_forwarding":
        configs.append(forwarding_config_from_settings(settings))
    elif traffic_type in ("rfc2889_caching", "rfc2889_learning"):
        configs.append(address_config_from_settings(settings))
    if traffic_type in _NEED_THROUGHPUT and known_throughput_percent(settings) is None:
        configs.append(throughput_search_config(settings))
    return tuple(configs)
