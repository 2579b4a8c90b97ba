"""Where the generator ports come from: veth pairs the run makes (the local lab), or the cables of
a testbed file (existing interfaces, recorded and put back as they were).

Either way the deployment gets two `GenPort`s (port 0 -> port 1 is the forward direction) and,
unless it only sends traffic (`wire`), the two switch ports they are joined to (`phy0`, `phy1`),
in the namespace of the DUT host the switch runs in (`switch_netns`). Everything is created or
changed through the run's hosts (`vsperf.host`), each step in the run's journal first.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from vsperf.errors import CommandError, DeploymentError
from vsperf.host.facts import port_details
from vsperf.host.hosts import RunHosts
from vsperf.host.network import LinkEnd
from vsperf.host.ports import interface_mac
from vsperf.results.model import ComponentInfo
from vsperf.testbed.model import Cable
from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort
from vsperf.vswitch.base import SwitchPort

GEN_PREFIX_LEN = 15  # generator addresses share 198.18.0.0/15
# The source MACs of a hardware generator's ports (a cable's `location`): vsperf does not read a
# chassis port's MAC, so frames carry these locally administered ones (TRAFFIC l2 srcmac/dstmac
# override them); the DUT's flows are port-based and the Linux bridge learns them.
LOCATION_MACS = ("02:76:73:00:00:00", "02:76:73:00:00:01")
WIRE_NOTE = "traffic only (--mode trafficgen): the generator ports are joined back to back"
CABLED_WIRE_NOTE = ("traffic only (--mode trafficgen): the generator ports' cables reach the user's DUT, "
                    "which vsperf does not touch")


def used_cables(cables: Sequence[Cable], *, locations: bool = False) -> list[Cable]:
    """The cables a deployment uses (ports 0 and 1): the first two whose generator end is an
    interface (or, with `locations`, a hardware port's location) and whose DUT end is an
    interface, or a PCI device for DPDK."""
    return [c for c in cables if (c.trafficgen.interface or (locations and c.trafficgen.location))
            and (c.dut.interface if c.dut.driver == "kernel" else c.dut.pci)][:2]


def generator_cables(cables: Sequence[Cable]) -> list[Cable]:
    """The cables whose generator ends carry traffic-only runs: the first two with an interface
    on the generator host (their DUT ends do not matter: the DUT is the user's)."""
    return [c for c in cables if c.trafficgen.interface][:2]


class GenPorts(ABC):
    """The generator ports of one deployment, and the switch ports they are joined to."""

    def __init__(self, hosts: RunHosts, *, wire: bool) -> None:
        self.hosts = hosts
        self.wire = wire  # traffic only: no switch between the generator ports
        self.ports: tuple[GenPort, ...] = ()

    @property
    @abstractmethod
    def switch_netns(self) -> str | None:
        """The DUT host's namespace the switch runs in (None: the host's own)."""

    @abstractmethod
    def create(self, traffic: Traffic, mtu_bytes: int, vlan_id: int | None, *,
               traffic_ports: bool = True) -> list[SwitchPort]:
        """Make or prepare the ports (`self.ports` set); the switch ports phy0 and phy1 (none
        for a wire). Without `traffic_ports` (deployment clean: the switch only) no port is
        made, only the switch's namespace."""

    @abstractmethod
    def components(self) -> list[ComponentInfo]:
        """The ports as the report names them."""

    def dut_ports(self) -> tuple[tuple[str | None, str], ...]:
        """The DUT's interfaces facing the generator ports, as (netns, ifname), when their
        counters can be read from here; none by default."""
        return ()

    def _gen_ports(self, ends: Sequence[tuple[str | None, str, str, str | None]], traffic: Traffic,
                   vlan_id: int | None) -> None:
        """`self.ports` from (netns, ifname, mac, location) of port 0 and port 1."""
        ips = (traffic.l3.srcip, traffic.l3.dstip)
        self.ports = tuple(
            GenPort(netns=ns, ifname=ifname, mac=mac, ipv4=ips[i], peer_mac=ends[1 - i][2], peer_ipv4=ips[1 - i],
                    rx_vlan_id=vlan_id, location=location)
            for i, (ns, ifname, mac, location) in enumerate(ends))


class VethPorts(GenPorts):
    """The local lab: per generator port a namespace and a veth pair into the switch's namespace
    (addresses from 198.18.0.0/15, static neighbours, ARP and IPv6 off); for a wire, one veth
    pair between the two generator namespaces. The switch runs in a namespace of its own. With
    `one_netns` both generator ends are in the first generator namespace: for a generator whose
    one process owns both ports (TRex opens them from there)."""

    def __init__(self, hosts: RunHosts, *, wire: bool, queues: int = 1, one_netns: bool = False) -> None:
        super().__init__(hosts, wire=wire)
        if hosts.dut is not hosts.trafficgen:
            raise DeploymentError("veth ports need the switch and the generator on one host")
        self.queues = queues  # rx/tx queues of each veth (LAB_PORT_QUEUES)
        self.one_netns = one_netns

    @property
    def switch_netns(self) -> str | None:
        return self.hosts.dut.names.switch_netns

    def create(self, traffic: Traffic, mtu_bytes: int, vlan_id: int | None, *,
               traffic_ports: bool = True) -> list[SwitchPort]:
        host = self.hosts.dut
        names, net = host.names, host.net
        if self.wire:
            for ns in dict.fromkeys(map(self._gen_netns, (0, 1))):
                net.add_netns(ns)
            pair = net.add_veth(names.gen_if(0), self._gen_netns(0), names.gen_if(1), self._gen_netns(1),
                                mtu_bytes=mtu_bytes, queues=self.queues)
            self._address(list(pair), traffic, vlan_id)
            return []
        net.add_netns(names.switch_netns)
        if not traffic_ports:
            return []
        ends: list[LinkEnd] = []
        for i in (0, 1):
            if i == 0 or not self.one_netns:
                net.add_netns(self._gen_netns(i))
            gen_end, _ = net.add_veth(names.gen_if(i), self._gen_netns(i), names.phy_if(i), names.switch_netns,
                                      mtu_bytes=mtu_bytes, queues=self.queues)
            ends.append(gen_end)
        self._address(ends, traffic, vlan_id)
        return [SwitchPort(f"phy{i}", "veth", "phy", ifname=names.phy_if(i), tunable=True) for i in (0, 1)]

    def _gen_netns(self, index: int) -> str:
        """The namespace of generator port `index`."""
        return self.hosts.dut.names.gen_netns(0 if self.one_netns else index)

    def _address(self, ends: list[LinkEnd], traffic: Traffic, vlan_id: int | None) -> None:
        ips = (traffic.l3.srcip, traffic.l3.dstip)
        for i, peer in ((0, 1), (1, 0)):
            self.hosts.dut.net.configure_port(ends[i].ifname, ends[i].netns, ips[i], GEN_PREFIX_LEN, ips[peer],
                                              ends[peer].mac)
        self._gen_ports([(e.netns, e.ifname, e.mac, None) for e in ends], traffic, vlan_id)

    def components(self) -> list[ComponentInfo]:
        if self.wire:
            return [ComponentInfo("port", "wire", "veth pair", {"note": WIRE_NOTE})]
        return []

    def dut_ports(self) -> tuple[tuple[str | None, str], ...]:
        if self.wire or not self.ports:
            return ()
        names = self.hosts.dut.names
        return tuple((names.switch_netns, names.phy_if(i)) for i in (0, 1))


class CabledPorts(GenPorts):
    """A testbed: the generator host's and the DUT host's ends of two cables, recorded, brought
    up (MTU for the frame size) and put back at release; never created, renamed or deleted. The
    switch runs in the DUT host's own namespace, where those interfaces are. A DUT end may be a
    PCI device, which OVS-DPDK takes over (vsperf.deploy.hugepages); a generator end may be a
    hardware generator's port location (`locations`), which only such a generator drives."""

    def __init__(self, hosts: RunHosts, *, wire: bool, locations: bool = False) -> None:
        super().__init__(hosts, wire=wire)
        cables = hosts.testbed.cables
        self.cables = generator_cables(cables) if wire else used_cables(cables, locations=locations)
        if len(self.cables) < 2:
            what = ("--mode trafficgen needs two cables with an interface on the generator host" if wire else
                    "this deployment needs two DUT ports cabled to interfaces of the generator host")
            raise DeploymentError(f"testbed {hosts.testbed.path}: {what}, the file has {len(self.cables)}")

    @property
    def switch_netns(self) -> str | None:
        return None

    def create(self, traffic: Traffic, mtu_bytes: int, vlan_id: int | None, *,
               traffic_ports: bool = True) -> list[SwitchPort]:
        dut, gen = self.hosts.dut, self.hosts.trafficgen
        if not traffic_ports:  # (the preflight refuses deployment clean on a testbed)
            return []
        try:
            for cable in self.cables:
                if cable.trafficgen.interface:  # a hardware port (location) is the generator's own
                    self.hosts.use_port(gen, cable.trafficgen.interface, mtu_bytes=mtu_bytes)
                if not self.wire and cable.dut.driver == "kernel":  # a PCI port is taken over by the switch
                    self.hosts.use_port(dut, str(cable.dut.interface), mtu_bytes=mtu_bytes)
            ends = [c.trafficgen for c in self.cables]
            macs = [interface_mac(gen.executor, end.interface) if end.interface else LOCATION_MACS[i]
                    for i, end in enumerate(ends)]
        except CommandError as exc:
            raise DeploymentError(f"host {gen.name}: preparing the generator ports: {exc}") from exc
        self._gen_ports([(None, end.interface or "", macs[i], end.location) for i, end in enumerate(ends)],
                        traffic, vlan_id)
        if self.wire:
            return []
        return [SwitchPort(f"phy{i}", "veth", "phy", ifname=str(c.dut.interface)) if c.dut.driver == "kernel"
                else SwitchPort(f"phy{i}", "pci", "phy", pci=str(c.dut.pci)) for i, c in enumerate(self.cables)]

    def labels(self) -> list[str]:
        """The DUT ports as messages name them: an interface, or a PCI device taken over for DPDK."""
        return [str(c.dut.interface) if c.dut.driver == "kernel" else f"PCI {c.dut.pci}" for c in self.cables]

    def components(self) -> list[ComponentInfo]:
        dut, gen = self.hosts.dut, self.hosts.trafficgen
        if self.wire:
            return [ComponentInfo("port", f"port {i}", "user's DUT", {
                "host": gen.name, "interface": str(c.trafficgen.interface),
                "cabled to": f"{dut.name}:{c.dut.label}", "note": CABLED_WIRE_NOTE})
                for i, c in enumerate(self.cables)]
        info = []
        for i, cable in enumerate(self.cables):
            dut_if = cable.dut.interface
            details = port_details(dut.executor, dut_if) if cable.dut.driver == "kernel" and dut_if else \
                {"driver": cable.dut.driver, "bus-info": str(cable.dut.pci)}  # bound to DPDK: no interface
            driver = details.pop("driver", "unknown")
            cabled_to = cable.trafficgen.location or f"{gen.name}:{cable.trafficgen.label}"  # a chassis port
            info.append(ComponentInfo("port", f"port {i}", driver, {
                "host": dut.name, "interface": dut_if or "", "cabled to": cabled_to, **details}))
        return info
