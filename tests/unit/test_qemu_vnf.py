"""vsperf.vnf.qemu.vnf: per-VM guest settings, refused loopbacks and backends, registry names, and
what a guest asks of its host before it boots (a testbed's DUT host here): the image's files
copied into the run's directory there, taps recorded before they exist, its CPUs, its programs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_machine import RUN_ID, FakeMachine
from settings_util import make_settings

from vsperf.backends import build_registries
from vsperf.errors import ConfigError, PrerequisiteError
from vsperf.host.host import Host
from vsperf.host.journal import Journal
from vsperf.host.names import RunNames
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
    with pytest.raises(PrerequisiteError) as err:
        QemuPciPassthroughVnf(make_settings(), _dut(tmp_path)[0]).check_prerequisites()
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


def _dut(tmp_path: Path) -> tuple[Host, FakeMachine]:
    """A testbed's DUT host `dut` with 4 CPUs, watched by the run's journal."""
    machine = FakeMachine("dut", cpus=4)
    journal = Journal(RUN_ID, root=tmp_path / "state")
    machine.watch(journal)
    return Host("dut", machine, RunNames(RUN_ID), journal), machine


def _user_image(tmp_path: Path) -> Path:
    image = tmp_path / "guest.qcow2"
    image.write_text("disk")
    return image


def test_a_users_image_is_copied_into_the_runs_directory_and_taps_are_recorded_before_they_exist(
        tmp_path: Path) -> None:
    host, machine = _dut(tmp_path)
    image = _user_image(tmp_path)
    vnf = QemuVirtioNetVnf(make_settings(GUEST_IMAGE=[str(image)], GUEST_ACCEL="tcg"), host)
    ports = vnf.create(0, 1500, None)  # a testbed host: the switch and the taps in its own namespace
    staged = f"/tmp/vsperf-{RUN_ID}-files/vm0-guest.qcow2"
    assert machine.files[staged] == "disk" and machine.modes[staged] == 0o400  # read-only, booted -snapshot
    assert machine.recorded_before(f"put {staged}", "dir", f"/tmp/vsperf-{RUN_ID}-files")
    assert image.read_text() == "disk"  # the original is untouched
    taps = (f"vsp{RUN_ID}v0s0", f"vsp{RUN_ID}v0s1")
    assert [(p.name, p.ifname, p.tap) for p in ports] == [("vnf0.0", taps[0], True), ("vnf0.1", taps[1], True)]
    for tap in taps:
        assert machine.recorded_before(f"ip tuntap add dev {tap} mode tap", "link", tap)
        assert f"ip link set dev {tap} mtu 1500 up" in machine.commands()
    assert vnf.details()["vhost_net"] == "off (/dev/vhost-net missing)"  # the host's, read there
    vnf.stop()  # never started: its taps go, and their records
    assert machine.commands()[-2:] == [f"ip link del dev {taps[0]}", f"ip link del dev {taps[1]}"]
    assert (None, taps[0]) not in machine.links
    assert [e.kind for e in host.journal or []] == ["dir"]  # the run's directory: removed by the release


def test_vhost_user_sockets_are_in_the_runs_directory_on_the_guests_host(tmp_path: Path) -> None:
    host, machine = _dut(tmp_path)
    vnf = QemuVhostUserVnf(make_settings(GUEST_IMAGE=[str(_user_image(tmp_path))], GUEST_ACCEL="tcg"), host)
    ports = vnf.create(1, 1500, None)
    assert [p.socket_path for p in ports] == [f"/tmp/vsperf-{RUN_ID}-vhost/v1p{k}.sock" for k in (0, 1)]
    assert [c.socket_path for c in vnf.nic_configs()] == [p.socket_path for p in ports]
    machine.files[ports[0].socket_path] = ""  # QEMU as the server leaves its sockets behind
    vnf.stop()
    assert ports[0].socket_path not in machine.files


def test_cpus_and_programs_are_the_guests_hosts(tmp_path: Path) -> None:
    host, machine = _dut(tmp_path)
    settings = make_settings(GUEST_IMAGE=[str(_user_image(tmp_path))], GUEST_ACCEL="tcg", GUEST_CORE_BINDING=[[5]])
    vnf = QemuVirtioNetVnf(settings, host)
    vnf.check_prerequisites()  # a testbed host's CPUs are checked when the guest is created there
    with pytest.raises(ConfigError) as err:
        vnf.create(0, 1500, None)
    assert str(err.value) == "GUEST_CORE_BINDING of VM 0: CPU 5 does not exist (host dut has CPUs 0-3)"
    assert not any("tuntap" in c for c in machine.commands())  # nothing made
    machine.absent.add("qemu-system-x86_64")
    with pytest.raises(PrerequisiteError) as missing:
        vnf.check_prerequisites()
    assert str(missing.value) == "host dut: qemu-system-x86_64 is missing: apt-get install qemu-system-x86 there"


def test_virtio_net_is_refused_with_ovs_dpdk(tmp_path: Path) -> None:
    vnf = QemuVirtioNetVnf(make_settings(VSWITCH="ovs-dpdk"), _dut(tmp_path)[0])
    with pytest.raises(PrerequisiteError, match="does not work with ovs-dpdk here; use --vnf QemuDpdkVhostUser"):
        vnf.check_prerequisites()
