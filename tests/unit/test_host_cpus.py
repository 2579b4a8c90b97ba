"""Which CPUs the software generators' senders run on: the setting when given, else the generator
host's CPUs without those the switch busy-polls when it runs on that host."""

from __future__ import annotations

from typing import Any

import pytest
from settings_util import make_settings

from vsperf.host.cpus import parse_cpu_mask, pmd_cpus, sender_cpus


@pytest.mark.parametrize(("mask", "cpus"), [("0x2", [1]), ("6", [1, 2]), ("0XF0", [4, 5, 6, 7]), (" 0x1 ", [0])])
def test_masks_are_hexadecimal(mask: str, cpus: list[int]) -> None:
    assert parse_cpu_mask(mask) == cpus


@pytest.mark.parametrize(("mask", "why"), [("", "not a hexadecimal"), ("0x", "not a hexadecimal"),
                                           ("0xg1", "not a hexadecimal"), ("0x0", "selects no CPU")])
def test_a_bad_mask_says_why(mask: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_cpu_mask(mask)


def test_the_switch_busy_polls_its_pmd_cpus_but_the_kernel_bridge_none() -> None:
    assert pmd_cpus(make_settings(VSWITCH="ovs", VSWITCH_PMD_CPU_MASK="0x6")) == {1, 2}
    assert pmd_cpus(make_settings(VSWITCH="linux-bridge", VSWITCH_PMD_CPU_MASK="0x6")) == set()
    assert pmd_cpus({"VSWITCH": "ovs", "VSWITCH_PMD_CPU_MASK": "zz"}) == set()  # malformed: none known busy


def test_sender_cpus() -> None:
    pmd_on_1: dict[str, Any] = {"VSWITCH": "ovs", "VSWITCH_PMD_CPU_MASK": "0x2"}
    assert sender_cpus(make_settings(TRAFGEN_CPUS=[3, 1], **pmd_on_1), "TRAFGEN_CPUS", [0, 1, 2, 3]) == [3, 1]
    assert sender_cpus(make_settings(**pmd_on_1), "TRAFGEN_CPUS", [3, 2, 1, 0]) == [0, 2, 3]  # ascending
    # a testbed whose DUT host is another machine: its PMD CPUs are not busy on the generator's
    assert sender_cpus(make_settings(**pmd_on_1), "TRAFGEN_CPUS", [0, 1], switch_on_host=False) == [0, 1]
    # never none at all: every CPU when the switch polls them all
    assert sender_cpus(make_settings(VSWITCH="ovs", VSWITCH_PMD_CPU_MASK="0x3"), "VSGEN_CPUS", [0, 1]) == [0, 1]
