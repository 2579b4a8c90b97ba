"""Driver binding on a sysfs-shaped tree whose writes act as the kernel's do (no hardware)."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest

from vsperf.testbed.pci import TreeSysFs, bind, interfaces_of, read_binding, restore_binding
from vsperf.testbed.ports import PortError

DEV = "0000:3b:00.0"


class KernelTree(TreeSysFs):
    """A /sys/bus/pci tree: unbind, drivers_probe and driver_override behave like the kernel's.

    The probe binds to the override when one is set (and that driver is loaded), else to the
    device's native driver (`native`). Every write is recorded, in order.
    """

    def __init__(self, root: Path, native: str = "ixgbe", drivers: tuple[str, ...] = ("ixgbe", "vfio-pci")) -> None:
        super().__init__(root)
        self.native = native
        self.writes: list[tuple[str, str]] = []
        for drv in drivers:
            (root / "sys/bus/pci/drivers" / drv).mkdir(parents=True)
            (root / "sys/bus/pci/drivers" / drv / "unbind").write_text("")
        (root / "sys/bus/pci/drivers_probe").write_text("")
        dev = root / "sys/bus/pci/devices" / DEV
        dev.mkdir(parents=True)
        (dev / "driver_override").write_text("(null)\n")
        self._attach(native)

    def _dev(self) -> Path:
        return self.root / "sys/bus/pci/devices" / DEV

    def _attach(self, driver: str) -> None:
        os.symlink(f"../../../bus/pci/drivers/{driver}", self._dev() / "driver")
        if driver == self.native:
            (self._dev() / "net" / "ens1f0").mkdir(parents=True)

    def _detach(self) -> None:
        (self._dev() / "driver").unlink()
        if (self._dev() / "net").exists():
            for ifc in (self._dev() / "net").iterdir():
                ifc.rmdir()
            (self._dev() / "net").rmdir()

    def write(self, path: PurePosixPath, text: str) -> None:
        self.writes.append((str(path), text))
        if path.name == "unbind":
            assert text == DEV and self.link_name(PurePosixPath(f"/sys/bus/pci/devices/{DEV}/driver"))
            self._detach()
        elif path.name == "drivers_probe":
            assert text == DEV
            if (self._dev() / "driver").is_symlink():
                return  # already bound: probing does nothing
            override = (self._dev() / "driver_override").read_text().strip()
            target = override if override not in ("", "(null)") else self.native
            if (self.root / "sys/bus/pci/drivers" / target).is_dir():
                self._attach(target)
        elif path.name == "driver_override":
            (self._dev() / "driver_override").write_text((text or "(null)") + "\n")
        else:
            raise AssertionError(f"unexpected write to {path}")


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
