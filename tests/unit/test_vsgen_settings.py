"""vsgen's settings: the kernel it needs, its transmit CPUs and path."""

from __future__ import annotations

import pytest
from settings_util import make_settings

from vsperf.errors import ConfigError
from vsperf.trafficgen.vsgen.settings import kernel_version, path_setting, transmit_cpus


def test_kernel_version() -> None:
    assert kernel_version("6.1.0-18-amd64") == (6, 1)
    assert kernel_version("5.18rc1") == (5, 18)
    assert kernel_version("garbage") == (0, 0)


def test_transmit_cpus() -> None:
    assert transmit_cpus(make_settings(VSGEN_CPUS=[3, 1]), [0, 1, 2, 3]) == [3, 1]
    assert transmit_cpus(make_settings(VSWITCH="ovs", VSWITCH_PMD_CPU_MASK="0x2"), [0, 1]) == [0]
    assert transmit_cpus(make_settings(VSWITCH="linux-bridge", VSWITCH_PMD_CPU_MASK="0x2"), [1, 0]) == [0, 1]
    assert transmit_cpus(make_settings(VSWITCH_PMD_CPU_MASK="0x3"), [0, 1]) == [0, 1]  # never none at all


def test_path_setting() -> None:
    assert path_setting(make_settings()) == "auto"
    assert path_setting(make_settings(VSGEN_PATH="packet")) == "packet"
    with pytest.raises(ConfigError, match="VSGEN_PATH"):
        make_settings(VSGEN_PATH="dpdk")
