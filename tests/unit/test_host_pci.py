"""Driver binding on a sysfs-shaped tree whose writes act as the kernel's do (no hardware)."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest
from fake_host import FakeMachine
from pci_tree import DEV, KernelTree

from vsperf.errors import CommandError
from vsperf.host.pci import (
    ExecutorSysFs,
    PciBinding,
    TreeSysFs,
    bind,
    check_bindable,
    interfaces_of,
    read_binding,
    restore_binding,
)
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


def test_the_binding_goes_through_the_hosts_executor(tmp_path: Path) -> None:
    """The same sequence on a host: every read and write is a command (logged, remote when it is)."""
    dut = FakeMachine("dut", sysfs=KernelTree(tmp_path))
    fs = ExecutorSysFs(dut)
    assert fs.host == "dut"
    original = bind(fs, DEV, "vfio-pci")
    assert original == PciBinding(DEV, "ixgbe", None)
    dev = f"/sys/bus/pci/devices/{DEV}"
    assert [argv for argv, _ns in dut.commands if argv[0] == "sh"] == [
        ("sh", "-c", 'printf "%s\\n" "$1" > "$2"', "sh", "vfio-pci", f"{dev}/driver_override"),
        ("sh", "-c", 'printf "%s\\n" "$1" > "$2"', "sh", DEV, f"{dev}/driver/unbind"),
        ("sh", "-c", 'printf "%s\\n" "$1" > "$2"', "sh", DEV, "/sys/bus/pci/drivers_probe")]
    assert read_binding(fs, DEV) == PciBinding(DEV, "vfio-pci", "vfio-pci") and interfaces_of(fs, DEV) == []
    assert restore_binding(fs, original) is True
    assert read_binding(fs, DEV) == original and interfaces_of(fs, DEV) == ["ens1f0"]
    assert fs.read(PurePosixPath("/sys/nothing")) is None and not fs.exists(PurePosixPath("/sys/bus/pci/x"))
    assert fs.listdir(PurePosixPath("/sys/bus/pci/devices/none")) == []


def test_a_refused_write_is_a_command_error(tmp_path: Path) -> None:
    tree = TreeSysFs(tmp_path)
    with pytest.raises(CommandError, match="No such file or directory"):
        tree.write(PurePosixPath("/sys/bus/pci/drivers_probe"), DEV)
    dut = FakeMachine("dut")
    with pytest.raises(CommandError, match="cannot create /sys/bus/pci/drivers_probe"):
        ExecutorSysFs(dut).write(PurePosixPath("/sys/bus/pci/drivers_probe"), DEV)


def test_a_device_held_by_another_dpdk_driver_or_missing_driver_is_not_bindable(tmp_path: Path) -> None:
    fs = KernelTree(tmp_path, drivers=("ixgbe", "vfio-pci"))
    check_bindable(fs, PciBinding(DEV, "ixgbe", None), "vfio-pci")
    check_bindable(fs, PciBinding(DEV, "vfio-pci", None), "vfio-pci")  # ours already
    with pytest.raises(PortError, match=r"^host tree: PCI device 0000:3b:00\.0 is bound to uio_pci_generic already"):
        check_bindable(fs, PciBinding(DEV, "uio_pci_generic", None), "vfio-pci")
    with pytest.raises(PortError, match=r"^host tree: driver uio_pci_generic is not loaded; run modprobe "
                                        r"uio_pci_generic there$"):
        check_bindable(fs, PciBinding(DEV, "ixgbe", None), "uio_pci_generic")
