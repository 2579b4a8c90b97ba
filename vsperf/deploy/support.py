"""What the run's hosts can deploy, checked before anything is created: each answer is one line
naming the problem and the fix ("" when there is none).

The local lab makes its own ports (veth pairs) and only ever sends to 198.18.0.0/15; a testbed's
ports are its file's cables, whose DUT ends may be PCI devices for DPDK and whose generator ends
may be a hardware generator's port locations. Whatever the components themselves need (programs,
kernel features of the host they run on) they check on a probe of that host
(`check_prerequisites`), see `vsperf.run.preflight`.
"""

from __future__ import annotations

import ipaddress
import os
import sys
from pathlib import Path

from vsperf.config.schema_core import BENCHMARK_NETWORK
from vsperf.deploy.build import DeploymentSpec
from vsperf.deploy.hugepages import HugepageConf, dut_problem, pci_unsupported, uses_hugepages
from vsperf.deploy.ports import used_cables
from vsperf.deploy.topology import check_streams, parse_deployment
from vsperf.errors import ConfigError
from vsperf.host.hosts import RunHosts
from vsperf.testbed.model import Cable, Testbed
from vsperf.traffic import Traffic
from vsperf.trafficgen.base import TrafficGenerator
from vsperf.vswitch.linux_bridge import host_kernel_config_option

# What a testbed deploys: the lab's layouts with traffic ports (p2p, pvp, pvvpN, pvpvN).
TESTBED_LAYOUTS = ("p2p", "series", "parallel")
TESTBED_DEPLOYMENTS = "p2p, pvp, pvvpN, pvpvN"
# Generators of --mode trafficgen on a testbed (traffic only: the generator host's interfaces)
TRAFFIC_ONLY_TRAFFICGENS = ("vsgen", "trafgen", "trex")
# Kernel features the local lab's ports and generators need (the DUT host is this machine).
LAB_KERNEL_OPTIONS = {
    "CONFIG_NET_NS": "network namespaces",
    "CONFIG_VETH": "veth interfaces",
    "CONFIG_NET_CLS_BPF": "tc BPF classifier (receive counters)",
    "CONFIG_NET_SCH_TBF": "TBF qdisc (generator pacing)",
}
# Programs the DUT host needs to make namespaces, links and bridges (vsperf.host.network).
DUT_TOOLS = {"ip": "iproute2", "sysctl": "procps"}


def lab_problem() -> str:
    """Why this machine cannot be the local lab at all ("" when it can): Linux and root."""
    if not sys.platform.startswith("linux"):
        return "the local lab needs Linux (namespaces, veth): use --trafficgen dummy"
    if os.geteuid() != 0:
        return "vsperf needs root for the local lab: run as root, or use --trafficgen dummy"
    return ""


def state_root_problem(root: Path) -> str:
    """Why the run's journal cannot be written under `root` ("" when it can): the journal is what
    makes cleaning up after a kill possible."""
    existing = root
    while not existing.exists():
        existing = existing.parent
    return "" if os.access(existing, os.W_OK) else f"cannot write run state under {root}: run as root"


def lab_addresses_problem(traffic: Traffic) -> str:
    """The local lab sends only to the RFC 2544 benchmarking range (a real testbed may use others)."""
    network = ipaddress.IPv4Network(BENCHMARK_NETWORK)
    for key, address in (("srcip", traffic.l3.srcip), ("dstip", traffic.l3.dstip)):
        if ipaddress.IPv4Address(address) not in network:
            return (f"TRAFFIC l3 {key} {address} is outside {network}: the local lab sends only there; "
                    f"set TRAFFIC l3 srcip/dstip inside it (e.g. 198.18.0.1, 198.18.1.1) or use a testbed")
    return ""


def frame_size_problem(traffic: Traffic, vswitch: str, max_frame_bytes: int | None) -> str:
    """Why the largest frame of `traffic` (a frame size, or a frame mix's largest) cannot cross the
    lab's path, whose ports carry at most `max_frame_bytes` ("" when it can)."""
    largest = traffic.largest_frame_bytes
    if max_frame_bytes is None or largest <= max_frame_bytes:
        return ""
    what = f"frame mix {traffic.mix.name} has {largest}-byte frames" if traffic.mix else f"frame size {largest} B"
    return (f"{what}, above the path's MTU: vswitch {vswitch}'s veth ports carry frames of at most "
            f"{max_frame_bytes} bytes here; use smaller frames, or --vswitch ovs or linux-bridge")


def jumbo_problem(spec: DeploymentSpec, max_frame_bytes: int | None) -> str:
    """Why the deployment's ports cannot take VSWITCH_JUMBO_FRAMES_SIZE on the lab ("" when they can);
    a step-driven test's ports are asked anyway (its steps check what the switch says, as VSPERF's)."""
    if spec.jumbo_mtu_bytes is None or max_frame_bytes is None or spec.steps:
        return ""
    most = max_frame_bytes - 18  # Ethernet header and FCS
    if spec.jumbo_mtu_bytes <= most:
        return ""
    return (f"VSWITCH_JUMBO_FRAMES_SIZE {spec.jumbo_mtu_bytes}: vswitch {spec.vswitch}'s veth ports carry an MTU of "
            f"at most {most} here; set VSWITCH_JUMBO_FRAMES_ENABLED false, or use --vswitch ovs or linux-bridge")


def deployment_problem(spec: DeploymentSpec, traffic: Traffic, generator: type[TrafficGenerator], hosts: RunHosts,
                       *, supports_match: bool, max_frame_bytes: int | None = None) -> str:
    """Why `spec` cannot be deployed on `hosts` for `traffic` with `generator` ("" when it can);
    `max_frame_bytes`: the largest frame the switch's lab ports carry (None: any)."""
    trafficgen = generator.NAME
    if hosts.is_lab:
        why = lab_addresses_problem(traffic) or _lab_kernel_problem(hosts)
        if not why and not spec.traffic_only:
            why = frame_size_problem(traffic, spec.vswitch, max_frame_bytes) or jumbo_problem(spec, max_frame_bytes)
        if (not why and spec.vswitch == "ovs-dpdk" and spec.settings["VSWITCH_DPDK_HUGEPAGES"]
                and not spec.traffic_only):
            why = ("VSWITCH_DPDK_HUGEPAGES: the local lab runs OVS-DPDK without hugepages (--no-huge); set it "
                   "false, or run on a testbed (--testbed)")
    elif spec.traffic_only:
        why = "" if trafficgen in TRAFFIC_ONLY_TRAFFICGENS else (
            f"--mode trafficgen with {trafficgen} (on a testbed: --trafficgen {', '.join(TRAFFIC_ONLY_TRAFFICGENS)})")
    elif parse_deployment(spec.name).layout not in TESTBED_LAYOUTS:
        why = f"deployment {spec.name} (only {TESTBED_DEPLOYMENTS} deploy on a testbed)"
    else:
        why = _cables_problem(spec, generator, hosts)
    if why or spec.traffic_only:
        return why
    topology = parse_deployment(spec.name)
    if topology.layout == "parallel" and not supports_match:
        return (f"deployment {topology.name} splits streams between VNFs by header fields, which "
                f"{spec.vswitch} cannot do: use --vswitch ovs")
    try:
        check_streams(topology, traffic.multistream)
    except ConfigError as exc:
        return str(exc)
    return ""


def _lab_kernel_problem(hosts: RunHosts) -> str:
    for option, what in LAB_KERNEL_OPTIONS.items():
        if host_kernel_config_option(hosts.dut.executor, option) is False:
            return f"the kernel lacks {what} ({option}): use a kernel built with it"
    return ""


def _cables_problem(spec: DeploymentSpec, generator: type[TrafficGenerator], hosts: RunHosts) -> str:
    """Why the testbed's cables cannot serve `spec` ("" when they can): generator ports the
    generator cannot drive, a PCI port for a switch that cannot attach it, or a DUT host that
    cannot give OVS-DPDK its hugepages."""
    cables = used_cables(hosts.testbed.cables, locations=generator.PORT_LOCATIONS)
    why = gen_ports_problem(hosts.testbed, spec, generator, cables) or pci_unsupported(spec.vswitch, cables)
    if not why and uses_hugepages(spec.vswitch, spec.settings, cables):
        why = dut_problem(hosts.dut, HugepageConf.from_settings(spec.settings)) or ""
    return why


def gen_ports_problem(testbed: Testbed, spec: DeploymentSpec, generator: type[TrafficGenerator],
                      cables: list[Cable]) -> str:
    """Why the cables' generator ends do not suit the test's generator ("" when they do): a
    location for a generator that needs interfaces, or locations its settings name otherwise."""
    if len(cables) < 2:
        located = [c.trafficgen.location for c in testbed.cables if c.trafficgen.location]
        hint = [g for g in ("otg",) if located]
        where = f" (hardware port locations {', '.join(map(str, located))} need --trafficgen {hint[0]})" \
            if hint else ""
        return (f"traffic generator {generator.NAME} needs two DUT ports cabled to interfaces of host "
                f"{testbed.trafficgen_host}, testbed {testbed.path} has {len(cables)}{where}")
    if generator.PORT_LOCATIONS:
        try:
            return generator.locations_problem(spec.settings, [str(c.trafficgen.location) for c in cables
                                                               if c.trafficgen.location])
        except ConfigError as exc:
            return str(exc)
    return ""
