"""vsperf.dpdk.conf: the DPDK settings, typed and checked."""

from __future__ import annotations

from typing import Any

import pytest
from dpdk_fixtures import dpdk_settings

from vsperf.dpdk.conf import DpdkLabConf
from vsperf.errors import ConfigError


def test_defaults_read_typed() -> None:
    conf = DpdkLabConf.from_settings(dpdk_settings())
    assert conf.pmd_cpus == (1,) and conf.switch_cpu == 1
    assert conf.vswitchd_dpdk_config == {"dpdk-lcore-mask": "0x1"}
    assert conf.port_driver == "af_xdp" and conf.vhostuser_server_mode is False
    assert (conf.testpmd_memory_mb, conf.testpmd_nb_mbufs, conf.testpmd_descriptors) == (128, 16384, 1024)


def test_lists_and_maps_become_immutable_strings() -> None:
    conf = DpdkLabConf.from_settings(dpdk_settings(
        TESTPMD_ARGS=["--burst=64"], GUEST_TESTPMD_ARGS=("--txpkts=64",),
        VSWITCHD_DPDK_CONFIG={"pmd-rxq-assign": "roundrobin", "n": 4}, VSWITCH_PMD_CPU_MASK="0xc",
    ))
    assert conf.testpmd_args == ("--burst=64",) and conf.guest_args == ("--txpkts=64",)
    assert conf.vswitchd_dpdk_config == {"pmd-rxq-assign": "roundrobin", "n": "4"}
    assert conf.pmd_cpus == (2, 3) and conf.switch_cpu == 2


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("VSWITCH_PMD_CPU_MASK", "0x0", "VSWITCH_PMD_CPU_MASK: CPU mask '0x0' selects no CPU"),
        ("VSWITCH_PMD_CPU_MASK", "two", "VSWITCH_PMD_CPU_MASK: CPU mask 'two' is not a hexadecimal"),
        ("DPDK_PORT_DRIVER", "pcap", "DPDK_PORT_DRIVER: expected one of af_xdp, af_packet"),
        ("GUEST_TESTPMD_FWD_MODE", "rxonly", "GUEST_TESTPMD_FWD_MODE: expected one of io, mac, macswap, csum"),
        ("TESTPMD_FWD_MODE", "rxonly", "TESTPMD_FWD_MODE: expected one of"),
        ("TESTPMD_MEMORY_MB", 0, "TESTPMD_MEMORY_MB: expected a positive integer"),
        ("TESTPMD_DESCRIPTORS", True, "TESTPMD_DESCRIPTORS: expected a positive integer"),
        ("GUEST_TESTPMD_CPU", -1, "GUEST_TESTPMD_CPU: expected an integer >= 0"),
        ("VSWITCHD_DPDK_CONFIG", ["a"], "VSWITCHD_DPDK_CONFIG: expected a mapping"),
    ],
)
def test_invalid_values_name_the_setting(name: str, value: Any, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        DpdkLabConf.from_settings(dpdk_settings(**{name: value}))
    assert str(err.value).startswith(message)


def test_guest_fwd_mode_list_gives_one_mode_per_vnf() -> None:
    # VSPERF's form: GUEST_TESTPMD_FWD_MODE = ['csum'], one per VM; past its end, the first entry
    conf = DpdkLabConf.from_settings(dpdk_settings(GUEST_TESTPMD_FWD_MODE=["mac", "csum"]))
    assert [conf.guest_fwd_mode_for(i) for i in range(3)] == ["mac", "csum", "mac"]
    assert DpdkLabConf.from_settings(dpdk_settings(GUEST_TESTPMD_FWD_MODE="io")).guest_fwd_mode_for(5) == "io"
    assert DpdkLabConf.from_settings(dpdk_settings(TESTPMD_FWD_MODE="csum")).testpmd_fwd_mode == "csum"


def test_missing_settings_are_listed() -> None:
    settings = dpdk_settings()
    del settings["TESTPMD_NB_MBUFS"], settings["DPDK_PORT_DRIVER"]
    with pytest.raises(ConfigError, match="missing from the configuration: DPDK_PORT_DRIVER, TESTPMD_NB_"):
        DpdkLabConf.from_settings(settings)
