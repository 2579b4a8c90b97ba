"""A deployment on a testbed's hosts: the DUT host's switch between its existing, cabled ports.

What runs today: p2p, pvp, pvvpN and pvpvN with the lab's own switch classes (`vsperf.vswitch`:
linux-bridge, ovs, ovs-dpdk) on the DUT host. They run every command through the executor they are given, here
the DUT host's (SSH, or this machine for a host `local`), and keep their files, bridges and
daemons on that host through `vsperf.testbed.switch_host.TestbedSwitchHost`, which records
them in the run's journal (the next run deletes the bridge and stops the daemons by PID and
start time after a SIGKILL or a lost host). The DUT's ports are the testbed's own interfaces,
never created, renamed or deleted: their state is recorded, they are brought up (MTU for the
frame size) and attached, and teardown puts them back as they were (`vsperf.testbed.ports`);
the switch's forwarding plan is the lab's (`vsperf.lab.topology`: the same flows). A DUT port
that is a PCI device for DPDK is taken over by OVS-DPDK on hugepages (`vsperf.testbed.dpdk`).

Each VNF of the deployment is the namespace VNF (`vsperf.vnf.netns`, kernel-bridge or
testpmd loopback) or the testpmd-vhost VNF (`vsperf.vnf.testpmd_vhost`), built on the DUT host through
`vsperf.testbed.vnf_host.TestbedVnfHost` (namespaces, veths and processes in the journal, files
in /tmp/vsperf-RUNID-* there), or a QEMU guest (`vsperf.vnf.qemu`: its image copied there, its taps
or vhost-user sockets and its process journaled, its console over its SSH channel); PCI
passthrough runs on the local lab only, refused by name.

The generator ports are the generator host's ends of the cables, in the root namespace of
that host; frames carry their MAC addresses and the test's 198.18.0.0/15 addresses (nothing
is configured on them but link state and MTU). A generator that takes hardware port locations
(`checks.LOCATION_TRAFFICGENS`: otg) may have cables whose generator end is a `location`: vsperf
leaves such a port to the generator's controller and gives it a fixed MAC (`LOCATION_MACS`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from vsperf.config import traffic_from_settings
from vsperf.context import RunContext
from vsperf.deployment import ComponentInfo, Deployment, GenPort
from vsperf.errors import CommandError, DeploymentError
from vsperf.executor import CommandLog
from vsperf.lab.deploy import check_vlan_push, mtu_for, resolve_vnf
from vsperf.lab.state import DEFAULT_STATE_ROOT
from vsperf.lab.streams import directions
from vsperf.lab.topology import forwarding_rules, parse_deployment, port_names
from vsperf.plan import PlannedTest
from vsperf.registry import Registries
from vsperf.sysinfo import port_details
from vsperf.testbed.checks import (
    DEPLOYMENTS,
    LAYOUTS,
    LOCATION_TRAFFICGENS,
    VSWITCHES,
    TestbedVnf,
    checks_dut_ports,
    used_cables,
)
from vsperf.testbed.dpdk import (
    HugepageConf,
    dpdk_ports,
    pci_unsupported,
    take_over,
    uses_hugepages,
)
from vsperf.testbed.extras import frame_modification_vlan
from vsperf.testbed.file import load_testbed
from vsperf.testbed.model import Cable
from vsperf.testbed.ports import interface_mac
from vsperf.testbed.session import TestbedSession
from vsperf.testbed.switch_host import TestbedSwitchHost, host_bridge_name
from vsperf.testbed.vnf_host import TestbedVnfHost
from vsperf.traffic import Traffic
from vsperf.vnf.netns import NetnsVnf
from vsperf.vnf.qemu.vnf import QemuVnf
from vsperf.vnf.testpmd_vhost import TestpmdVhostVnf
from vsperf.vswitch.base import ForwardingPlan, SwitchPort, VSwitch
from vsperf.vswitch.none import NoVSwitch
from vsperf.vswitch.ovs import OvsVSwitch
from vsperf.vswitch.ovs_dpdk import OvsDpdkVSwitch

log = logging.getLogger(__name__)

# The userspace datapath's own interface on the host: one per host, whichever OVS instance runs it.
NETDEV_IF = "ovs-netdev"
# The source MACs of a hardware generator's ports (a cable's `location`): vsperf does not read a
# chassis port's MAC, so frames carry these locally administered ones (TRAFFIC l2 srcmac/dstmac
# override them); the DUT's flows are port-based and the Linux bridge learns them.
LOCATION_MACS = ("02:76:73:00:00:00", "02:76:73:00:00:01")


def bridge_name(run_id: str) -> str:
    """The DUT's (first) bridge: the run id in its name (15 characters at most, an interface name)."""
    return host_bridge_name(run_id, 0)


class TestbedDeployment(Deployment):
    """p2p, pvp, pvvpN or pvpvN on the testbed: the lab's switch (`vswitch`, built with the DUT
    host's executor in its context) joins the DUT host's first two ports (through `vnfs`, built
    on that host). `hugepages`: OVS-DPDK on hugepages, its PCI ports taken over
    (vsperf.testbed.dpdk)."""

    __test__ = False

    def __init__(self, name: str, session: TestbedSession, *, run_id: str, traffic: Traffic,
                 vswitch: VSwitch, vnfs: Sequence[TestbedVnf] = (), hugepages: HugepageConf | None = None,
                 vlan_id: int | None = None, gen_locations: bool = False) -> None:
        topology = parse_deployment(name)
        if topology.layout not in LAYOUTS:
            raise DeploymentError(f"deployment {name} is not implemented on a testbed (only {DEPLOYMENTS})")
        if len(vnfs) != topology.vnfs:
            raise DeploymentError(f"deployment {name} needs {topology.vnfs} VNFs, got {len(vnfs)}")
        if vswitch.NAME not in VSWITCHES:
            raise DeploymentError(f"vswitch {vswitch.NAME} does not deploy on a testbed "
                                  f"(only {', '.join(VSWITCHES)})")
        cables = used_cables(session.testbed.cables, locations=gen_locations)  # locations: otg's hardware ports
        if len(cables) < 2:
            raise DeploymentError(f"testbed {session.testbed.path}: {name} needs two DUT ports cabled to interfaces "
                                  f"of the generator host, the file has {len(cables)}")
        if pci_unsupported(vswitch.NAME, cables):
            raise DeploymentError(pci_unsupported(vswitch.NAME, cables))
        if dpdk_ports(cables) and hugepages is None:
            raise DeploymentError("a PCI port for DPDK needs OVS-DPDK on hugepages (HugepageConf)")
        self.hugepages = hugepages if isinstance(vswitch, OvsDpdkVSwitch) else None
        self.vlan_id = vlan_id  # Frame Modification vlan: the switch tags frames towards the generator
        self.name = name
        self.session = session
        self.traffic = traffic
        self.cables: tuple[Cable, Cable] = (cables[0], cables[1])
        self.bridge = bridge_name(run_id)
        self.vswitch = vswitch
        self.host = TestbedSwitchHost(session, session.testbed.dut_host, run_id)
        self.vnfs = list(vnfs)
        self.vnf_host = TestbedVnfHost(session, session.testbed.dut_host, run_id)
        self._started = False
        self._ports: tuple[GenPort, ...] = ()

    @property
    def _dut_host(self) -> str:
        return self.session.testbed.dut_host

    @property
    def _gen_host(self) -> str:
        return self.session.testbed.trafficgen_host

    def _dut_ifs(self) -> list[str]:
        """The DUT ports: an interface, or a PCI device taken over for DPDK."""
        return [str(c.dut.interface) if c.dut.driver == "kernel" else f"PCI {c.dut.pci}" for c in self.cables]

    def _gen_ifs(self) -> list[str]:
        """The generator ports: interfaces of the generator host, or hardware ports' locations."""
        return [c.trafficgen.label for c in self.cables]

    def deploy(self) -> None:
        mtu = mtu_for(self.traffic)
        session = self.session
        try:
            for cable in self.cables:
                if cable.trafficgen.interface:  # a hardware port (location) is the generator's own
                    session.use_port(self._gen_host, cable.trafficgen.interface, mtu_bytes=mtu)
                if cable.dut.driver == "kernel":  # a PCI port is taken over below
                    session.use_port(self._dut_host, str(cable.dut.interface), mtu_bytes=mtu)
            ends = [c.trafficgen for c in self.cables]
            macs = [self._mac(end.interface) if end.interface else LOCATION_MACS[i] for i, end in enumerate(ends)]
            ips = (self.traffic.l3.srcip, self.traffic.l3.dstip)
            self._ports = tuple(
                GenPort(netns=None, ifname=end.interface or "", mac=macs[i], ipv4=ips[i], peer_mac=macs[1 - i],
                        peer_ipv4=ips[1 - i], rx_vlan_id=self.vlan_id, location=end.location)
                for i, end in enumerate(ends))
            if isinstance(self.vswitch, OvsVSwitch):  # ovs and ovs-dpdk
                self._claim_userspace_datapath()
            self._started = True
            if self.hugepages is not None and isinstance(self.vswitch, OvsDpdkVSwitch):
                # Hugepages reserved and PCI ports bound, each recorded first: restore() undoes them.
                self.vswitch.use_hugepages(take_over(session, self.cables, self.hugepages))
            if isinstance(self.vswitch, NoVSwitch):  # testpmd, a process of the DUT host
                self.vswitch.run_on(self.vnf_host)
            self.vswitch.start(self.host)
            vnf_ports: list[SwitchPort] = []
            for index, vnf in enumerate(self.vnfs):
                vnf_ports += vnf.create_on(self.vnf_host, index, mtu)
            self.vswitch.configure(self._plan(mtu, vnf_ports))
            for vnf in self.vnfs:
                vnf.start()
            self.vswitch.wait_ready()
        except CommandError as exc:
            raise DeploymentError(f"deploying {self.name} on the testbed: {exc}") from exc
        log.info("testbed: host %s joins %s with %s %s; generator ports %s on host %s", self._dut_host,
                 " and ".join(self._dut_ifs()), self.vswitch.NAME, self.bridge, " and ".join(self._gen_ifs()),
                 self._gen_host)

    def _plan(self, mtu: int, vnf_ports: Sequence[SwitchPort]) -> ForwardingPlan:
        """The lab's plan (same flows), on the DUT host's cabled interfaces and the VNFs' ports."""
        phy = [SwitchPort(f"phy{i}", "veth", "phy", ifname=str(c.dut.interface)) if c.dut.driver == "kernel"
               else SwitchPort(f"phy{i}", "pci", "phy", pci=str(c.dut.pci)) for i, c in enumerate(self.cables)]
        by_name = {p.name: p for p in [*phy, *vnf_ports]}
        topology = parse_deployment(self.name)
        ports = tuple(by_name[n] for n in port_names(topology))
        forward, reverse = directions(replace(self.traffic, bidir=True), self._ports)[:2]
        rules = forwarding_rules(topology, self.traffic, forward, reverse, vlan_id=self.vlan_id)
        return ForwardingPlan(ports=ports, rules=rules, mtu_bytes=mtu)

    def _claim_userspace_datapath(self) -> None:
        """Refuse a host where another OVS userspace datapath runs (the two would share its
        interface); journal that interface and the bridge's (a killed ovs-vswitchd leaves them)."""
        dut = self.session.dut
        if dut.run(["ip", "link", "show", "dev", NETDEV_IF], check=False, timeout_s=10).returncode == 0:
            raise DeploymentError(f"host {self._dut_host}: another Open vSwitch runs a userspace datapath there "
                                  f"({NETDEV_IF} exists); stop it or use --vswitch linux-bridge")
        self.session.journal.record_link(self._dut_host, NETDEV_IF)
        self.session.journal.record_link(self._dut_host, self.bridge)

    def _mac(self, ifname: str) -> str:
        return interface_mac(self.session.trafficgen, ifname)

    def teardown(self) -> None:
        """Stop the switch, remove its files and put every port back (a lost host's are left to
        the next run, which finds them in the journal)."""
        if self._started and self.session.reachable(self._dut_host):
            for vnf in reversed(self.vnfs):
                try:
                    vnf.stop()
                except DeploymentError as exc:  # the journal's restore below deletes what is left
                    log.warning("stopping VNF %s on host %s: %s", vnf.NAME, self._dut_host, exc)
            try:
                self.vswitch.stop()
            except DeploymentError as exc:  # the journal's restore below stops what is left
                log.warning("stopping %s on host %s: %s", self.vswitch.NAME, self._dut_host, exc)
            self.host.remove_dirs()
            self.vnf_host.remove_dirs()  # the VNFs' sockets, logs and DPDK runtime directories
        self._started = False
        for done in self.session.restore():
            log.debug("testbed teardown: %s", done)
        self._ports = ()

    @property
    def gen_ports(self) -> Sequence[GenPort]:
        return self._ports

    def dut_pids(self) -> dict[str, int]:
        """The switch's and the VNFs' processes: PIDs on the DUT host (they were started there)."""
        pids = dict(self.vswitch.pids())
        for vnf in self.vnfs:
            pids.update(vnf.pids())
        return pids

    def check_alive(self) -> None:
        """The DUT host still answers, its bridge is there (testpmd forwarding has none) and the
        switch's daemons run (HostLostError names the host when its SSH connection is gone)."""
        argv = ["true"] if isinstance(self.vswitch, NoVSwitch) else ["ip", "link", "show", "dev", self.bridge]
        proc = self.session.dut.run(argv, check=False, timeout_s=10)
        if proc.returncode != 0:
            raise DeploymentError(f"host {self._dut_host}: bridge {self.bridge} is gone")
        self.vswitch.check_alive()
        for vnf in self.vnfs:
            vnf.check_alive()

    def restart(self) -> None:
        """Restart the switch under test (RFC 2544 reset), as on the local lab."""
        self.vswitch.restart()

    def forget_addresses(self) -> None:
        """Flush the addresses the switch learned (RFC 2889), as on the local lab."""
        self.vswitch.forget_addresses()

    def components(self) -> list[ComponentInfo]:
        """The switch and the DUT's ports (driver, firmware, PCI address as ethtool reports them)."""
        info = [replace(c, details={"host": self._dut_host, **c.details}) for c in self.vswitch.components()]
        for index, vnf in enumerate(self.vnfs):
            info += [replace(c, details={"host": self._dut_host, "index": str(index), **c.details})
                     for c in vnf.components()]
        for i, (cable, gen_if) in enumerate(zip(self.cables, self._gen_ifs(), strict=True)):
            dut_if = cable.dut.interface
            details = port_details(self.session.dut, dut_if) if cable.dut.driver == "kernel" and dut_if else \
                {"driver": cable.dut.driver, "bus-info": str(cable.dut.pci)}  # bound to DPDK: no interface
            driver = details.pop("driver", "unknown")
            cabled_to = cable.trafficgen.location or f"{self._gen_host}:{gen_if}"  # a chassis port: its location
            info.append(ComponentInfo("port", f"port {i}", driver, {
                "host": self._dut_host, "interface": dut_if or "", "cabled to": cabled_to, **details}))
        return info


def build_testbed_deployment(pt: PlannedTest, registries: Registries, ctx: RunContext, session: TestbedSession,
                             size: int) -> TestbedDeployment:
    """The deployment of test `pt` at frame size `size` on the testbed: the lab's switch and VNF
    classes, their commands through the DUT host's executor."""
    dut_ctx = replace(ctx, executor=session.dut)
    vswitch_cls = registries.vswitches.get(pt.vswitch).cls
    vnfs: list[TestbedVnf] = []
    if parse_deployment(pt.test.deployment).vnfs:
        vnf_cls = resolve_vnf(pt.settings, registries, vswitch_cls)
        if not issubclass(vnf_cls, NetnsVnf | TestpmdVhostVnf | QemuVnf):  # the preflight refused it
            raise DeploymentError(f"VNF {vnf_cls.NAME} runs on the local lab only")
        vnfs = [vnf_cls(pt.settings, dut_ctx) for _ in range(parse_deployment(pt.test.deployment).vnfs)]
    locations = pt.trafficgen in LOCATION_TRAFFICGENS
    hugepages = HugepageConf.from_settings(pt.settings) \
        if uses_hugepages(pt.vswitch, pt.settings, used_cables(session.testbed.cables, locations=locations)) else None
    vswitch, vlan_id = vswitch_cls(pt.settings, dut_ctx), frame_modification_vlan(pt)
    if vlan_id is not None:  # the lab's check, on the DUT host's kernel (through its executor)
        check_vlan_push(vswitch)
    return TestbedDeployment(pt.test.deployment, session, run_id=ctx.run_id,
                             traffic=traffic_from_settings(pt.settings, size),
                             vswitch=vswitch, vnfs=vnfs, hugepages=hugepages,
                             vlan_id=vlan_id, gen_locations=locations)


def open_run_session(settings: Mapping[str, Any], plan: Iterable[PlannedTest], *, run_id: str,
                     command_log: CommandLog, state_root: Path = DEFAULT_STATE_ROOT) -> TestbedSession | None:
    """The run's session on its testbed (hosts connected, ports checked), when the run has a
    testbed and deploys on it; None otherwise. The caller closes it (that restores the ports)."""
    if not settings["TESTBED"] or all(pt.simulated for pt in plan):
        return None
    return TestbedSession.open(load_testbed(Path(settings["TESTBED"])), run_id=run_id, state_root=state_root,
                               command_log=command_log, dut_ports=checks_dut_ports(plan))
