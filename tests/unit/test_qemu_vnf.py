"""vsperf.vnf.qemu.vnf: per-VM guest settings, refused loopbacks and backends, registry names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from settings_util import make_settings

from vsperf.backends import build_registries
from vsperf.errors import ConfigError, PrerequisiteError
from vsperf.executor import LocalExecutor
from vsperf.host.workdir import RunContext
from vsperf.vnf.qemu.vhost_user import QemuVhostUserVnf
from vsperf.vnf.qemu.virtio_net import QemuVirtioNetVnf
from vsperf.vnf.qemu.vnf import GuestSpec, QemuPciPassthroughVnf, user_image_script


def spec(index: int = 0, **overrides: Any) -> GuestSpec:
    return GuestSpec.from_settings(make_settings(overrides), index)


def test_defaults_give_one_small_guest() -> None:
    first = spec()
    assert (first.image, first.memory_mb, first.cpus, first.nics, first.loopback) == ("", 1024, 1, 2, "linux_bridge")
    assert first.timeout_s == 180 and first.core_binding == ()


def test_per_vm_lists_and_macros() -> None:
    second = spec(1, GUEST_MEMORY=["#EVAL(512*(#VMINDEX+1))"], GUEST_LOOPBACK=["testpmd", "linux_bridge"],
                  GUEST_TESTPMD_FWD_MODE=["io", "macswap"], GUEST_CORE_BINDING=[["#EVAL(#VMINDEX)"]])
    assert (second.memory_mb, second.loopback, second.fwd_mode, second.core_binding) == \
        (1024, "linux_bridge", "macswap", (1,))
    assert spec(3, GUEST_LOOPBACK=["testpmd", "linux_bridge"]).loopback == "testpmd"  # VSPERF: the first


def test_vsperf_testpmd_params_keep_the_application_part() -> None:
    vsperf_default = spec(GUEST_TESTPMD_PARAMS=["-c 0x3 -n 4 --socket-mem 512 -- --burst=64 -i "])
    assert vsperf_default.testpmd_app_args() == ("--burst=64",)
    assert spec(GUEST_TESTPMD_PARAMS=["-- --rxd=512"]).testpmd_app_args() == ("--rxd=512",)
    assert spec(GUEST_TESTPMD_PARAMS=["--txd=256"]).testpmd_app_args() == ("--txd=256",)


@pytest.mark.parametrize("loopback, word", [("l2fwd", "testpmd"), ("clean", "buildin")])
def test_refused_loopbacks_name_what_to_use(loopback: str, word: str) -> None:
    with pytest.raises(ConfigError, match=rf"GUEST_LOOPBACK '{loopback}'.*{word}"):
        spec(GUEST_LOOPBACK=[loopback])


@pytest.mark.parametrize("overrides, match", [
    ({"GUEST_NICS_NR": [4]}, r"GUEST_NICS_NR 4 \(VM 0\).*set GUEST_NICS_NR to \[2\]"),
    ({"GUEST_MEMORY": ["lots"]}, "GUEST_MEMORY of VM 0"),
    ({"GUEST_SMP": ["sockets=x"]}, "GUEST_SMP"),
])
def test_unusable_values_are_config_errors(overrides: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        spec(**overrides)


def test_pci_passthrough_is_refused_in_one_line(tmp_path: Path) -> None:
    ctx = RunContext("ab12", tmp_path, tmp_path, LocalExecutor())
    with pytest.raises(PrerequisiteError) as err:
        QemuPciPassthroughVnf(make_settings(), ctx).check_prerequisites()
    assert "\n" not in str(err.value) and "QemuDpdkVhostUser" in str(err.value)


def test_registry_names_and_vsperf_aliases() -> None:
    vnfs = build_registries().vnfs
    assert vnfs.get("QemuDpdkVhostUser").cls is QemuVhostUserVnf
    assert vnfs.get("qemuvirtionet").cls is QemuVirtioNetVnf
    assert vnfs.get("QemuPciPassthrough").cls is QemuPciPassthroughVnf
    assert QemuVhostUserVnf.PORT_KIND == "vhostuser" and QemuVirtioNetVnf.PORT_KIND == "veth"


def test_user_image_commands() -> None:
    bridge = user_image_script(spec(GUEST_IMAGE=["/img/x.qcow2"]))
    assert "ip link set eth1 master br0" in bridge.commands
    # Bridge options through sysfs: busybox's ip (in small images) has no `ip link set ... type bridge`.
    assert "echo 0 > /sys/class/net/br0/bridge/forward_delay" in bridge.commands
    assert not any("type bridge forward_delay" in c for c in bridge.commands)
    testpmd = user_image_script(spec(GUEST_IMAGE=["/img/x.qcow2"], GUEST_LOOPBACK=["testpmd"],
                                     GUEST_TESTPMD_FWD_MODE="mac",
                                     GUEST_TESTPMD_PARAMS=["-l 0,1 -n 4 -- --burst=64 -i"]))
    assert "dpdk-testpmd -l 0,1 -n 4 -- --burst=64 --forward-mode=mac --stats-period 1" in testpmd.commands[-2]
    assert testpmd.ready_pattern not in testpmd.commands[-1]  # the typed command's echo never matches
    bare = user_image_script(spec(GUEST_IMAGE=["/img/x.qcow2"], GUEST_LOOPBACK=["testpmd"], GUEST_TESTPMD_PARAMS=[""]))
    assert "dpdk-testpmd -- --forward-mode=io" in bare.commands[-2]
    assert user_image_script(spec(GUEST_IMAGE=["/img/x.qcow2"], GUEST_LOOPBACK=["buildin"])).commands == ()
