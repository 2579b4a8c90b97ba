"""The interface every VNF backend implements (a loopback between two switch ports).

One instance per VNF of the topology (pvvp2 creates two). Call order, driven by the deployment:

    vnf = Vnf(settings, host)            # the host it runs on: the switch's (vsperf.host.Host)
    vnf.check_prerequisites()            # before anything exists (on a probe of that host)
    ports = vnf.create(index, mtu, ns)   # the ports the switch will attach, in the switch's
                                         # namespace `ns` (veths exist now; vhost-user sockets
                                         # are only paths)
    vswitch.configure(plan)              # the switch attaches `ports`
    vnf.start()                          # begin forwarding port 0 <-> port 1
    ... traffic; vnf.check_alive() between trials ...
    vnf.stop()                           # stop forwarding, remove what create/start made
"""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

from vsperf.vswitch.base import Component, PortKind, SwitchPort


class Vnf(Component):
    """A VNF backend: forwards every frame arriving on one of its two ports out of the other."""

    ROLE = "vnf"
    # The kind of the ports `create` returns; the vswitch must list it in PORT_KINDS.
    PORT_KIND: ClassVar[PortKind] = "veth"


    @abstractmethod
    def create(self, index: int, mtu_bytes: int, switch_netns: str | None) -> tuple[SwitchPort, SwitchPort]:
        """Create the VNF's two switch-facing ports on `self.host`, in the switch's namespace
        `switch_netns` (None: the host's own), each thing recorded in the run's journal.

        `index` numbers the VNF within the deployment (names: host.names.vnf(index)); port
        names in the returned SwitchPorts are f"vnf{index}.0" and f"vnf{index}.1".
        """

    @abstractmethod
    def start(self) -> None:
        """Begin forwarding between the two ports (they are attached to the switch now)."""

    @abstractmethod
    def stop(self) -> None:
        """Stop and remove everything `create` and `start` made; safe after partial work, and twice."""

    @property
    @abstractmethod
    def ports(self) -> tuple[SwitchPort, ...]:
        """The ports returned by `create` (empty before it)."""

    def pids(self) -> dict[str, int]:
        """Processes of the VNF by name (e.g. {"testpmd vnf0": 1234})."""
        return {}

    @property
    def shell_netns(self) -> str | None:
        """The namespace a command runs in "inside" the VNF (TestSteps' execute_and_wait), None
        when the VNF has no shell vsperf can reach (a guest)."""
        return None

    def check_alive(self) -> None:
        """Raise DeploymentError("<process> (pid N) died") when a process of the VNF exited."""
