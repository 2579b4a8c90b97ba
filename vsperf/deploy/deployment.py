"""The one deployment: generator ports, a switch and VNFs on the run's hosts; torn down whatever
happens.

The same order on the local lab and on a testbed (teardown is the reverse, then the release of
everything the run's journal still lists, so a component that failed half-way leaves nothing
behind either):

1. the generator ports (`vsperf.deploy.ports`: veth pairs the run makes, with the switch's own
   namespace, or a testbed's cables, recorded and brought up);
2. on a testbed's PCI ports, OVS-DPDK's hugepages and device bindings (vsperf.deploy.hugepages);
3. the switch's daemons; 4. each VNF's ports; 5. the switch's bridges, ports and flows (the plan
   of `vsperf.deploy.topology`); 6. each VNF's loopback; 7. the switch waits until it forwards.

The switch and the VNFs run on the DUT host (`vsperf.host.Host`): this machine, or an SSH host.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from vsperf.deploy.base import Deployment
from vsperf.deploy.hugepages import HugepageConf, dpdk_ports, take_over
from vsperf.deploy.ports import CabledPorts, GenPorts
from vsperf.deploy.topology import Topology, forwarding_rules, port_names
from vsperf.errors import CommandError, DeploymentError, UserError
from vsperf.host.host import Host
from vsperf.results.model import ComponentInfo
from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort
from vsperf.traffic.streams import directions
from vsperf.vnf.base import Vnf
from vsperf.vswitch.base import ForwardingPlan, SwitchPort, VSwitch

log = logging.getLogger(__name__)

_L2_OVERHEAD_BYTES = 18  # Ethernet header + FCS: frame size - 18 = IP MTU


def mtu_for(traffic: Traffic, jumbo_mtu_bytes: int | None = None) -> int:
    """IP MTU that carries the test's frames, a mix's largest too (a generator VLAN tag fits in veth's
    allowance); with jumbo frames (vsperf.deploy.jumbo), at least `jumbo_mtu_bytes`."""
    return max(1500, traffic.largest_frame_bytes - _L2_OVERHEAD_BYTES, jumbo_mtu_bytes or 0)


class HostDeployment(Deployment):
    """A topology on the run's hosts (see the module docstring). `vswitch` is None for a wire
    (--mode trafficgen: the generator ports only); `release` puts every host back (the run's
    journal); `label_hosts` names each component's host in the report (on a testbed)."""

    def __init__(self, topology: Topology, *, ports: GenPorts, dut: Host, traffic: Traffic,
                 vswitch: VSwitch | None, vnfs: Sequence[Vnf] = (), vlan_id: int | None = None,
                 hugepages: HugepageConf | None = None, release: Callable[[], object] = lambda: None,
                 label_hosts: bool = False, spare_ports: bool = False, modification: str | None = None,
                 jumbo_mtu_bytes: int | None = None) -> None:
        if len(vnfs) != topology.vnfs:
            raise DeploymentError(f"deployment {topology.name} needs {topology.vnfs} VNFs, got {len(vnfs)}")
        self.name = topology.name
        self.topology = topology
        self.ports = ports
        self.dut = dut
        self.traffic = traffic
        self.vswitch = vswitch
        self.vnfs = list(vnfs)
        self.vlan_id = vlan_id  # Frame Modification vlan: the switch tags frames towards the generator
        self.modification = modification  # the test's Frame Modification (vsperf.traffic.framemod)
        self.jumbo_mtu_bytes = jumbo_mtu_bytes  # VSPERF's jumbo frames: the ports' MTU (None: the frames')
        self.hugepages = hugepages
        self._release = release
        self.label_hosts = label_hosts
        self._vswitch_started = False
        # TestSteps: the generator ports are made even for `clean`, their switch ends left for the
        # steps to attach (vsperf.steps); `phy_ports` are the switch ends, attached or not.
        self.spare_ports = spare_ports
        self.phy_ports: tuple[SwitchPort, ...] = ()
        self.deploy_time_s = 0.0
        self.teardown_time_s = 0.0

    @property
    def gen_ports(self) -> Sequence[GenPort]:
        return self.ports.ports

    def deploy(self) -> None:
        started = time.monotonic()
        try:
            self._deploy()
        except (UserError, DeploymentError):
            raise
        except (CommandError, OSError) as exc:
            where = self.dut.on
            raise DeploymentError(f"deployment {self.name}{where} failed: {exc}") from exc
        self.deploy_time_s = time.monotonic() - started
        switch = self.vswitch.NAME if self.vswitch is not None else "no switch"
        log.info("deployed %s (%s) in %.2f s", self.name, switch, self.deploy_time_s)

    def _deploy(self) -> None:
        mtu = mtu_for(self.traffic, self.jumbo_mtu_bytes)
        phy = self.ports.create(self.traffic, mtu, self.vlan_id,
                                traffic_ports=self.topology.has_traffic_ports or self.spare_ports)
        self.phy_ports = tuple(phy)
        vswitch = self.vswitch
        if vswitch is None:
            return
        if self.hugepages is not None and isinstance(self.ports, CabledPorts):
            # Hugepages reserved and PCI ports bound, each recorded first: the release undoes them.
            vswitch.use_hugepages(take_over(self.dut, dpdk_ports(self.ports.cables), self.hugepages))
        netns = self.ports.switch_netns
        self._vswitch_started = True
        vswitch.start(netns)
        vnf_ports: list[SwitchPort] = []
        for index, vnf in enumerate(self.vnfs):
            vnf_ports += vnf.create(index, mtu, netns)
        by_name = {p.name: p for p in [*phy, *vnf_ports]}
        vswitch.configure(ForwardingPlan(ports=tuple(by_name[n] for n in port_names(self.topology)),
                                         rules=self._rules(), mtu_bytes=mtu))
        for vnf in self.vnfs:
            vnf.start()
        vswitch.wait_ready()
        if isinstance(self.ports, CabledPorts):
            gen_ifs = " and ".join(p.ifname or str(p.location) for p in self.gen_ports)
            log.info("testbed: host %s joins %s with %s; generator ports %s on host %s", self.dut.name,
                     " and ".join(self.ports.labels()), vswitch.NAME, gen_ifs, self.ports.hosts.trafficgen.name)

    def _rules(self) -> tuple[Any, ...]:
        if not self.topology.has_traffic_ports:
            return ()
        both = directions(replace(self.traffic, bidir=True), self.gen_ports)
        return forwarding_rules(self.topology, self.traffic, both[0], both[1], vlan_id=self.vlan_id,
                                modify=self.modification)

    def teardown(self) -> None:
        """Stop the VNFs and the switch, then put every host back (a lost host's things are left
        to the next run, which finds them in the journal)."""
        started = time.monotonic()
        if self._vswitch_started and self.dut.reachable():
            for vnf in reversed(self.vnfs):
                self._quietly(f"stopping VNF {vnf.NAME}", vnf.stop)
            if self.vswitch is not None:
                self._quietly(f"stopping {self.vswitch.NAME}", self.vswitch.stop)
        self._vswitch_started = False
        self._release()
        self.ports.ports = ()
        self.teardown_time_s = time.monotonic() - started

    def _quietly(self, what: str, action: Callable[[], None]) -> None:
        try:
            action()
        except Exception as exc:  # teardown goes on: the release removes the rest
            where = self.dut.on
            log.warning("%s%s failed: %s", what, where, exc)

    def _labelled(self, info: ComponentInfo, **extra: str) -> ComponentInfo:
        host = {"host": self.dut.name} if self.label_hosts else {}
        return replace(info, details={**host, **extra, **info.details})

    def components(self) -> list[ComponentInfo]:
        found = [] if self.vswitch is None else [self._labelled(c) for c in self.vswitch.components()]
        for index, vnf in enumerate(self.vnfs):
            found += [self._labelled(c, index=str(index)) for c in vnf.components()]
        return found + self.ports.components()

    def dut_ports(self) -> tuple[tuple[str | None, str], ...]:
        return self.ports.dut_ports()

    def dut_pids(self) -> dict[str, int]:
        if self.vswitch is None:
            return {}
        pids = dict(self.vswitch.pids())
        for vnf in self.vnfs:
            pids.update(vnf.pids())
        return pids

    def check_alive(self) -> None:
        """The DUT host still answers (HostLostError names it when its connection is gone), the
        switch's bridges are there and its daemons and the VNFs run."""
        if self.vswitch is None:
            self.ports.hosts.trafficgen.executor.run(["true"], timeout_s=10)
            return
        netns = self.ports.switch_netns
        for bridge in self.vswitch.bridges():
            if self.dut.executor.run(["ip", *(("-n", netns) if netns else ()), "link", "show", "dev", bridge],
                                     check=False, timeout_s=10).returncode != 0:
                where = self.dut.prefix
                raise DeploymentError(f"{where}bridge {bridge} is gone")
        self.vswitch.check_alive()
        for vnf in self.vnfs:
            vnf.check_alive()

    # --- DutControl (vsperf.search.measurer): what rfc2544_reset and RFC 2889 do to the DUT ---

    def restart(self) -> None:
        """Restart the switch under test (`VSwitch.restart`): returns when it forwards again."""
        if self.vswitch is None:
            raise DeploymentError("--mode trafficgen has no switch to restart")
        started = time.monotonic()
        self.vswitch.restart()
        log.info("restarted %s in %.3f s", self.vswitch.NAME, time.monotonic() - started)

    def forget_addresses(self) -> None:
        """Flush the MAC addresses the switch under test learned (`VSwitch.forget_addresses`)."""
        if self.vswitch is None:
            raise DeploymentError("--mode trafficgen has no switch whose addresses to flush")
        self.vswitch.forget_addresses()
