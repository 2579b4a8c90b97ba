"""DPDK on a testbed's DUT host: PCI ports taken over for OVS-DPDK, and its hugepages.

A DUT port of the testbed file with a `pci` address and driver `vfio-pci` or `uio_pci_generic`
is not a kernel interface for the run: OVS-DPDK attaches the device itself. Before OVS starts,
on the DUT host and in this order:

1. hugepages: the host must have HUGEPAGE_RAM_ALLOCATION kB of free hugepages of its default
   size; when it has fewer, nr_hugepages is raised by the missing number
   (`reserve_hugepages`: the old value is recorded in the run's journal first, and put back at
   the end, on error, and by the next run after a SIGKILL);
2. each PCI port is bound to its driver (`bind_dpdk`: sysfs `driver_override`, `unbind`,
   `drivers_probe`, the old binding recorded first and restored likewise);
3. OVS-DPDK's EAL runs on hugepages (DPDK_SOCKET_MEM in HUGEPAGE_DIR, `--huge-unlink`) with
   exactly those devices allowed (`-a PCI`), and each port is `type=dpdk
   options:dpdk-devargs=PCI` (vsperf.vswitch.ovs_dpdk).

VSWITCH_DPDK_HUGEPAGES asks for the same hugepages (steps 1 and 3, `--no-pci`) with kernel-
interface ports. The preflight (`dut_problem`, before anything is created) checks that the
host can do it: its default hugepage size, HUGEPAGE_DIR a hugetlbfs mount, enough free memory;
`pci_unsupported` refuses a PCI port for a switch that cannot attach one (linux-bridge, ovs).
The device itself (present, driver loaded, not in use) is checked with every port
(vsperf.host.hosts).

Binding real NICs was not exercised on hardware (the development machine has none to spare):
the sequence is unit-tested against a recording executor and a sysfs-shaped tree.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath
from typing import Any

from vsperf.dpdk.eal import HugepageMemory
from vsperf.errors import ConfigError, DeploymentError
from vsperf.executor import Executor
from vsperf.host.host import Host
from vsperf.host.pci import DPDK_DRIVERS, ExecutorSysFs, bind, read_binding
from vsperf.host.ports import PortError
from vsperf.testbed.model import Cable

HUGEPAGES = "VSWITCH_DPDK_HUGEPAGES"
SOCKET_MEM = "DPDK_SOCKET_MEM"
RESERVE_KB = "HUGEPAGE_RAM_ALLOCATION"
HUGE_DIR = "HUGEPAGE_DIR"
DPDK_VSWITCHES = ("ovs-dpdk",)  # switches that attach a PCI device bound to a DPDK driver


@dataclass(frozen=True)
class HugepageConf:
    """The hugepage settings of OVS-DPDK on a testbed's DUT host."""

    socket_mem_mb: tuple[int, ...]  # DPDK_SOCKET_MEM: MiB per NUMA node
    reserve_kb: int  # HUGEPAGE_RAM_ALLOCATION: free hugepage memory to make sure of
    huge_dir: str  # HUGEPAGE_DIR: the hugetlbfs mount
    always: bool  # VSWITCH_DPDK_HUGEPAGES: also without PCI ports

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> HugepageConf:
        """Read and check the settings; ConfigError naming the one at fault."""
        try:
            socket_mem = tuple(int(str(mb)) for mb in settings[SOCKET_MEM])
        except ValueError as exc:
            raise ConfigError(f"{SOCKET_MEM}: expected MiB per NUMA node, e.g. ['1024', '0']: {exc}") from exc
        if not any(socket_mem) or min(socket_mem) < 0:
            raise ConfigError(f"{SOCKET_MEM}: expected MiB >= 0 per NUMA node, some > 0, got {list(socket_mem)}")
        conf = cls(socket_mem, int(settings[RESERVE_KB]), str(settings[HUGE_DIR]), bool(settings[HUGEPAGES]))
        if conf.reserve_kb < conf.socket_mem_kb:
            raise ConfigError(f"{RESERVE_KB} ({conf.reserve_kb} kB) must cover {SOCKET_MEM} "
                              f"({conf.socket_mem_kb} kB in all)")
        return conf

    @property
    def socket_mem_kb(self) -> int:
        """All of DPDK_SOCKET_MEM, in kB."""
        return sum(self.socket_mem_mb) * 1024

    def pages(self, page_kb: int) -> int:
        """Free hugepages of `page_kb` the run needs."""
        return math.ceil(self.reserve_kb / page_kb)

    def memory(self, allowed_pci: Iterable[str]) -> HugepageMemory:
        """OVS-DPDK's EAL memory with `allowed_pci` probed."""
        return HugepageMemory(self.socket_mem_mb, self.huge_dir, tuple(allowed_pci))


def dpdk_ports(cables: Iterable[Cable]) -> list[tuple[int, str, str]]:
    """(port index, PCI address, driver) of each DUT port taken over for DPDK."""
    return [(i, str(c.dut.pci), c.dut.driver) for i, c in enumerate(cables) if c.dut.driver in DPDK_DRIVERS]


def pci_unsupported(vswitch: str, cables: Iterable[Cable]) -> str:
    """Why `vswitch` cannot use the cables' DUT ports ("" when it can): a PCI port bound to a
    DPDK driver is attached by a DPDK switch only."""
    ports = dpdk_ports(cables)
    if not ports or vswitch in DPDK_VSWITCHES:
        return ""
    index, pci, driver = ports[0]
    return (f"DUT port {index} is PCI device {pci} for DPDK (driver {driver}): vswitch {vswitch} cannot "
            f"attach it (use --vswitch {', '.join(DPDK_VSWITCHES)}, or driver kernel with its interface)")


def uses_hugepages(vswitch: str, settings: Mapping[str, Any], cables: Iterable[Cable]) -> bool:
    """True when the run's OVS-DPDK runs on hugepages on the DUT host."""
    return vswitch in DPDK_VSWITCHES and (bool(settings[HUGEPAGES]) or bool(dpdk_ports(cables)))


_MEMINFO = re.compile(r"^(\w+):\s+(\d+)(?: kB)?$", re.M)


def _meminfo(executor: Executor) -> dict[str, int]:
    return {k: int(v) for k, v in _MEMINFO.findall(executor.run(["cat", "/proc/meminfo"], timeout_s=10).stdout)}


def nr_hugepages_path(page_kb: int) -> str:
    """The host's number of persistent hugepages of `page_kb`."""
    return f"/sys/kernel/mm/hugepages/hugepages-{page_kb}kB/nr_hugepages"


def page_size_kb(executor: Executor) -> int | None:
    """The host's default hugepage size (Hugepagesize in /proc/meminfo; None: no hugepages)."""
    return _meminfo(executor).get("Hugepagesize")


def dut_problem(host: Host, conf: HugepageConf) -> str | None:
    """Why the DUT host cannot give OVS-DPDK its hugepages (None: it can), as a one-line fix."""
    dut = host.executor
    info = _meminfo(dut)
    page_kb = info.get("Hugepagesize")
    if not page_kb:
        return f"host {host.name}: the kernel has no hugepages (no Hugepagesize in /proc/meminfo)"
    path = nr_hugepages_path(page_kb)
    if dut.run(["test", "-w", path], check=False, timeout_s=10).returncode != 0:
        return f"host {host.name}: {path} is not writable (hugepages cannot be reserved there)"
    mounts = dut.run(["cat", "/proc/mounts"], timeout_s=10).stdout.splitlines()
    if not any(m.split()[1:3] == [conf.huge_dir, "hugetlbfs"] for m in mounts if len(m.split()) > 2):
        return (f"host {host.name}: {HUGE_DIR} {conf.huge_dir} is not a hugetlbfs mount: mount -t hugetlbfs "
                f"nodev {conf.huge_dir} there, or set {HUGE_DIR}")
    free_kb = info.get("HugePages_Free", 0) * page_kb
    if free_kb + info.get("MemAvailable", 0) < conf.reserve_kb:
        return (f"host {host.name}: {RESERVE_KB} is {conf.reserve_kb} kB of hugepages, but only {free_kb} kB are "
                f"free and {info.get('MemAvailable', 0)} kB available; lower it (and {SOCKET_MEM})")
    return None


def set_knob(host: Host, path: str, value: str) -> None:
    """Record a kernel setting of `host` (a sysfs/procfs file), then write `value` to it."""
    fs = ExecutorSysFs(host.executor)
    original = fs.read(PurePosixPath(path))
    if original is None:
        raise PortError(f"host {host.name}: cannot read {path}")
    host.record("knob", path, state={"value": original})
    fs.write(PurePosixPath(path), value)


def reserve_hugepages(host: Host, pages: int, *, page_kb: int = 2048) -> None:
    """At least `pages` free hugepages of `page_kb` on `host` (for DPDK): nr_hugepages is raised
    by the missing number (recorded first, put back after); PortError when the kernel could not
    allocate them all."""
    fs = ExecutorSysFs(host.executor)
    base = PurePosixPath(f"/sys/kernel/mm/hugepages/hugepages-{page_kb}kB")
    total, free = fs.read(base / "nr_hugepages"), fs.read(base / "free_hugepages")
    if not (total or "").isdigit() or not (free or "").isdigit():
        raise PortError(f"host {host.name}: cannot read {base}/nr_hugepages and free_hugepages")
    missing = pages - int(str(free))
    if missing <= 0:
        return
    wanted = int(str(total)) + missing
    set_knob(host, str(base / "nr_hugepages"), str(wanted))
    got = fs.read(base / "nr_hugepages")
    if got != str(wanted):
        raise PortError(f"host {host.name}: asked for {wanted} hugepages of {page_kb} kB, the kernel gave {got} "
                        f"(not enough free memory in one piece); lower HUGEPAGE_RAM_ALLOCATION")


def bind_dpdk(host: Host, pci: str, driver: str) -> None:
    """Record device `pci`'s binding on `host`, then bind it to `driver`."""
    fs = ExecutorSysFs(host.executor)
    host.record("binding", pci, state=asdict(read_binding(fs, pci)))
    bind(fs, pci, driver)


def take_over(host: Host, ports: Iterable[tuple[int, str, str]], conf: HugepageConf) -> HugepageMemory:
    """Before OVS-DPDK starts on `host`: make sure of its free hugepages, then bind each PCI port
    (`dpdk_ports`) to its DPDK driver, each change recorded before it is made; returns the EAL's
    memory, those devices allowed."""
    page_kb = page_size_kb(host.executor)
    if not page_kb:
        raise DeploymentError(f"host {host.name}: the kernel has no hugepages")
    reserve_hugepages(host, conf.pages(page_kb), page_kb=page_kb)
    ports = list(ports)
    for _index, pci, driver in ports:
        bind_dpdk(host, pci, driver)
    return conf.memory(pci for _, pci, _ in ports)
