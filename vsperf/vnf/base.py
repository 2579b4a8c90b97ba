"""The interface every VNF backend implements (a loopback between two switch ports).

One instance per VNF of the topology (pvvp2 creates two). Call order, driven by the deployment:

    vnf.check_prerequisites()            # before anything exists
    ports = vnf.create(lab, index, mtu)  # the ports the switch will attach (veths exist now;
                                         # vhost-user sockets are only paths)
    vswitch.configure(plan)              # the switch attaches `ports`
    vnf.start()                          # begin forwarding port 0 <-> port 1
    ... traffic; vnf.check_alive() between trials ...
    vnf.stop()                           # stop forwarding, remove what create/start made
"""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

from vsperf.deployment import Component
from vsperf.lab.env import LabEnv
from vsperf.vswitch.base import PortKind, SwitchPort


class Vnf(Component):
    """A VNF backend: forwards every frame arriving on one of its two ports out of the other."""

    ROLE = "vnf"
    # The kind of the ports `create` returns; the vswitch must list it in PORT_KINDS.
    PORT_KIND: ClassVar[PortKind] = "veth"


    @abstractmethod
    def create(self, lab: LabEnv, index: int, mtu_bytes: int) -> tuple[SwitchPort, SwitchPort]:
        """Create the VNF's two switch-facing ports (recording everything in `lab`).

        `index` numbers the VNF within the deployment (names: lab.names.vnf_*(index)); port
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

    def check_alive(self) -> None:
        """Raise DeploymentError("<process> (pid N) died") when a process of the VNF exited."""
