"""vsperf.vnf.qemu.accel: GUEST_ACCEL as given, or the cached answer of the KVM probe (per host)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from vsperf.executor import LocalExecutor
from vsperf.vnf.qemu.accel import PROBE_FILE, choose_accel
from vsperf.vnf.qemu.image import GuestImage


def image(tmp_path: Path) -> GuestImage:
    return GuestImage(tmp_path, tmp_path / "vmlinuz", tmp_path / "initrd.gz", "6.1.0-56-cloud-amd64", "abc123", 0.0)


class NoProbeHost:
    """A host that answers commands (uname) but fails the test if the probe guest starts."""

    def __init__(self, name: str = "local") -> None:
        self.executor = LocalExecutor()
        self.name = name
        self.local = name == "local"

    def spawn(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the probe ran")


class RemoteNamed(LocalExecutor):
    host = "dut"


def choose(setting: str, host: Any, img: GuestImage | None, cache: Path) -> str:
    return choose_accel(setting, host, img, cache / "vmlinuz", cache / "initrd.gz", cache, cache / "probe.log")


def test_explicit_choices_never_probe(tmp_path: Path) -> None:
    host: Any = NoProbeHost()
    assert choose("kvm", host, image(tmp_path), tmp_path) == "kvm"
    assert choose("tcg", host, image(tmp_path), tmp_path) == "tcg"
    assert choose("auto", host, None, tmp_path) == "tcg"  # a user's image: no probe guest


def test_auto_uses_the_cached_probe_result_of_that_host(tmp_path: Path) -> None:
    key = f"{os.uname().release}|qemu-system-x86_64|abc123"
    (tmp_path / PROBE_FILE).write_text(json.dumps({key: True, f"dut|{key}": False}))
    host: Any = NoProbeHost()
    assert choose("auto", host, image(tmp_path), tmp_path) == "kvm"
    remote: Any = NoProbeHost()
    remote.executor = RemoteNamed()  # a testbed host: its own entry
    assert choose("auto", remote, image(tmp_path), tmp_path) == "tcg"
    (tmp_path / PROBE_FILE).write_text(json.dumps({key: False}))
    assert choose("auto", host, image(tmp_path), tmp_path) == "tcg"
