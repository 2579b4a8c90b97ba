"""Checks and choices every search shares, used when a test's configuration is built
(`vsperf.run.kinds.configure_traffic`, which `vsperf.run.plan.plan_tests` calls before anything is
deployed): a bad value raises the one-line ConfigError naming the setting, e.g. TRAFFICGEN_LOSSRATE=100
or TRAFFICGEN_PDR_LOSSRATE below TRAFFICGEN_LOSSRATE, so such a run exits 2 with nothing deployed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vsperf.search.config import check, number


def check_loss_rates(settings: Mapping[str, Any]) -> None:
    """TRAFFICGEN_LOSSRATE in [0, 100) and TRAFFICGEN_PDR_LOSSRATE in [TRAFFICGEN_LOSSRATE, 100),
    whichever search runs: a PDR below the NDR's loss, or a loss of every frame, is never meant."""
    ndr = number(settings, "TRAFFICGEN_LOSSRATE")
    check(0 <= ndr < 100, "TRAFFICGEN_LOSSRATE", ndr, "in [0, 100)")
    pdr = number(settings, "TRAFFICGEN_PDR_LOSSRATE")
    check(ndr <= pdr < 100, "TRAFFICGEN_PDR_LOSSRATE", pdr, f"in [TRAFFICGEN_LOSSRATE={ndr:g}, 100)")

