"""vsperf.vnf.qemu.qemu: the QEMU command line of a guest (facts from DESIGN.md encoded)."""

from __future__ import annotations

import pytest

from vsperf.vnf.qemu.qemu import NicConfig, QemuConfig, guest_mac, parse_smp, qemu_argv


def config(**overrides: object) -> QemuConfig:
    values: dict[str, object] = {
        "name": "vsp1a-vm0", "accel": "tcg", "memory_mb": 1024, "smp": "1",
        "nics": (NicConfig("vhostuser", "52:54:00:5e:00:00", socket_path="/w/v0p0.sock"),
                 NicConfig("vhostuser", "52:54:00:5e:00:01", socket_path="/w/v0p1.sock")),
        "kernel_path": "/c/vmlinuz", "initrd_path": "/c/initrd.gz", "append": "console=ttyS0",
    }
    values.update(overrides)
    return QemuConfig(**values)  # type: ignore[arg-type]


def value_of(argv: list[str], option: str) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == option]


def test_vhost_user_under_tcg_shares_memory_and_runs_without_msix() -> None:
    argv = qemu_argv(config())
    assert argv[0] == "qemu-system-x86_64"
    assert value_of(argv, "-accel") == ["tcg"] and value_of(argv, "-cpu") == ["max"]
    assert "memory-backend-memfd,id=mem0,size=1024M,share=on" in value_of(argv, "-object")
    assert value_of(argv, "-numa") == ["node,memdev=mem0"]
    devices = value_of(argv, "-device")
    assert devices == ["virtio-net-pci,netdev=net0,mac=52:54:00:5e:00:00,addr=0x4.0,vectors=0",
                       "virtio-net-pci,netdev=net1,mac=52:54:00:5e:00:01,addr=0x5.0,vectors=0"]
    chardevs = value_of(argv, "-chardev")
    assert "socket,id=char0,path=/w/v0p0.sock,server=on,wait=off" in chardevs
    assert "stdio,id=serial0,signal=off" in chardevs and value_of(argv, "-serial") == ["chardev:serial0"]
    assert value_of(argv, "-netdev") == ["vhost-user,id=net0,chardev=char0", "vhost-user,id=net1,chardev=char1"]
    assert value_of(argv, "-kernel") == ["/c/vmlinuz"] and value_of(argv, "-append") == ["console=ttyS0"]


def test_kvm_keeps_msix_and_uses_the_host_cpu() -> None:
    argv = qemu_argv(config(accel="kvm"))
    assert value_of(argv, "-cpu") == ["host"]
    assert not any("vectors=0" in d for d in value_of(argv, "-device"))


def test_switch_as_vhost_user_server_makes_qemu_the_client() -> None:
    nics = (NicConfig("vhostuser", guest_mac(0, 0), socket_path="/w/a", server=False),
            NicConfig("vhostuser", guest_mac(0, 1), socket_path="/w/b", server=False))
    argv = qemu_argv(config(nics=nics))
    assert "socket,id=char0,path=/w/a" in value_of(argv, "-chardev")


def test_taps_without_shared_memory_and_vhost_as_available() -> None:
    nics = (NicConfig("tap", guest_mac(1, 0), ifname="vsp1av1s0", vhost=False),
            NicConfig("tap", guest_mac(1, 1), ifname="vsp1av1s1", vhost=True))
    argv = qemu_argv(config(nics=nics))
    assert value_of(argv, "-object") == []
    assert value_of(argv, "-netdev") == ["tap,id=net0,ifname=vsp1av1s0,script=no,downscript=no,vhost=off",
                                         "tap,id=net1,ifname=vsp1av1s1,script=no,downscript=no,vhost=on"]
    assert all("vectors" not in d for d in value_of(argv, "-device"))


def test_user_image_boots_with_snapshot_and_binding_uses_taskset() -> None:
    argv = qemu_argv(config(kernel_path="", initrd_path="", append="", disk_image="/img/guest.qcow2",
                            cpu_binding=(0, 1)))
    assert argv[:3] == ["taskset", "-c", "0,1"]
    assert "-snapshot" in argv and value_of(argv, "-drive") == ["file=/img/guest.qcow2,if=virtio,media=disk"]
    assert "-kernel" not in argv


def test_invalid_configs_are_refused() -> None:
    with pytest.raises(ValueError):
        config(disk_image="/img/x.qcow2")  # a kernel and a disk
    with pytest.raises(ValueError):
        config(memory_mb=16)
    with pytest.raises(ValueError):
        NicConfig("tap", "52:54:00:00:00:01")


def test_smp_and_macs() -> None:
    assert parse_smp("2") == 2 and parse_smp(3) == 3
    assert parse_smp("sockets=1,cores=2,threads=2") == 4 and parse_smp("cpus=3,cores=3") == 3
    assert guest_mac(1, 0) == "52:54:00:5e:01:00" and guest_mac(0, 1) != guest_mac(1, 0)
