"""How sure a goal search's answer is, in words, for the report's metrics table.

ndr_pdr and mlr write, per goal G, `G_full_trials`, `G_rx_spread_percent` and
`G_failed_confirmations` (see `vsperf.search.goal_search`). The report prints them next to the
goal's rate (`G_tx_rate_fps`), so that a reader sees when an NDR rests on one trial, or came
after a failed confirmation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vsperf.report.markup import format_value

RATE_SUFFIX = "_tx_rate_fps"


def confidence_note(metrics: Mapping[str, Any], key: str) -> str | None:
    """"(1 full-length trial, forwarding-rate spread 0.000 %, 2 failed confirmations)" for a
    goal's `G_tx_rate_fps` key; None for any other key or a result without these metrics."""
    if not key.endswith(RATE_SUFFIX):
        return None
    goal = key[: -len(RATE_SUFFIX)]
    full = metrics.get(f"{goal}_full_trials")
    if not goal or not isinstance(full, int):
        return None
    parts = [f"{full} full-length trial{'' if full == 1 else 's'}"]
    spread = metrics.get(f"{goal}_rx_spread_percent")
    if isinstance(spread, int | float):
        parts.append(f"forwarding-rate spread {format_value(float(spread))} %")
    failed = metrics.get(f"{goal}_failed_confirmations")
    if isinstance(failed, int) and failed > 0:
        parts.append(f"{failed} failed confirmation{'' if failed == 1 else 's'}, searched below")
    return f"({', '.join(parts)})"


def with_confidence(metrics: Mapping[str, Any], key: str) -> Any:
    """The value of `key`, followed by its confidence note when it has one."""
    value = metrics[key]
    note = confidence_note(metrics, key)
    return value if note is None else f"{format_value(value)} {note}"
