"""The contract between the runner and a deployed topology (p2p, pvp, pvvpN, pvpvN, clean).

`vsperf.deploy.deployment` builds real deployments on the run's hosts (the local lab, or a
testbed); `SimulatedDeployment` stands in when the traffic generator simulates the device under
test, and `NoDeployment` for `--mode trafficgen` without ports of the run's own.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

from vsperf.lifecycle import Started
from vsperf.results.model import ComponentInfo
from vsperf.traffic.ports import GenPort


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
