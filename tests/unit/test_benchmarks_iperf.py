"""iperf3 benchmark settings: the stacks it runs and the client's command line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vsperf.benchmarks.iperf import KERNEL, IperfConfig, IperfStack, client_argv, stacks
from vsperf.errors import ConfigError

BASE: dict[str, Any] = {
    "IPERF_BINARY": "iperf3", "IPERF_DURATION_S": 5, "IPERF_INTERVAL_S": 1.0, "IPERF_PARALLEL": 2,
    "IPERF_PORT": 47201, "IPERF_UDP_BANDWIDTH_BPS": 1e9, "IPERF_UDP_LENGTH_BYTES": 1400,
    "USERSTACK_PRELOAD": "", "USERSTACK_ENV": {}, "USERSTACK_NAME": "dmm",
}


def test_kernel_only_without_a_preload_library() -> None:
    assert stacks(BASE) == (IperfStack(KERNEL),)


def test_a_preload_library_adds_a_run_with_its_environment(tmp_path: Path) -> None:
    lib = tmp_path / "libnStackAPI.so"
    lib.write_bytes(b"")
    settings = {**BASE, "USERSTACK_PRELOAD": str(lib), "USERSTACK_ENV": {"LD_LIBRARY_PATH": str(tmp_path)}}
    assert stacks(settings) == (IperfStack(KERNEL),
                                IperfStack("dmm", {"LD_LIBRARY_PATH": str(tmp_path), "LD_PRELOAD": str(lib)}))


def test_a_missing_library_or_ld_preload_in_the_environment_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"USERSTACK_PRELOAD /nowhere/lib\.so is not a file"):
        stacks({**BASE, "USERSTACK_PRELOAD": "/nowhere/lib.so"})
    lib = tmp_path / "lib.so"
    lib.write_bytes(b"")
    with pytest.raises(ConfigError, match="USERSTACK_ENV must not set LD_PRELOAD"):
        stacks({**BASE, "USERSTACK_PRELOAD": str(lib), "USERSTACK_ENV": {"LD_PRELOAD": "x"}})


def _cfg(protocol: str, **changes: Any) -> IperfConfig:
    return IperfConfig.from_settings({**BASE, "BENCH_PORT_OFFLOADS": False, **changes}, protocol)


def test_client_command_lines() -> None:
    tcp = client_argv(_cfg("tcp"), "198.18.1.1", "198.18.0.1")
    assert tcp == ["iperf3", "-c", "198.18.1.1", "-B", "198.18.0.1", "-p", "47201", "-4", "-J",
                   "-t", "5", "-i", "1.0", "-P", "2"]
    udp = client_argv(_cfg("udp"), "198.18.1.1", "198.18.0.1")
    assert udp == [*tcp, "-u", "-b", "1000000000", "-l", "1400"]
    assert "-l" not in client_argv(_cfg("udp", IPERF_UDP_LENGTH_BYTES=0), "198.18.1.1", "198.18.0.1")
