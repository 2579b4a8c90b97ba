"""A testbed: the hosts (this machine or SSH), which one is the DUT, which one generates, and the
cabling between the DUT's ports and the generator's.

Frozen dataclasses built by `vsperf.testbed.file.load_testbed`, which validates the YAML file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from vsperf.remote.connection import SshHost

LOCAL_HOST = "local"  # the host name that means "this machine, no SSH"
DEFAULT_LOCK_DIR = "/run/vsperf/locks"  # where a host keeps the locks of the runs using it (a tmpfs)
Driver = Literal["kernel", "vfio-pci", "uio_pci_generic"]
DRIVERS: tuple[str, ...] = ("kernel", "vfio-pci", "uio_pci_generic")
PCI_ADDRESS = re.compile(r"^(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")


def normal_pci(address: str) -> str:
    """A PCI address with its domain, lower case ('05:00.0' -> '0000:05:00.0', as VSPERF's
    WHITELIST_NICS may write it)."""
    text = address.lower()
    return text if text.count(":") == 2 else f"0000:{text}"


@dataclass(frozen=True)
class TestbedHost:
    """One host: this machine (`ssh` None) or one reached over SSH."""

    __test__ = False  # not a pytest test class, despite its name

    name: str
    ssh: SshHost | None = None
    # The directory on the host where runs lock it (vsperf.pool; one state file per network
    # namespace there): every testbed file naming this host must give the same one.
    lock_dir: str = DEFAULT_LOCK_DIR

    @property
    def is_local(self) -> bool:
        """True for the host named `local`: commands run here, without SSH."""
        return self.ssh is None


@dataclass(frozen=True)
class DutPort:
    """A port of the DUT host: a kernel interface, or a PCI device a DPDK driver takes over."""

    interface: str | None  # kernel interface name (kernel driver); None when only `pci` is known
    pci: str | None  # PCI address with domain, e.g. 0000:3b:00.0 (VSPERF's WHITELIST_NICS)
    driver: Driver  # kernel: used as an interface; vfio-pci/uio_pci_generic: bound for DPDK

    @property
    def label(self) -> str:
        """The interface name, else the PCI address."""
        return self.interface or self.pci or "?"


@dataclass(frozen=True)
class GenPortSpec:
    """The generator's end of a cable: an interface of the generator host, or a hardware
    generator's port location (e.g. an OTG/Ixia 'chassis;card;port' string)."""

    interface: str | None
    location: str | None

    @property
    def label(self) -> str:
        """The interface name, else the location."""
        return self.interface or self.location or "?"


@dataclass(frozen=True)
class Cable:
    """DUT port `dut` is cabled to generator port `trafficgen`."""

    dut: DutPort
    trafficgen: GenPortSpec


@dataclass(frozen=True)
class Testbed:
    """The hosts and the cabling of one testbed file."""

    __test__ = False

    path: str  # the file it came from, for messages
    hosts: tuple[TestbedHost, ...]
    dut_host: str  # name of the host running the vswitch, VNFs, collectors and load generators
    trafficgen_host: str  # name of the host running the traffic generator
    cables: tuple[Cable, ...]

    @classmethod
    def local(cls) -> Testbed:
        """The local lab as a testbed: this machine is the DUT host and the generator host, and
        the run makes the ports itself (veth pairs), so there are no cables."""
        host = TestbedHost(LOCAL_HOST)
        return cls("", (host,), LOCAL_HOST, LOCAL_HOST, ())

    def host(self, name: str) -> TestbedHost:
        """The host called `name` (the loader checked that it exists)."""
        return next(h for h in self.hosts if h.name == name)

    @property
    def dut(self) -> TestbedHost:
        return self.host(self.dut_host)

    @property
    def generator_on_dut_host(self) -> bool:
        """True when the traffic generator runs on the DUT host (one host name for both, such as
        `local`): the switch's busy CPUs are then the generator's too."""
        return self.dut_host == self.trafficgen_host

    @property
    def trafficgen(self) -> TestbedHost:
        return self.host(self.trafficgen_host)
