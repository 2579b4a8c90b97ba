"""vsperf.dpdk.eal: EAL/device arguments, testpmd command lines, versions, prerequisites."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

import pytest
from dpdk_fixtures import make_host
from fake_machine import FakeMachine

from vsperf.dpdk import eal as dpdk
from vsperf.dpdk.eal import (
    EalConfig,
    TestpmdConfig,
    eal_args,
    ovs_dpdk_extra,
    parse_ovs_dpdk_version,
    single_cpu_lcores,
    veth_vdev,
    virtio_user_vdev,
)
from vsperf.errors import CommandError, ConfigError, DeploymentError, PrerequisiteError
from vsperf.host.cpus import parse_cpu_mask


class FakeExecutor:
    """Answers `run` from a table of argv -> (returncode, stdout)."""

    def __init__(self, answers: Mapping[tuple[str, ...], tuple[int, str]]) -> None:
        self.answers = answers
        self.calls: list[list[str]] = []

    def run(self, argv: Sequence[str], *, netns: str | None = None, check: bool = True,
            timeout_s: float | None = 60.0, env: Mapping[str, str] | None = None,
            input_text: str | None = None) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(argv))
        code, out = self.answers.get(tuple(argv), (127, ""))
        if check and code:
            raise CommandError(list(argv), code, "failed")
        return subprocess.CompletedProcess(list(argv), code, out, "")

    def spawn(self, argv: Sequence[str], *, netns: str | None = None, env: Mapping[str, str] | None = None,
              stdout: IO[bytes] | int | None = None, stderr: IO[bytes] | int | None = None
              ) -> subprocess.Popen[bytes]:
        raise AssertionError("not used")


def test_eal_args_memory_isolation_lcores_and_vdevs_in_order() -> None:
    cfg = EalConfig("vspab12n", 128, lcores="0@1,1@1", vdevs=("net_af_xdp0,iface=a", "net_af_xdp1,iface=b"))
    assert eal_args(cfg) == [
        "--no-huge", "-m", "128", "--legacy-mem", "--file-prefix=vspab12n", "--no-pci",
        "--lcores", "0@1,1@1", "--vdev", "net_af_xdp0,iface=a", "--vdev", "net_af_xdp1,iface=b",
    ]


def test_ovs_dpdk_extra_is_one_blank_separated_string() -> None:
    assert ovs_dpdk_extra(128, "vspab12o") == "--no-huge -m 128 --legacy-mem --file-prefix=vspab12o --no-pci"


@pytest.mark.parametrize("prefix", ["", "a/b", "x y", "a" * 65])
def test_eal_config_refuses_bad_prefixes(prefix: str) -> None:
    with pytest.raises(ValueError, match="file prefix"):
        EalConfig(prefix, 128)


def test_eal_config_refuses_zero_memory() -> None:
    with pytest.raises(ValueError, match="memory"):
        EalConfig("p", 0)


@pytest.mark.parametrize(
    ("mask", "cpus"), [("0x2", [1]), ("0X6", [1, 2]), ("1", [0]), ("0xf0", [4, 5, 6, 7])]
)
def test_parse_cpu_mask(mask: str, cpus: list[int]) -> None:
    assert parse_cpu_mask(mask) == cpus


@pytest.mark.parametrize("mask", ["", "0x", "0x0", "zz", "0x1g", "-1"])
def test_parse_cpu_mask_refuses(mask: str) -> None:
    with pytest.raises(ValueError, match="CPU mask"):
        parse_cpu_mask(mask)


def test_single_cpu_lcores_puts_main_and_worker_on_one_cpu() -> None:
    assert single_cpu_lcores(1) == "0@1,1@1"
    with pytest.raises(ValueError):
        single_cpu_lcores(-1)


def test_veth_vdev_per_driver() -> None:
    assert veth_vdev("af_xdp", 0, "vspab12p0") == "net_af_xdp0,iface=vspab12p0"
    assert veth_vdev("af_packet", 3, "vspab12p1") == "net_af_packet3,iface=vspab12p1"
    assert veth_vdev("af_packet", 1, "vspab12p1", queues=2) == "net_af_packet1,iface=vspab12p1,qpairs=2"
    with pytest.raises(ConfigError, match="DPDK_PORT_DRIVER=af_packet"):  # veth has no combined channels
        veth_vdev("af_xdp", 1, "vspab12p1", queues=2)
    with pytest.raises(ValueError, match="driver"):
        veth_vdev("pcap", 0, "x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="interface name"):
        veth_vdev("af_xdp", 0, "a,iface=eth0")


def test_virtio_user_vdev_server_and_client() -> None:
    assert virtio_user_vdev(1, "/tmp/v/s.sock", server=True, queue_size=1024) == (
        "net_virtio_user1,path=/tmp/v/s.sock,server=1,queues=1,queue_size=1024"
    )
    assert ",server=0," in virtio_user_vdev(0, "/tmp/s", server=False, queue_size=256)


def test_virtio_user_vdev_refuses_long_or_comma_paths() -> None:
    with pytest.raises(ValueError, match="longer"):
        virtio_user_vdev(0, "/" + "x" * 107, server=True, queue_size=256)
    with pytest.raises(ValueError, match="','"):
        virtio_user_vdev(0, "/tmp/a,b", server=True, queue_size=256)


def _cfg(**kw: object) -> TestpmdConfig:
    eal = EalConfig("vspab12t0", 128, lcores="0@0,1@0", vdevs=("v0", "v1"))
    return TestpmdConfig(eal=eal, **kw)  # type: ignore[arg-type]


def test_testpmd_argv_is_non_interactive_and_sized() -> None:
    argv = dpdk.testpmd_argv(_cfg(fwd_mode="mac", nb_mbufs=32768, descriptors=512, stats_period_s=5,
                             extra_args=("--burst=64",)))
    assert argv[0] == "dpdk-testpmd"
    app = argv[argv.index("--") + 1:]
    assert app == [
        "--forward-mode=mac", "--port-topology=paired", "--nb-cores=1", "--rxq=1", "--txq=1",
        "--rxd=512", "--txd=512", "--total-num-mbufs=32768", "--stats-period=5", "--burst=64",
    ]
    assert "-i" not in argv and "--interactive" not in argv
    assert argv[1:argv.index("--")] == eal_args(_cfg().eal)


def test_testpmd_argv_grows_mbufs_only_for_jumbo_frames() -> None:
    assert not any(a.startswith("--max-pkt-len") for a in dpdk.testpmd_argv(_cfg(max_pkt_len_bytes=1518)))
    argv = dpdk.testpmd_argv(_cfg(max_pkt_len_bytes=9018))
    assert "--max-pkt-len=9018" in argv and "--mbuf-size=9146" in argv


def test_check_veth_mtu_refuses_jumbo_frames() -> None:
    dpdk.check_veth_mtu(1500, "vswitch none")
    with pytest.raises(DeploymentError, match="vswitch none: frames larger than 1518 bytes"):
        dpdk.check_veth_mtu(1501, "vswitch none")


def test_testpmd_config_validation() -> None:
    with pytest.raises(ValueError, match="forwarding mode"):
        _cfg(fwd_mode="rxonly")
    with pytest.raises(ValueError, match="stdin"):
        _cfg(stats_period_s=0)
    with pytest.raises(ValueError, match="pairs"):
        TestpmdConfig(eal=EalConfig("p", 64, vdevs=("a", "b", "c")))


def test_parse_ovs_dpdk_version() -> None:
    text = "ovs-vswitchd-dpdk (Open vSwitch) 3.1.0\nDPDK 22.11.11\n"
    assert parse_ovs_dpdk_version(text) == ("3.1.0", "22.11.11")
    assert parse_ovs_dpdk_version("ovs-vswitchd (Open vSwitch) 3.1.0\n") == ("3.1.0", "")
    assert parse_ovs_dpdk_version("") == ("", "")


def test_dpdk_version_from_pkg_config_or_unknown() -> None:
    ok = FakeExecutor({("pkg-config", "--modversion", "libdpdk"): (0, "22.11.11\n")})
    assert dpdk.dpdk_version(ok) == "22.11.11"
    assert dpdk.dpdk_version(FakeExecutor({})) == "unknown"


@pytest.mark.parametrize(("host", "where", "there"), [("local", "", ""), ("dut", "host dut: ", " there")])
@pytest.mark.parametrize("program", ["dpdk-testpmd", "dpdk-telemetry.py"])
def test_require_testpmd_names_the_package_on_the_host_that_lacks_it(
        tmp_path: Path, host: str, where: str, there: str, program: str) -> None:
    # testpmd's counters and links are read through DPDK's telemetry client: both come with dpdk-dev
    machine = FakeMachine(host)
    dpdk.require_testpmd(make_host(tmp_path, machine, name=host))
    machine.absent.add(program)
    with pytest.raises(PrerequisiteError) as err:
        dpdk.require_testpmd(make_host(tmp_path, machine, name=host))
    assert str(err.value) == f"{where}{program} is missing: apt-get install dpdk-dev{there}"
    assert {argv[-1] for argv, _ns in machine.calls} <= {"dpdk-testpmd", "dpdk-telemetry.py"}


def test_require_port_driver_checks_the_pmd_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(PrerequisiteError, match="DPDK_PORT_DRIVER=af_packet"):
        dpdk.require_port_driver("af_xdp", lib_roots=[tmp_path])
    pmds = tmp_path / "x86_64-linux-gnu" / "dpdk" / "pmds-23.0"
    pmds.mkdir(parents=True)
    (pmds / "librte_net_af_packet.so.23").touch()
    dpdk.require_port_driver("af_packet", lib_roots=[tmp_path])
    (pmds / "librte_net_af_xdp.so.23").touch()
    monkeypatch.setattr(dpdk, "af_xdp_supported", lambda: False)
    with pytest.raises(PrerequisiteError, match=r"AF_XDP sockets are not supported.*af_packet"):
        dpdk.require_port_driver("af_xdp", lib_roots=[tmp_path])
    monkeypatch.setattr(dpdk, "af_xdp_supported", lambda: True)
    dpdk.require_port_driver("af_xdp", lib_roots=[tmp_path])


def test_remove_runtime_dir(tmp_path: Path) -> None:
    run = dpdk.runtime_dir("vspab12o", tmp_path)
    assert run == tmp_path / "vspab12o"
    assert dpdk.remove_runtime_dir("vspab12o", tmp_path) is False
    run.mkdir()
    (run / "config").write_text("x")
    assert dpdk.remove_runtime_dir("vspab12o", tmp_path) is True
    assert not run.exists()
    with pytest.raises(ValueError):
        dpdk.runtime_dir("../etc", tmp_path)
