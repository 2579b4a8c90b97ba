"""`--mode trafficgen` on a testbed: traffic only, nothing deployed on the DUT host.

VSPERF's traffic-only mode sends the TRAFFIC setting through whatever device the generator's
ports are cabled to: the user's DUT, configured by the user. On a testbed the generator ports
are the generator host's ends of the first two cables with an interface there; vsperf records
their state, brings them up (MTU for the frame size) and puts them back afterwards, exactly as
for a deployment (`vsperf.testbed.deploy`). The DUT host's ports are the user's: vsperf neither
checks nor touches them (the preflight skips them, `TestbedSession.open(dut_ports=False)`), and
runs nothing on the DUT host for the deployment.
"""

from __future__ import annotations

from collections.abc import Sequence

from vsperf.deployment import ComponentInfo, Deployment, GenPort
from vsperf.errors import CommandError, DeploymentError
from vsperf.lab.deploy import mtu_for
from vsperf.testbed.model import Cable
from vsperf.testbed.ports import interface_mac
from vsperf.testbed.session import TestbedSession
from vsperf.traffic import Traffic

NOTE = "traffic only (--mode trafficgen): the generator ports' cables reach the user's DUT, which vsperf does not touch"


def generator_cables(cables: Sequence[Cable]) -> list[Cable]:
    """The cables whose generator ends carry the traffic: the first two with an interface on the
    generator host (their DUT ends do not matter: the DUT is the user's)."""
    return [c for c in cables if c.trafficgen.interface][:2]


class TestbedWireDeployment(Deployment):
    """The generator host's ends of two cables as the generator ports, nothing deployed."""

    __test__ = False

    def __init__(self, name: str, session: TestbedSession, *, traffic: Traffic) -> None:
        cables = generator_cables(session.testbed.cables)
        if len(cables) < 2:
            raise DeploymentError(f"testbed {session.testbed.path}: --mode trafficgen needs two cables with an "
                                  f"interface on the generator host, the file has {len(cables)}")
        self.name = name
        self.session = session
        self.traffic = traffic
        self.cables = cables
        self._ports: tuple[GenPort, ...] = ()

    @property
    def _gen_host(self) -> str:
        return self.session.testbed.trafficgen_host

    def deploy(self) -> None:
        ifnames = [str(c.trafficgen.interface) for c in self.cables]
        try:
            for ifname in ifnames:  # recorded in the journal first: teardown (or the next run) puts it back
                self.session.use_port(self._gen_host, ifname, mtu_bytes=mtu_for(self.traffic))
            macs = [interface_mac(self.session.trafficgen, ifname) for ifname in ifnames]
        except CommandError as exc:
            raise DeploymentError(f"host {self._gen_host}: preparing the generator ports: {exc}") from exc
        ips = (self.traffic.l3.srcip, self.traffic.l3.dstip)
        self._ports = tuple(GenPort(netns=None, ifname=ifname, mac=macs[i], ipv4=ips[i], peer_mac=macs[1 - i],
                                    peer_ipv4=ips[1 - i]) for i, ifname in enumerate(ifnames))

    def teardown(self) -> None:
        """Put the generator ports back as they were (a lost host's are left to the next run)."""
        self.session.restore()
        self._ports = ()

    @property
    def gen_ports(self) -> Sequence[GenPort]:
        return self._ports

    def check_alive(self) -> None:
        """The generator host still answers (HostLostError names it when its connection is gone)."""
        self.session.trafficgen.run(["true"], timeout_s=10)

    def components(self) -> list[ComponentInfo]:
        """The generator ports and the cables they are on, for the report."""
        return [ComponentInfo("port", f"port {i}", "user's DUT", {
            "host": self._gen_host, "interface": str(c.trafficgen.interface),
            "cabled to": f"{self.session.testbed.dut_host}:{c.dut.label}", "note": NOTE})
            for i, c in enumerate(self.cables)]
