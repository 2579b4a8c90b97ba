"""The contract between the runner and a deployed topology (p2p, pvp, pvvpN, pvpvN, clean).

`vsperf.deploy.deployment` builds real deployments on the run's hosts (the local lab, or a
testbed); `SimulatedDeployment` stands in when the traffic generator simulates the device under
test, and `NoDeployment` for `--mode trafficgen` without ports of the run's own.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from vsperf.host.host import Host
from vsperf.lifecycle import Started


@dataclass(frozen=True)
class GenPort:
    """A traffic generator port: an interface inside a network namespace of the run."""

    netns: str | None  # None: the interface lives in the root namespace
    ifname: str
    mac: str
    ipv4: str  # in 198.18.0.0/15
    peer_mac: str = "ff:ff:ff:ff:ff:ff"  # destination MAC frames from this port should carry
    peer_ipv4: str = ""  # destination IPv4 frames from this port should carry
    rx_vlan_id: int | None = None  # VLAN id the switch pushes on frames to this port (None: none)
    # A hardware generator's port location (a testbed cable's `location`, e.g. OTG's "chassis;card;port"):
    # the port has no interface here (`ifname` is ""), only a generator that takes locations drives it.
    location: str | None = None


@dataclass(frozen=True)
class ComponentInfo:
    """A deployed component as the report names it."""

    role: str  # "vswitch", "vnf", "dpdk", "trafficgen", ...
    name: str  # registry name, e.g. "ovs"
    version: str
    details: dict[str, str] = field(default_factory=dict)


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


class Deployment(Started):
    """A topology between the generator ports. Use as a context manager (`Started`): it deploys,
    and teardown always runs, also after a failed deploy."""

    name: str

    @abstractmethod
    def deploy(self) -> None:
        """Create everything; on failure, remove what was created and raise DeploymentError."""

    @abstractmethod
    def teardown(self) -> None:
        """Remove everything this deployment created. Safe to call twice and after a partial deploy."""

    def start(self) -> None:
        """`deploy`: what entering `with deployment:` runs."""
        self.deploy()

    def stop(self) -> None:
        """`teardown`: what leaving `with deployment:` runs."""
        self.teardown()

    @property
    @abstractmethod
    def gen_ports(self) -> Sequence[GenPort]:
        """The traffic generator's ports, in order (port 0 -> port 1 is the forward direction)."""

    def components(self) -> list[ComponentInfo]:
        """What was deployed, with versions, for the report."""
        return []

    def dut_pids(self) -> dict[str, int]:
        """Processes of the device under test by name, for the process statistics collector."""
        return {}

    def dut_ports(self) -> tuple[tuple[str | None, str], ...]:
        """The DUT's interfaces facing the generator ports, in port order, as (netns, ifname):
        their own counters are the DUT's view of the traffic (seeds/003's "Rx on DUT"); empty when
        they cannot be read from here."""
        return ()

    def check_alive(self) -> None:  # optional hook: nothing to check by default
        """Raise DeploymentError when a component of the deployment has died."""


class SimulatedDeployment(Deployment):
    """Nothing is deployed: the traffic generator simulates the device under test."""

    def __init__(self, name: str) -> None:
        self.name = name

    def deploy(self) -> None:
        pass

    def teardown(self) -> None:
        pass

    @property
    def gen_ports(self) -> Sequence[GenPort]:
        return ()

    def components(self) -> list[ComponentInfo]:
        return [ComponentInfo("vswitch", "simulated", "n/a", {"note": "device under test simulated"})]


class NoDeployment(SimulatedDeployment):
    """`--mode trafficgen`: traffic only, nothing deployed; the generator uses its own ports."""

    def components(self) -> list[ComponentInfo]:
        return []
