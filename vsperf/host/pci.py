"""PCI driver binding for DPDK ports through sysfs: driver_override, unbind, drivers_probe.

The kernel's documented sequence (Documentation/ABI/testing/sysfs-bus-pci): write the new
driver's name to the device's `driver_override`, unbind it from its current driver, then ask the
bus to probe it (`drivers_probe`), which binds it to the overriding driver. Restoring writes the
original override back (an empty one clears it), unbinds, and probes again so that the device
returns to the driver that had it. The original binding is recorded before anything changes.

Files are read and written through a `SysFs`: `ExecutorSysFs` runs `cat`/`readlink`/a write
through the host's executor (so every step is in the command log and works over SSH);
`TreeSysFs` works on a directory tree shaped like /sys, for tests.

Binding real NICs was not exercised on hardware (the development machine has none to spare);
the sequence is unit-tested against a sysfs-shaped tree that acts like the kernel.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from vsperf.errors import CommandError
from vsperf.executor import Executor
from vsperf.host.ports import PortError

log = logging.getLogger(__name__)

PCI_DEVICES = PurePosixPath("/sys/bus/pci/devices")
PCI_DRIVERS = PurePosixPath("/sys/bus/pci/drivers")
DRIVERS_PROBE = PurePosixPath("/sys/bus/pci/drivers_probe")
DPDK_DRIVERS = ("vfio-pci", "uio_pci_generic")


class SysFs(Protocol):
    """The few file operations the binding needs, on one host."""

    host: str

    def read(self, path: PurePosixPath) -> str | None:
        """The file's content stripped, None when it does not exist."""
        ...

    def write(self, path: PurePosixPath, text: str) -> None:
        """Write `text` to an existing sysfs attribute; CommandError when the kernel refuses."""
        ...

    def link_name(self, path: PurePosixPath) -> str | None:
        """The last component of a symlink's target, None when there is no such link."""
        ...

    def exists(self, path: PurePosixPath) -> bool:
        """True when `path` exists."""
        ...

    def listdir(self, path: PurePosixPath) -> list[str]:
        """Entries of a directory ([] when it does not exist)."""
        ...


class ExecutorSysFs:
    """sysfs of an executor's host, through commands (logged, and remote when it is)."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self.host = executor.host

    def read(self, path: PurePosixPath) -> str | None:
        proc = self.executor.run(["cat", str(path)], check=False, timeout_s=10)
        return proc.stdout.strip() if proc.returncode == 0 else None

    def write(self, path: PurePosixPath, text: str) -> None:
        # `sh -c` with the path and text as arguments: nothing of them is parsed by a shell.
        self.executor.run(["sh", "-c", 'printf "%s\\n" "$1" > "$2"', "sh", text, str(path)], timeout_s=30)

    def link_name(self, path: PurePosixPath) -> str | None:
        proc = self.executor.run(["readlink", str(path)], check=False, timeout_s=10)
        return PurePosixPath(proc.stdout.strip()).name if proc.returncode == 0 and proc.stdout.strip() else None

    def exists(self, path: PurePosixPath) -> bool:
        return self.executor.run(["test", "-e", str(path)], check=False, timeout_s=10).returncode == 0

    def listdir(self, path: PurePosixPath) -> list[str]:
        proc = self.executor.run(["ls", "-1", str(path)], check=False, timeout_s=10)
        return proc.stdout.split() if proc.returncode == 0 else []


class TreeSysFs:
    """A sysfs-shaped directory tree under `root` (tests)."""

    host = "tree"

    def __init__(self, root: Path) -> None:
        self.root = root

    def _p(self, path: PurePosixPath) -> Path:
        return self.root / str(path).lstrip("/")

    def read(self, path: PurePosixPath) -> str | None:
        try:
            return self._p(path).read_text().strip()
        except OSError:
            return None

    def write(self, path: PurePosixPath, text: str) -> None:
        target = self._p(path)
        if not target.exists():
            raise CommandError(["write", str(path)], 1, f"{path}: No such file or directory")
        target.write_text(text + "\n")

    def link_name(self, path: PurePosixPath) -> str | None:
        target = self._p(path)
        return Path(os.readlink(target)).name if target.is_symlink() else None

    def exists(self, path: PurePosixPath) -> bool:
        return self._p(path).exists()

    def listdir(self, path: PurePosixPath) -> list[str]:
        target = self._p(path)
        return sorted(os.listdir(target)) if target.is_dir() else []


@dataclass(frozen=True)
class PciBinding:
    """A device's binding as it was: its driver (None: unbound) and driver_override."""

    pci: str
    driver: str | None
    override: str | None  # None or "(null)": no override


def read_binding(fs: SysFs, pci: str) -> PciBinding:
    """The current binding of device `pci`; PortError when the host has no such device."""
    dev = PCI_DEVICES / pci
    if not fs.exists(dev):
        raise PortError(f"host {fs.host}: no PCI device {pci} (see lspci -D); fix the testbed file's ports")
    override = fs.read(dev / "driver_override")
    return PciBinding(pci, fs.link_name(dev / "driver"), None if override in (None, "(null)", "") else override)


def interfaces_of(fs: SysFs, pci: str) -> list[str]:
    """Kernel interfaces of device `pci` (none while a DPDK driver has it)."""
    return fs.listdir(PCI_DEVICES / pci / "net")


def _probe(fs: SysFs, pci: str) -> None:
    fs.write(DRIVERS_PROBE, pci)


def check_bindable(fs: SysFs, binding: PciBinding, driver: str) -> None:
    """PortError unless the device of `binding` can be bound to `driver`: the driver is loaded
    and no other DPDK driver holds the device (someone else's DPDK application)."""
    if binding.driver in DPDK_DRIVERS and binding.driver != driver:
        raise PortError(f"host {fs.host}: PCI device {binding.pci} is bound to {binding.driver} already "
                        f"(in use by another DPDK application?)")
    if binding.driver != driver and not fs.exists(PCI_DRIVERS / driver):
        raise PortError(f"host {fs.host}: driver {driver} is not loaded; run modprobe {driver} there")


def bind(fs: SysFs, pci: str, driver: str) -> PciBinding:
    """Bind device `pci` to `driver`; returns the binding it had (for `restore_binding`).

    Refused (PortError, before any change) when the driver is not loaded or another DPDK driver
    than `driver` already holds the device (someone else's DPDK application).
    """
    original = read_binding(fs, pci)
    if original.driver == driver:
        return original
    check_bindable(fs, original, driver)
    dev = PCI_DEVICES / pci
    fs.write(dev / "driver_override", driver)
    if original.driver is not None:
        fs.write(dev / "driver" / "unbind", pci)
    _probe(fs, pci)
    now = fs.link_name(dev / "driver")
    if now != driver:
        raise PortError(f"host {fs.host}: PCI device {pci} did not bind to {driver} (bound to {now}); "
                        f"check the IOMMU (vfio-pci) and dmesg")
    log.info("host %s: PCI %s: %s -> %s", fs.host, pci, original.driver, driver)
    return original


def restore_binding(fs: SysFs, original: PciBinding) -> bool:
    """Give device `original.pci` back to the driver it had; True when something changed."""
    dev = PCI_DEVICES / original.pci
    now = read_binding(fs, original.pci)
    if now.driver == original.driver and now.override == original.override:
        return False
    fs.write(dev / "driver_override", original.override or "")
    if now.driver is not None and now.driver != original.driver:
        fs.write(dev / "driver" / "unbind", original.pci)
    if original.driver is not None and fs.link_name(dev / "driver") is None:
        _probe(fs, original.pci)
    log.info("host %s: PCI %s: back to %s", fs.host, original.pci, original.driver)
    return True
