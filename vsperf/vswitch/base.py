"""The interface every virtual switch backend implements, and the forwarding plan it executes.

A deployment (vsperf.deploy.deployment) describes the topology as a `ForwardingPlan`: the ports the
switch must attach and, for each direction, which port forwards to which (optionally only
frames matching some header fields, optionally pushing a VLAN tag). OVS turns each rule into
an OpenFlow flow, a kernel bridge into bridges that connect exactly those ports. Call order:

    vswitch = Switch(settings, host)     # the host it runs on (vsperf.host.Host)
    vswitch.check_prerequisites()        # before anything exists (on a probe of that host)
    vswitch.start(netns)                 # daemons up, in namespace `netns` of the host; no ports yet
    vswitch.configure(plan)              # bridges, ports, flows; every port already exists
    ... traffic; vswitch.check_alive() between trials ...
    vswitch.stop()                       # flows, ports, bridges, daemons gone; idempotent

Optional DUT actions (RFC 2544 reset, RFC 2889 address tests), between configure and stop:
`restart()` restarts the forwarding and returns once it forwards again as configured;
`forget_addresses()` flushes learned MAC addresses. A switch that cannot raises DeploymentError.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from vsperf.dpdk.eal import HugepageMemory
from vsperf.errors import DeploymentError
from vsperf.host.host import Host
from vsperf.results.model import ComponentInfo

PortKind = Literal["veth", "vhostuser", "pci"]
PortRole = Literal["phy", "vnf"]


class Component(ABC):
    """What switches and VNFs share: a name in a registry, settings, the host it runs on
    (`Host.probe()` for the checks made before anything is deployed), prerequisites, a report
    entry."""

    NAME: ClassVar[str]
    ALIASES: ClassVar[tuple[str, ...]] = ()
    ROLE: ClassVar[str]  # the report's role of the component: "vswitch", "vnf"

    def __init__(self, settings: Mapping[str, Any], host: Host) -> None:
        self.settings = settings
        self.host = host

    def check_prerequisites(self) -> None:  # noqa: B027 - optional hook
        """Raise PrerequisiteError naming what to install or do on `self.host` (a probe of the host
        it will run on); nothing may be created yet."""

    @abstractmethod
    def version(self) -> str:
        """Version of the component (switch, loopback application or kernel), for the report."""

    def details(self) -> dict[str, str]:
        """Extra facts for the report (port type, datapath, loopback application, ...)."""
        return {}

    def components(self) -> list[ComponentInfo]:
        """What this component deployed, for the report."""
        return [ComponentInfo(self.ROLE, self.NAME, self.version(), self.details())]


@dataclass(frozen=True)
class SwitchPort:
    """A port the switch attaches.

    `veth`: a kernel interface `ifname` that already exists in the switch namespace; `tunable`
    when the run made it (the local lab's ports: the switch may change its offloads), not for a
    testbed's own interfaces, which the switch leaves as they are.
    `vhostuser`: a vhost-user socket at `socket_path` shared with a VNF (DPDK switches only).
    `pci`: a PCI device `pci` bound to a DPDK driver (a testbed's DUT port; DPDK switches only).
    """

    name: str  # logical name used by ForwardRule: "phy0", "phy1", "vnf0.0", "vnf0.1", ...
    kind: PortKind
    role: PortRole
    ifname: str = ""  # veth: interface name in the switch namespace
    socket_path: str = ""  # vhostuser: path of the socket
    tap: bool = False  # veth: the interface is a tap (a VM's NIC), which AF_XDP ports cannot serve
    tunable: bool = False  # veth: the run made it, the switch may tune it (GRO)
    pci: str = ""  # pci: the device's address (0000:3b:00.0)

    def __post_init__(self) -> None:
        if self.kind == "veth" and not self.ifname:
            raise ValueError(f"veth port {self.name!r} needs an ifname")
        if self.kind == "vhostuser" and not self.socket_path:
            raise ValueError(f"vhost-user port {self.name!r} needs a socket_path")
        if self.kind == "pci" and not self.pci:
            raise ValueError(f"PCI port {self.name!r} needs a pci address")


Match = tuple[tuple[str, str], ...]  # OpenFlow match fields in ovs-ofctl syntax, in order


@dataclass(frozen=True)
class ForwardRule:
    """Frames entering `in_port` (and matching `match`) leave by `out_port`.

    `match` uses ovs-ofctl field names (("dl_type", "0x0800"), ("nw_dst", "198.18.1.0/25"));
    empty matches every frame. `push_vlan_id` tags frames on the way out (Frame Modification
    "vlan"); `modify` are OpenFlow actions applied before the output (the other frame
    modifications, vsperf.traffic.framemod). `priority` orders overlapping rules (higher wins).
    """

    in_port: str
    out_port: str
    match: Match = ()
    push_vlan_id: int | None = None
    priority: int = 0
    modify: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.push_vlan_id is not None and not 0 <= self.push_vlan_id <= 4095:
            raise ValueError(f"VLAN id {self.push_vlan_id} outside 0..4095")


@dataclass(frozen=True)
class ForwardingPlan:
    """Everything `VSwitch.configure` needs: ports (in attach order) and forwarding rules."""

    ports: tuple[SwitchPort, ...]
    rules: tuple[ForwardRule, ...]
    mtu_bytes: int = 1500  # largest L3 payload the ports must carry (frame size - 18)

    def __post_init__(self) -> None:
        names = [p.name for p in self.ports]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate port names in {names}")
        for rule in self.rules:
            for port in (rule.in_port, rule.out_port):
                if port not in names:
                    raise ValueError(f"rule refers to unknown port {port!r}; ports are {names}")

    def port(self, name: str) -> SwitchPort:
        """The port called `name`."""
        for port in self.ports:
            if port.name == name:
                return port
        raise KeyError(name)

    def port_number(self, name: str) -> int:
        """1-based position of port `name`: its OpenFlow port number, as VSPERF numbers them."""
        return [p.name for p in self.ports].index(name) + 1


class VSwitch(Component):
    """A virtual switch backend."""

    ROLE = "vswitch"
    # Port kinds `configure` accepts; a VNF whose PORT_KIND is not here cannot be used with it.
    PORT_KINDS: ClassVar[frozenset[PortKind]] = frozenset({"veth"})
    # The VNF backend used when the VNF setting is "auto".
    DEFAULT_VNF: ClassVar[str] = "netns"
    # False for switches that cannot split traffic by header fields (rules with a `match`).
    SUPPORTS_MATCH: ClassVar[bool] = True
    # The largest frame (bytes, FCS included) its veth ports carry on the local lab (None: any):
    # a larger frame size or frame mix is refused before anything is deployed.
    LAB_MAX_FRAME_BYTES: ClassVar[int | None] = None
    # The Frame Modifications it applies (vsperf.traffic.framemod), and the tunnels it terminates
    # for the overlay deployments op2p and ptunp.
    FRAME_MODIFICATIONS: ClassVar[frozenset[str]] = frozenset({"vlan"})
    TUNNEL_TYPES: ClassVar[tuple[str, ...]] = ()


    @abstractmethod
    def start(self, netns: str | None) -> None:
        """Start the switch's daemons in namespace `netns` of `self.host` (None: the host's own),
        through the host (`vsperf.host.Host`: its executor, journaled processes and directories).

        On failure, raise DeploymentError; `stop()` is still called afterwards.
        """

    @abstractmethod
    def configure(self, plan: ForwardingPlan) -> None:
        """Create bridge(s), attach `plan.ports` and program `plan.rules`."""

    @abstractmethod
    def stop(self) -> None:
        """Remove everything `start` and `configure` made; safe after a partial start, and twice."""

    def wait_ready(self) -> None:
        """Return once every port forwards; called after the VNFs started, before any traffic.
        Switches whose ports come up asynchronously (vhost-user) wait here."""

    def pids(self) -> dict[str, int]:
        """Processes of the switch by name (e.g. {"ovs-vswitchd": 1234})."""
        return {}

    def bridges(self) -> tuple[str, ...]:
        """The interfaces of the switch's bridges on its host (checked between trials)."""
        return ()

    def use_hugepages(self, memory: HugepageMemory) -> None:
        """Run on hugepages with `memory.allowed_pci` (a testbed's PCI ports); call before `start`."""
        raise DeploymentError(f"vswitch {self.NAME} cannot attach PCI ports bound to DPDK (use ovs-dpdk)")

    def check_alive(self) -> None:
        """Raise DeploymentError("<daemon> (pid N) died") when a daemon of the switch exited."""

    def restart(self) -> None:
        """Restart the switch's forwarding (daemon or bridge) and return once it is configured
        again as `configure` left it; frames sent meanwhile are lost (RFC 2544 reset)."""
        raise DeploymentError(f"vswitch {self.NAME} cannot be restarted by vsperf (no reset test on it)")

    def forget_addresses(self) -> None:
        """Flush the MAC addresses the switch learned (RFC 2889 caching and learning)."""
        raise DeploymentError(f"vswitch {self.NAME} does not learn MAC addresses vsperf can flush")
