"""What VSPERF's integration tests add to planning, checked before anything is deployed.

- op2p: VSPERF sends the test frames with TRAFFICGEN_PORT1_MAC/IP -> TRAFFICGEN_PORT2_MAC/IP
  (when set) instead of TRAFFIC's l2/l3 addresses.
- LAB_ADDRESS_TRANSLATION (the local lab, a real DUT): TRAFFIC l3 addresses outside
  198.18.0.0/15 (upstream's L3/L4 tests send to 6.0.0.1) are sent as addresses inside it, their
  last 16 bits kept: sources in 198.18.0.0/16, destinations in 198.19.0.0/16. A `$TRAFFIC[...]`
  in a step then reads the address sent.
- A Frame Modification the test's switch cannot apply, TestSteps whose objects need what the
  test does not have (Open vSwitch for `vswitch` steps, a deployed DUT for the steps that act on
  it): one line naming the test.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from vsperf.capture.run import CaptureConfig
from vsperf.catalog import TestCase
from vsperf.config import Settings
from vsperf.config.schema_core import BENCHMARK_NETWORK
from vsperf.deploy.topology import check_frame_modification
from vsperf.errors import ConfigError
from vsperf.vswitch.base import VSwitch
from vsperf.vswitch.ovs import OvsVSwitch

# Step objects that act on a deployed DUT (a simulated DUT has none).
DUT_OBJECTS = ("vswitch", "vnf", "VNF", "namespace", "veth")
DUT_TOOLS = ("exec_shell", "exec_shell_background")


def translated(address: str, destination: bool) -> str:
    """`address` inside 198.18.0.0/15 (itself when it is), its last 16 bits kept."""
    value = ipaddress.IPv4Address(address)
    network = ipaddress.IPv4Network(BENCHMARK_NETWORK)
    if value in network:
        return address
    base = int(network.network_address) + (1 << 16 if destination else 0)
    return str(ipaddress.IPv4Address(base + (int(value) & 0xFFFF)))


def integration_settings(test: TestCase, settings: Settings, *, simulated: bool) -> Settings:
    """`settings` with op2p's TRAFFICGEN_PORT* addresses and the lab's address translation."""
    traffic: dict[str, Any] = {}
    if test.deployment == "op2p":
        l2 = {k: settings[n] for k, n in (("srcmac", "TRAFFICGEN_PORT1_MAC"), ("dstmac", "TRAFFICGEN_PORT2_MAC"))
              if settings[n]}
        l3 = {k: settings[n] for k, n in (("srcip", "TRAFFICGEN_PORT1_IP"), ("dstip", "TRAFFICGEN_PORT2_IP"))
              if settings[n]}
        traffic = {**({"l2": l2} if l2 else {}), **({"l3": l3} if l3 else {})}
        if traffic:
            settings = settings.merged({"TRAFFIC": traffic}, f"op2p test {test.name}: TRAFFICGEN_PORT1/2_MAC/IP")
    if simulated or settings["TESTBED"] or not settings["LAB_ADDRESS_TRANSLATION"]:
        return settings
    l3 = settings["TRAFFIC"]["l3"]
    moved = {key: translated(l3[key], key == "dstip") for key in ("srcip", "dstip")}
    extra: dict[str, Any] = {"TRAFFIC": {"l3": moved}} if moved != {k: l3[k] for k in moved} else {}
    for name, destination in (("TRAFFICGEN_PORT1_IP", False), ("TRAFFICGEN_PORT2_IP", True)):
        if settings[name] and translated(settings[name], destination) != settings[name]:
            extra[name] = translated(settings[name], destination)
    if not extra:
        return settings
    return settings.merged(extra, f"local lab: LAB_ADDRESS_TRANSLATION of test {test.name}")


def check_integration(test: TestCase, settings: Mapping[str, Any], vswitch: type[VSwitch], *,
                      simulated: bool) -> None:
    """ConfigError naming `test` when its Frame Modification or its steps cannot run with
    `vswitch` (or on a simulated DUT)."""
    CaptureConfig.from_traffic(settings["TRAFFIC"], f"test {test.name}")  # what vsperf cannot capture: refused now
    modification = check_frame_modification(test.frame_modification)
    if modification and not simulated and modification not in vswitch.FRAME_MODIFICATIONS:
        can = ", ".join(sorted(vswitch.FRAME_MODIFICATIONS))
        raise ConfigError(f"test {test.name}: Frame Modification {modification}: vswitch {vswitch.NAME} cannot apply "
                          f"it (it applies {can}); use --vswitch ovs or ovs-dpdk")
    for step in test.steps or ():
        needs_dut = step.kind in DUT_OBJECTS or (step.kind == "tools" and step.action in DUT_TOOLS)
        if simulated and needs_dut:
            raise ConfigError(f"test {test.name}: step {step.index} {step.text}: {step.obj} needs a deployed DUT, "
                              f"and {settings['TRAFFICGEN']} simulates it; use --trafficgen vsgen")
        if step.kind == "vswitch" and not issubclass(vswitch, OvsVSwitch):
            raise ConfigError(f"test {test.name}: step {step.index} {step.text}: the vswitch steps need Open vSwitch "
                              f"(VSWITCH ovs or ovs-dpdk), not {vswitch.NAME}")
