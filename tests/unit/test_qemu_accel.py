"""vsperf.vnf.qemu.accel: GUEST_ACCEL as given, or the cached answer of the KVM probe."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from vsperf.vnf.qemu.accel import PROBE_FILE, choose_accel
from vsperf.vnf.qemu.image import GuestImage


def image(tmp_path: Path) -> GuestImage:
    return GuestImage(tmp_path, tmp_path / "vmlinuz", tmp_path / "initrd.gz", "6.1.0-56-cloud-amd64", "abc123", 0.0)


class NoLab:
    """A lab that fails the test if the probe runs."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the probe ran (lab.{name})")


def test_explicit_choices_never_probe(tmp_path: Path) -> None:
    lab: Any = NoLab()
    assert choose_accel("kvm", lab, image(tmp_path), tmp_path) == "kvm"
    assert choose_accel("tcg", lab, image(tmp_path), tmp_path) == "tcg"
    assert choose_accel("auto", lab, None, tmp_path) == "tcg"  # a user's image: no probe guest


def test_auto_uses_the_cached_probe_result(tmp_path: Path) -> None:
    key = f"{os.uname().release}|qemu-system-x86_64|abc123"
    (tmp_path / PROBE_FILE).write_text(json.dumps({key: True}))
    lab: Any = NoLab()
    assert choose_accel("auto", lab, image(tmp_path), tmp_path) == "kvm"
    (tmp_path / PROBE_FILE).write_text(json.dumps({key: False}))
    assert choose_accel("auto", lab, image(tmp_path), tmp_path) == "tcg"
