"""The built-in backends, registered by name: adding a backend is adding its line to BUILTIN."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vsperf.collectors.base import Collector
from vsperf.collectors.cpu import CpuCollector
from vsperf.collectors.ifstats import IfStatsCollector
from vsperf.collectors.pidstat import PidstatCollector
from vsperf.loadgen.base import LoadGenerator
from vsperf.loadgen.stressng import StressNgLoad
from vsperf.registry import Registries, Registry, load_entry_points
from vsperf.trafficgen.base import TrafficGenerator
from vsperf.trafficgen.dummy.backend import DummyTrafficGenerator
from vsperf.trafficgen.otg.backend import OtgTrafficGenerator
from vsperf.trafficgen.pktgen.backend import PktgenTrafficGenerator
from vsperf.trafficgen.trafgen.backend import TrafgenTrafficGenerator
from vsperf.trafficgen.trex.backend import TrexTrafficGenerator
from vsperf.trafficgen.vsgen.backend import VsgenTrafficGenerator
from vsperf.vnf.base import Vnf
from vsperf.vnf.netns import NetnsVnf
from vsperf.vnf.qemu.vhost_user import QemuVhostUserVnf
from vsperf.vnf.qemu.virtio_net import QemuVirtioNetVnf
from vsperf.vnf.qemu.vnf import QemuPciPassthroughVnf
from vsperf.vnf.testpmd_vhost import TestpmdVhostVnf
from vsperf.vswitch.base import VSwitch
from vsperf.vswitch.linux_bridge import LinuxBridgeVSwitch
from vsperf.vswitch.none import NoVSwitch
from vsperf.vswitch.ovs import OvsVSwitch
from vsperf.vswitch.ovs_dpdk import OvsDpdkVSwitch

# (family, backend class): the family is an attribute of Registries.
BUILTIN: tuple[tuple[str, type[Any]], ...] = (
    ("trafficgens", DummyTrafficGenerator),
    ("trafficgens", TrafgenTrafficGenerator),
    ("trafficgens", VsgenTrafficGenerator),
    ("trafficgens", OtgTrafficGenerator),
    ("trafficgens", PktgenTrafficGenerator),
    ("trafficgens", TrexTrafficGenerator),
    ("vswitches", OvsVSwitch),
    ("vswitches", OvsDpdkVSwitch),
    ("vswitches", LinuxBridgeVSwitch),
    ("vswitches", NoVSwitch),
    ("vnfs", NetnsVnf),
    ("vnfs", TestpmdVhostVnf),
    ("vnfs", QemuVhostUserVnf),
    ("vnfs", QemuVirtioNetVnf),
    ("vnfs", QemuPciPassthroughVnf),
    ("loadgens", StressNgLoad),
    ("collectors", PidstatCollector),
    ("collectors", CpuCollector),
    ("collectors", IfStatsCollector),
)


def empty_registries() -> Registries:
    """One empty registry per backend family, each checking its family's base class."""
    return Registries(
        trafficgens=Registry("trafficgen", TrafficGenerator),
        vswitches=Registry("vswitch", VSwitch),
        vnfs=Registry("vnf", Vnf),
        collectors=Registry("collector", Collector),
        loadgens=Registry("loadgen", LoadGenerator),
    )


def register_builtin(regs: Registries) -> None:
    """Register every backend that ships with vsperf."""
    for family, cls in BUILTIN:
        regs.families()[family].register(cls)


def build_registries(builtin: Callable[[Registries], None] | None = None) -> Registries:
    """Create the registries with the built-in backends (or `builtin`'s) and any installed plugins."""
    regs = empty_registries()
    (builtin or register_builtin)(regs)
    for fam, registry in regs.families().items():
        load_entry_points(registry, f"vsperf.{fam}")
    return regs
