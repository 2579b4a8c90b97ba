"""CPU masks and which CPUs the software generators' senders run on."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any


def parse_cpu_mask(mask: str) -> list[int]:
    """CPU numbers set in a hex mask such as "0x2" or "6"; ValueError when empty or malformed."""
    text = mask.strip().lower()
    digits = text[2:] if text.startswith("0x") else text
    if not digits or not re.fullmatch(r"[0-9a-f]+", digits):
        raise ValueError(f"CPU mask {mask!r} is not a hexadecimal number")
    value = int(digits, 16)
    if value == 0:
        raise ValueError(f"CPU mask {mask!r} selects no CPU")
    return [bit for bit in range(value.bit_length()) if value >> bit & 1]


def pmd_cpus(settings: Mapping[str, Any]) -> set[int]:
    """CPUs the switch busy-polls (VSWITCH_PMD_CPU_MASK); none for the kernel bridge, which
    forwards in the sender's context, or for an empty or malformed mask."""
    if settings["VSWITCH"] == "linux-bridge":
        return set()
    try:
        return set(parse_cpu_mask(str(settings["VSWITCH_PMD_CPU_MASK"])))
    except ValueError:
        return set()


def sender_cpus(settings: Mapping[str, Any], chosen_key: str, available: Sequence[int], *,
                switch_on_host: bool = True) -> list[int]:
    """CPUs for a generator's senders, port i on entry i (round robin).

    The setting `chosen_key` (e.g. VSGEN_CPUS) when set; else the `available` CPUs (the
    generator host's) minus those the switch busy-polls when the switch runs on that host too
    (`switch_on_host`: always on the local lab; on a testbed when the DUT host is the generator
    host), or all of them when that would leave none.
    """
    chosen = settings[chosen_key]
    if chosen:
        return [int(c) for c in chosen]
    cpus = sorted(available)
    busy = pmd_cpus(settings) if switch_on_host else set()
    return [c for c in cpus if c not in busy] or cpus
