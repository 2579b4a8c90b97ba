"""What a testbed run can do, checked before anything is created: which tests deploy on a
testbed (`unsupported_on_testbed`), which programs the DUT host and the generator host need
(`dut_tools`, `gen_tools`, `missing_tools`), and whether the DUT's ports and host can serve
each test's switch (`dut_problems`: PCI ports for DPDK, hugepages). Every answer is one line
naming the problem and the fix (the CLI exits 2 with it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from vsperf.collectors.base import collector_names
from vsperf.dpdk.conf import OVS_DPDK_VSWITCHD
from vsperf.dpdk.eal import TELEMETRY_CLIENT, TESTPMD_BINARY
from vsperf.errors import ConfigError
from vsperf.lab.topology import Topology, check_streams, parse_deployment
from vsperf.plan import PlannedTest
from vsperf.testbed.dpdk import (
    HugepageConf,
    dut_problem,
    pci_unsupported,
    uses_hugepages,
)
from vsperf.testbed.extras import load_programs, load_unsupported
from vsperf.testbed.model import Cable, Testbed
from vsperf.testbed.session import TestbedSession
from vsperf.trafficgen.otg.backend import configured_ports, locations_conflict
from vsperf.vnf.netns import NetnsVnf, loopback_for
from vsperf.vnf.qemu.qemu import QEMU_BINARY
from vsperf.vnf.qemu.vnf import QemuVnf
from vsperf.vnf.testpmd_vhost import TestpmdVhostVnf
from vsperf.vswitch.linux_bridge import LinuxBridgeVSwitch
from vsperf.vswitch.none import NoVSwitch
from vsperf.vswitch.ovs import OvsVSwitch
from vsperf.vswitch.ovs_dpdk import OvsDpdkVSwitch

# What a testbed deploys: the lab's layouts with traffic ports (p2p, pvp, pvvpN, pvpvN).
LAYOUTS = ("p2p", "series", "parallel")
DEPLOYMENTS = "p2p, pvp, pvvpN, pvpvN"
VSWITCHES = ("linux-bridge", "ovs", "ovs-dpdk", "none")
VNFS = ("netns", "testpmd-vhost", "qemu-vhost-user", "qemu-virtio-net")  # VNFs that run on a testbed host
TestbedVnf = NetnsVnf | TestpmdVhostVnf | QemuVnf  # VNF classes with `create_on(host, index, mtu)`
# VNF "auto" is the switch's default VNF.
_SWITCH_CLASSES = (LinuxBridgeVSwitch, OvsVSwitch, OvsDpdkVSwitch, NoVSwitch)
_DEFAULT_VNFS = {cls.NAME: cls.DEFAULT_VNF for cls in _SWITCH_CLASSES}
_SUPPORTS_MATCH = {cls.NAME: cls.SUPPORTS_MATCH for cls in _SWITCH_CLASSES}
# generators a testbed drives (dummy simulates: nothing deployed)
TRAFFICGENS = ("vsgen", "trafgen", "otg", "pktgen", "trex")
# Generators whose ports may be a hardware generator's port locations (a cable's `trafficgen: {location}`):
# otg sends them to its controller (TRAFFICGEN_OTG_LOCATION); trex takes them as the PCI addresses of
# the generator host's DPDK ports. vsgen and trafgen need interfaces.
LOCATION_TRAFFICGENS = ("otg", "trex")
# Generators of --mode trafficgen on a testbed (traffic only: the generator host's interfaces)
TRAFFIC_ONLY_TRAFFICGENS = ("vsgen", "trafgen", "trex")
# Programs a generator needs on the generator host (program -> Debian package); vsgen's engine is
# copied there and checked when it starts. trafgen's receive agent runs with python3.
TRAFFICGEN_TOOLS = {"trafgen": {"trafgen": "netsniff-ng", "tc": "iproute2", "python3": "python3",
                                "taskset": "util-linux"}}
# Programs Debian does not package: how to install them instead of a package name.
UNPACKAGED = {"pktgen": "build Pktgen-DPDK >= 23.06 with Lua there (docs/trafficgens.rst) and set "
                        "TRAFFICGEN_PKTGEN_BINARY to its path",
              "trex": "build TRex v3.0.7 there (docs/trafficgens.rst) and set TRAFFICGEN_TREX_BASE_DIR to its "
                      "scripts directory"}
OVS_TOOLS = ("ovsdb-tool", "ovsdb-server", "ovs-vsctl", "ovs-ofctl", "ovs-appctl")
def unsupported_on_testbed(plan: Iterable[PlannedTest]) -> str | None:
    """Why a planned test cannot run on a testbed yet (None: every one can); checked before
    anything is created (the testbed's ports against each test's switch: `dut_problems`)."""
    for pt in plan:
        if pt.simulated:
            continue  # the simulated generator deploys nothing
        why = ""
        if pt.traffic_only:  # nothing deployed: the generator host's ports only (vsperf.testbed.wire)
            why = "" if pt.trafficgen in TRAFFIC_ONLY_TRAFFICGENS else (
                f"--mode trafficgen with {pt.trafficgen} (on a testbed: --trafficgen "
                f"{', '.join(TRAFFIC_ONLY_TRAFFICGENS)})")
        elif (topology := parse_deployment(pt.test.deployment)).layout not in LAYOUTS:
            why = f"deployment {pt.test.deployment} (only {DEPLOYMENTS} deploy on a testbed)"
        elif topology.layout == "parallel" and not _SUPPORTS_MATCH.get(pt.vswitch, True):
            why = (f"deployment {topology.name} splits streams between VNFs by header fields, which "
                   f"{pt.vswitch} cannot do: use --vswitch ovs")
        elif pt.vswitch not in VSWITCHES:
            why = f"vswitch {pt.vswitch} (only {', '.join(VSWITCHES)} deploy on a testbed)"
        elif pt.trafficgen not in TRAFFICGENS:
            why = f"traffic generator {pt.trafficgen} (only {', '.join(TRAFFICGENS)} or dummy runs on a testbed)"
        elif pt.test.load and load_unsupported(pt):
            why = load_unsupported(pt)
        else:
            why = _vnf_unsupported(pt) or _streams_unsupported(pt, topology)
        if why:
            return f"test {pt.test.name}: {why}"
    return None


def _streams_unsupported(pt: PlannedTest, topology: Topology) -> str:
    """pvpvN sends stream i through VNF i mod N: why the test's streams cannot ("" when they can)."""
    try:
        check_streams(topology, int(pt.settings["TRAFFIC"]["multistream"]))
    except ConfigError as exc:
        return str(exc)
    return ""


def used_cables(cables: Iterable[Cable], *, locations: bool = False) -> list[Cable]:
    """The cables a deployment uses (ports 0 and 1): the first two whose generator end is an
    interface (or, with `locations`, a hardware port's location) and whose DUT end is an
    interface, or a PCI device for DPDK."""
    return [c for c in cables if (c.trafficgen.interface or (locations and c.trafficgen.location))
            and (c.dut.interface if c.dut.driver == "kernel" else c.dut.pci)][:2]


def _vnf_unsupported(pt: PlannedTest) -> str:
    """Why the test's VNFs cannot run on a testbed host ("" when they can, or it has none)."""
    vnfs = parse_deployment(pt.test.deployment).vnfs
    if not vnfs:
        return ""
    vnf = _DEFAULT_VNFS.get(pt.vswitch, "netns") if pt.vnf == "auto" else pt.vnf
    if vnf not in VNFS:
        return f"VNF {vnf} runs on the local lab only (on a testbed: --vnf {', '.join(VNFS)})"
    return ""


def _runs_testpmd(pt: PlannedTest) -> bool:
    """True when the test's switch (none: testpmd forwarding) or VNFs run dpdk-testpmd on the DUT host."""
    if pt.vswitch == NoVSwitch.NAME:
        return True
    vnfs = parse_deployment(pt.test.deployment).vnfs
    if not vnfs:
        return False
    vnf = _DEFAULT_VNFS.get(pt.vswitch, "netns") if pt.vnf == "auto" else pt.vnf
    return vnf == "testpmd-vhost" or (vnf == "netns" and any(loopback_for(pt.settings, i) == "testpmd"
                                                             for i in range(vnfs)))


def dut_tools(plan: Iterable[PlannedTest]) -> dict[str, str]:
    """Programs the DUT host needs for the plan's testbed deployments (program -> Debian package)."""
    tools: dict[str, str] = {}
    for pt in plan:
        if pt.simulated:
            continue
        # pidstat reads the DUT host's process table and clock tick
        if "pidstat" in {n.lower() for n in collector_names(pt.settings["COLLECTOR"])}:
            tools.update({"ps": "procps", "getconf": "libc-bin"})
        if pt.traffic_only:  # --mode trafficgen deploys nothing on the DUT host (its collectors read it)
            continue
        tools["ip"] = "iproute2"  # (ethtool, for the report's port details, is optional)
        tools.update(load_programs(pt))  # the test's Load runs on the DUT host
        if pt.vswitch in ("ovs", "ovs-dpdk"):
            tools.update({t: "openvswitch-switch" for t in OVS_TOOLS})
        if pt.vswitch == "ovs":
            tools["ovs-vswitchd"] = "openvswitch-switch"
        elif pt.vswitch == "ovs-dpdk":
            tools[str(pt.settings[OVS_DPDK_VSWITCHD])] = "openvswitch-switch-dpdk"
        if _runs_testpmd(pt):
            tools.update({TESTPMD_BINARY: "dpdk-dev", TELEMETRY_CLIENT: "dpdk-dev"})
        if parse_deployment(pt.test.deployment).vnfs and pt.vnf.startswith("qemu-"):
            tools[QEMU_BINARY] = "qemu-system-x86"  # the guest image is built on this machine
    return tools


def gen_tools(plan: Iterable[PlannedTest]) -> dict[str, str]:
    """Programs the generator host needs for the plan's generators (program -> Debian package)."""
    tools: dict[str, str] = {}
    for pt in plan:
        if not pt.simulated:
            tools.update(TRAFFICGEN_TOOLS.get(pt.trafficgen, {}))
            if pt.trafficgen == "pktgen" and not pt.settings["TRAFFICGEN_PKTGEN_HOST"]:
                # vsperf starts it there, under its pty launcher (a python3 script)
                tools.update({str(pt.settings["TRAFFICGEN_PKTGEN_BINARY"]): "pktgen", "python3": "python3"})
            if (pt.trafficgen == "trex" and pt.settings["TRAFFICGEN_TREX_START_SERVER"]
                    and not pt.settings["TRAFFICGEN_TREX_HOST_IP_ADDR"]):  # vsperf starts its server there
                base = str(pt.settings["TRAFFICGEN_TREX_BASE_DIR"]).rstrip("/")
                tools.update({f"{base}/_t-rex-64" if base else "t-rex-64": "trex", "ss": "iproute2"})
    return tools


def checks_dut_ports(plan: Iterable[PlannedTest]) -> bool:
    """False when the plan only sends traffic (--mode trafficgen): the DUT's ports are the user's
    DUT's, neither checked nor touched; the generator's are."""
    return not any(pt.traffic_only for pt in plan)


def dut_problems(session: TestbedSession, plan: Iterable[PlannedTest]) -> str | None:
    """Why the testbed's DUT ports or DUT host cannot serve the plan (None: they can): a PCI port
    for DPDK with a switch that cannot attach it, or a host that cannot give OVS-DPDK its
    hugepages (vsperf.testbed.dpdk); or generator ports the test's generator cannot drive."""
    for pt in plan:
        if pt.simulated or pt.traffic_only:  # --mode trafficgen: the DUT is the user's
            continue
        cables = used_cables(session.testbed.cables, locations=pt.trafficgen in LOCATION_TRAFFICGENS)
        if gen_ports_problem(session.testbed, pt, cables):
            return f"test {pt.test.name}: {gen_ports_problem(session.testbed, pt, cables)}"
        if pci_unsupported(pt.vswitch, cables):
            return f"test {pt.test.name}: {pci_unsupported(pt.vswitch, cables)}"
        if uses_hugepages(pt.vswitch, pt.settings, cables):
            problem = dut_problem(session, HugepageConf.from_settings(pt.settings))
            if problem:
                return problem
    return None


def gen_ports_problem(testbed: Testbed, pt: PlannedTest, cables: Sequence[Cable]) -> str:
    """Why the cables' generator ends do not suit the test's generator ("" when they do): a
    location for a generator that needs interfaces, or TRAFFICGEN_OTG_PORTS naming other ports."""
    if len(cables) < 2:
        located = [c.trafficgen.location for c in testbed.cables if c.trafficgen.location]
        where = f" (hardware port locations {', '.join(map(str, located))} need --trafficgen otg)" if located else ""
        return (f"traffic generator {pt.trafficgen} needs two DUT ports cabled to interfaces of host "
                f"{testbed.trafficgen_host}, testbed {testbed.path} has {len(cables)}{where}")
    if pt.trafficgen == "otg":
        try:
            configured = configured_ports(pt.settings)
        except ConfigError as exc:
            return str(exc)
        return locations_conflict(configured, [str(c.trafficgen.location) for c in cables if c.trafficgen.location])
    return ""


def missing_tools(session: TestbedSession, tools: Mapping[str, str], *, host: str | None = None) -> str | None:
    """The first program of `tools` host `host` (default: the DUT host) lacks, as a one-line fix
    (None: all there)."""
    host = host or session.testbed.dut_host
    for tool, package in tools.items():
        # A fixed script; the program's name is its argument, never part of the script.
        found = session.executors[host].run(["sh", "-c", 'command -v "$1"', "sh", tool], check=False, timeout_s=10)
        if found.returncode != 0:
            how = UNPACKAGED.get(package, f"apt-get install {package} there")
            return f"host {host}: {tool} is missing: {how}"
    return None
