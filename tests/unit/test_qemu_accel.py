"""vsperf.vnf.qemu.accel: GUEST_ACCEL as given, or the cached answer of the KVM probe (per host)."""

from __future__ import annotations

import json
from pathlib import Path

from fake_machine import RUN_ID, FakeMachine

from vsperf.host.host import Host
from vsperf.host.names import RunNames
from vsperf.vnf.qemu.accel import PROBE_FILE, choose_accel
from vsperf.vnf.qemu.image import GuestImage

KERNEL = "6.1.0-42-amd64"


def image(tmp_path: Path) -> GuestImage:
    return GuestImage(tmp_path, tmp_path / "vmlinuz", tmp_path / "initrd.gz", "6.1.0-56-cloud-amd64", "abc123", 0.0)


def host(name: str = "local") -> tuple[Host, FakeMachine]:
    """A host (this machine, or a testbed's `dut`) on which no probe guest can start unseen."""
    machine = FakeMachine(name, kernel=KERNEL)
    return Host(name, machine, RunNames(RUN_ID), None), machine


def choose(setting: str, on: Host, img: GuestImage | None, cache: Path) -> str:
    return choose_accel(setting, on, img, cache / "vmlinuz", cache / "initrd.gz", cache, cache / "probe.log")


def test_explicit_choices_never_probe(tmp_path: Path) -> None:
    local, machine = host()
    assert choose("kvm", local, image(tmp_path), tmp_path) == "kvm"
    assert choose("tcg", local, image(tmp_path), tmp_path) == "tcg"
    assert choose("auto", local, None, tmp_path) == "tcg"  # a user's image: no probe guest
    assert machine.calls == []


def test_auto_uses_the_cached_probe_result_of_that_host(tmp_path: Path) -> None:
    key = f"{KERNEL}|qemu-system-x86_64|abc123"  # the guest host's kernel, QEMU and image
    (tmp_path / PROBE_FILE).write_text(json.dumps({key: True, f"dut|{key}": False}))
    local, machine = host()
    assert choose("auto", local, image(tmp_path), tmp_path) == "kvm"
    remote, remote_machine = host("dut")  # a testbed host: its own entry
    assert choose("auto", remote, image(tmp_path), tmp_path) == "tcg"
    (tmp_path / PROBE_FILE).write_text(json.dumps({key: False}))
    assert choose("auto", local, image(tmp_path), tmp_path) == "tcg"
    assert machine.spawned == [] and remote_machine.spawned == []
    assert remote_machine.commands() == ["uname -r"]  # asked there


def test_a_host_whose_dev_kvm_cannot_be_opened_gets_tcg_without_a_probe_and_it_is_cached(tmp_path: Path) -> None:
    remote, machine = host("dut")
    assert choose("auto", remote, image(tmp_path), tmp_path) == "tcg"
    assert machine.spawned == [] and any("/dev/kvm" in c for c in machine.commands())
    assert json.loads((tmp_path / PROBE_FILE).read_text()) == {f"dut|{KERNEL}|qemu-system-x86_64|abc123": False}
