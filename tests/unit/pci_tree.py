"""A sysfs-shaped tree for the PCI binding and hugepage tests: writes act as the kernel's do."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from vsperf.host.pci import TreeSysFs

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
