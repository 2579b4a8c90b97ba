"""The built-in backends, registered by name."""

from __future__ import annotations

from typing import Any

from vsperf.registry import Registries, Registry


def empty_registries() -> Registries:
    from vsperf.collectors.base import Collector
    from vsperf.loadgen.base import LoadGenerator
    from vsperf.trafficgen.base import TrafficGenerator
    from vsperf.vnf.base import Vnf
    from vsperf.vswitch.base import VSwitch

    return Registries(
        trafficgens=Registry("trafficgen", TrafficGenerator),
        vswitches=Registry("vswitch", VSwitch),
        vnfs=Registry("vnf", Vnf),
        collectors=Registry("collector", Collector),
        loadgens=Registry("loadgen", LoadGenerator),
    )


def register_builtin(regs: Registries) -> None:
    """Register every backend that ships with vsperf."""
    from vsperf.collectors.cpu import CpuCollector
    from vsperf.collectors.ifstats import IfStatsCollector
    from vsperf.collectors.pidstat import PidstatCollector
    from vsperf.loadgen.stressng import StressNgLoad
    from vsperf.trafficgen.dummy import DummyTrafficGenerator
    from vsperf.trafficgen.trafgen import TrafgenTrafficGenerator
    from vsperf.trafficgen.vsgen import VsgenTrafficGenerator
    from vsperf.vnf.netns import NetnsVnf
    from vsperf.vnf.testpmd_vhost import TestpmdVhostVnf
    from vsperf.vswitch.linux_bridge import LinuxBridgeVSwitch
    from vsperf.vswitch.none import NoVSwitch
    from vsperf.vswitch.ovs import OvsVSwitch
    from vsperf.vswitch.ovs_dpdk import OvsDpdkVSwitch

    classes: list[tuple[Registry[Any], type[Any]]] = [
        (regs.trafficgens, DummyTrafficGenerator),
        (regs.trafficgens, TrafgenTrafficGenerator),
        (regs.trafficgens, VsgenTrafficGenerator),
        (regs.vswitches, OvsVSwitch),
        (regs.vswitches, OvsDpdkVSwitch),
        (regs.vswitches, LinuxBridgeVSwitch),
        (regs.vswitches, NoVSwitch),
        (regs.vnfs, NetnsVnf),
        (regs.vnfs, TestpmdVhostVnf),
        (regs.loadgens, StressNgLoad),
        (regs.collectors, PidstatCollector),
        (regs.collectors, CpuCollector),
        (regs.collectors, IfStatsCollector),
    ]
    for registry, cls in classes:
        registry.register(cls)
