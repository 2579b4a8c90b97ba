"""Driver binding on a sysfs-shaped tree whose writes act as the kernel's do (no hardware)."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest
from pci_tree import DEV, KernelTree

from vsperf.host.pci import bind, interfaces_of, read_binding, restore_binding
from vsperf.host.ports import PortError


def test_bind_to_vfio_and_back(tmp_path: Path) -> None:
    fs = KernelTree(tmp_path)
    assert interfaces_of(fs, DEV) == ["ens1f0"]
    original = bind(fs, DEV, "vfio-pci")
    assert original.driver == "ixgbe" and original.override is None
    assert read_binding(fs, DEV).driver == "vfio-pci" and interfaces_of(fs, DEV) == []
    # the documented order: override first, then unbind, then probe
    assert [Path(p).name for p, _ in fs.writes] == ["driver_override", "unbind", "drivers_probe"]
    assert restore_binding(fs, original) is True
    back = read_binding(fs, DEV)
    assert (back.driver, back.override) == ("ixgbe", None) and interfaces_of(fs, DEV) == ["ens1f0"]
    assert restore_binding(fs, original) is False  # nothing left to do


def test_already_bound_to_the_wanted_driver_changes_nothing(tmp_path: Path) -> None:
    fs = KernelTree(tmp_path, native="vfio-pci")
    original = bind(fs, DEV, "vfio-pci")
    assert original.driver == "vfio-pci" and fs.writes == []


def test_refusals_come_before_any_change(tmp_path: Path) -> None:
    fs = KernelTree(tmp_path, drivers=("ixgbe",))
    with pytest.raises(PortError, match="driver vfio-pci is not loaded; run modprobe vfio-pci"):
        bind(fs, DEV, "vfio-pci")
    with pytest.raises(PortError, match=r"no PCI device 0000:3b:00\.7 \(see lspci -D\)"):
        bind(fs, "0000:3b:00.7", "vfio-pci")
    assert fs.writes == []
    other = KernelTree(tmp_path / "b", native="uio_pci_generic", drivers=("uio_pci_generic", "vfio-pci"))
    with pytest.raises(PortError, match="bound to uio_pci_generic already"):
        bind(other, DEV, "vfio-pci")
    assert other.writes == []


def test_a_device_that_does_not_bind_is_reported(tmp_path: Path) -> None:
    fs = KernelTree(tmp_path)

    def probe_fails(path: PurePosixPath, text: str) -> None:
        if path.name != "drivers_probe":
            KernelTree.write(fs, path, text)

    fs.write = probe_fails  # type: ignore[method-assign]
    with pytest.raises(PortError, match=r"did not bind to vfio-pci .*IOMMU"):
        bind(fs, DEV, "vfio-pci")
