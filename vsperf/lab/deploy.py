"""The local lab's Deployment: generator ports, a switch, VNFs; torn down whatever happens.

Order of deploy (teardown is the reverse, then a sweep of everything the state file still
lists, so a component that failed half-way leaves nothing behind either):

1. the run's state file (/run/vsperf/<run_id>/state.json) names its owner, this process;
2. the switch namespace, then per generator port a namespace and a veth pair into the switch
   namespace (addresses from 198.18.0.0/15, static neighbours, ARP and IPv6 off);
3. the switch's daemons; 4. each VNF's ports; 5. the switch's bridges, ports and flows;
6. each VNF's loopback.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from vsperf.context import RunContext
from vsperf.deployment import ComponentInfo, Deployment, GenPort
from vsperf.errors import CommandError, ConfigError, DeploymentError, UserError
from vsperf.lab import netdev
from vsperf.lab.env import LabEnv
from vsperf.lab.names import LabNames
from vsperf.lab.release import release_all
from vsperf.lab.state import DEFAULT_STATE_ROOT, RunState
from vsperf.lab.streams import directions
from vsperf.lab.topology import (
    Topology,
    check_frame_modification,
    check_streams,
    forwarding_rules,
    parse_deployment,
    port_names,
)
from vsperf.registry import Registries
from vsperf.traffic import Traffic
from vsperf.vnf.base import Vnf
from vsperf.vswitch.base import ForwardingPlan, SwitchPort, VSwitch

log = logging.getLogger(__name__)

GEN_PREFIX_LEN = 15  # generator addresses share 198.18.0.0/15
_L2_OVERHEAD_BYTES = 18  # Ethernet header + FCS: frame size - 18 = IP MTU


def check_vlan_push(vswitch: VSwitch) -> None:
    """The switch's own check that it can push Frame Modification vlan's tag, when it has one
    (`check_vlan_support`: on its host, through its executor); raises what that check raises."""
    check_vlan = getattr(vswitch, "check_vlan_support", None)
    if callable(check_vlan):
        check_vlan()


def mtu_for(traffic: Traffic) -> int:
    """IP MTU that carries the test's frames (a generator VLAN tag fits in veth's allowance)."""
    return max(1500, traffic.frame_size_bytes - _L2_OVERHEAD_BYTES)


class LabDeployment(Deployment):
    """A real topology of namespaces, veths, a switch and VNFs on this machine."""

    def __init__(
        self,
        topology: Topology,
        *,
        ctx: RunContext,
        traffic: Traffic,
        vswitch: VSwitch,
        vnfs: Sequence[Vnf],
        vlan_id: int | None,
        state_root: Path = DEFAULT_STATE_ROOT,
        port_queues: int = 1,
        one_gen_netns: bool = False,
    ) -> None:
        self.name = topology.name
        self.port_queues = port_queues  # rx/tx queues of the generator ports' veths (LAB_PORT_QUEUES)
        # Both generator ends in namespace gen_netns(0): a generator whose one process owns both ports
        # (`TrafficGenerator.PORTS_IN_ONE_NAMESPACE`, TRex) opens them from there.
        self.one_gen_netns = one_gen_netns
        self.topology = topology
        self.ctx = ctx
        self.traffic = traffic
        self.vswitch = vswitch
        self.vnfs = list(vnfs)
        self.vlan_id = vlan_id
        self.state_root = state_root
        self.names = LabNames(ctx.run_id)
        self._state: RunState | None = None
        self._lab: LabEnv | None = None
        self._ports: tuple[GenPort, ...] = ()
        self._vswitch_started = False
        self.deploy_time_s = 0.0
        self.teardown_time_s = 0.0

    @property
    def gen_ports(self) -> Sequence[GenPort]:
        return self._ports

    @property
    def lab(self) -> LabEnv:
        """The deployed lab's handle (its state file records what is started through it: a
        test's load generator too); DeploymentError before `deploy` or after `teardown`."""
        if self._lab is None:
            raise DeploymentError(f"deployment {self.name} is not deployed")
        return self._lab

    def deploy(self) -> None:
        started = time.monotonic()
        try:
            self._deploy()
        except (UserError, DeploymentError):
            raise
        except (CommandError, OSError) as exc:
            raise DeploymentError(f"deployment {self.name} failed: {exc}") from exc
        except Exception as exc:
            # pyroute2 raises NetlinkError (an OSError) but also its own exception types.
            if type(exc).__module__.startswith("pyroute2"):
                raise DeploymentError(f"deployment {self.name} failed: {exc}") from exc
            raise
        self.deploy_time_s = time.monotonic() - started
        switch = self.vswitch.NAME if self.topology.has_switch else "no switch"
        log.info("deployed %s (%s) in %.2f s", self.name, switch, self.deploy_time_s)

    def _deploy(self) -> None:
        state = RunState(self.ctx.run_id, root=self.state_root)
        if state.path.exists():
            # An earlier deployment of this run could not remove everything: keep those
            # records, or the next cleanup would never learn about them.
            previous = RunState.load(state.path)
            state = RunState(self.ctx.run_id, root=self.state_root, resources=previous.resources())
        self._state = state
        state.save()
        lab = self._lab = LabEnv(self.ctx, self.names, state)
        mtu = mtu_for(self.traffic)
        executor = self.ctx.executor
        if not self.topology.has_switch:
            self._create_wire(state, mtu)
            return
        netdev.create_netns(state, executor, self.names.switch_netns)
        phy: list[SwitchPort] = []
        if self.topology.has_traffic_ports:
            phy = self._create_gen_ports(state, mtu)
        self.vswitch.start(lab)
        self._vswitch_started = True
        vnf_ports: list[SwitchPort] = []
        for index, vnf in enumerate(self.vnfs):
            vnf_ports += vnf.create(lab, index, mtu)
        ports = {p.name: p for p in [*phy, *vnf_ports]}
        plan = ForwardingPlan(
            ports=tuple(ports[n] for n in port_names(self.topology)),
            rules=self._rules(),
            mtu_bytes=mtu,
        )
        self.vswitch.configure(plan)
        for vnf in self.vnfs:
            vnf.start()
        self.vswitch.wait_ready()

    def _create_gen_ports(self, state: RunState, mtu: int) -> list[SwitchPort]:
        names, executor = self.names, self.ctx.executor
        ends: list[netdev.LinkEnd] = []
        for i in (0, 1):
            ns = (netdev.create_netns(state, executor, names.gen_netns(i)) if i == 0 or not self.one_gen_netns
                  else ends[0].netns)
            gen_end, _ = netdev.create_veth(
                state, names.gen_if(i), ns, names.phy_if(i), names.switch_netns, mtu_bytes=mtu,
                queues=self.port_queues,
            )
            ends.append(gen_end)
        self._set_gen_ports(ends)
        return [SwitchPort(f"phy{i}", "veth", "phy", ifname=names.phy_if(i)) for i in (0, 1)]

    def _create_wire(self, state: RunState, mtu: int) -> None:
        """The generator's two ports joined back to back by one veth pair: no switch at all."""
        names, executor = self.names, self.ctx.executor
        ns0 = netdev.create_netns(state, executor, names.gen_netns(0))
        ns1 = ns0 if self.one_gen_netns else netdev.create_netns(state, executor, names.gen_netns(1))
        ends = netdev.create_veth(state, names.gen_if(0), ns0, names.gen_if(1), ns1, mtu_bytes=mtu,
                                  queues=self.port_queues)
        self._set_gen_ports(list(ends))

    def _set_gen_ports(self, ends: list[netdev.LinkEnd]) -> None:
        ips = (self.traffic.l3.srcip, self.traffic.l3.dstip)
        ports = []
        for i, peer in ((0, 1), (1, 0)):
            netdev.configure_host(
                ends[i].ifname, ends[i].netns, ips[i], GEN_PREFIX_LEN, ips[peer], ends[peer].mac
            )
            ports.append(
                GenPort(
                    netns=ends[i].netns,
                    ifname=ends[i].ifname,
                    mac=ends[i].mac,
                    ipv4=ips[i],
                    peer_mac=ends[peer].mac,
                    peer_ipv4=ips[peer],
                    rx_vlan_id=self.vlan_id,
                )
            )
        self._ports = tuple(ports)

    def _rules(self) -> tuple[Any, ...]:
        if not self.topology.has_traffic_ports:
            return ()
        both = directions(replace(self.traffic, bidir=True), self._ports)
        return forwarding_rules(self.topology, self.traffic, both[0], both[1], vlan_id=self.vlan_id)

    def teardown(self) -> None:
        started = time.monotonic()
        for vnf in reversed(self.vnfs):
            self._quietly(f"stopping VNF {vnf.NAME}", vnf.stop)
        if self._vswitch_started or (self._state is not None and self.topology.has_switch):
            self._quietly(f"stopping {self.vswitch.NAME}", self.vswitch.stop)
        self._vswitch_started = False
        if self._state is not None:
            removed, errors = release_all(self._state)
            if removed:
                log.debug("teardown of %s removed: %s", self.name, ", ".join(removed))
            for error in errors:
                log.error("teardown of %s left %s (vsperf removes it at its next start)", self.name, error)
            self._state = None
        self._lab = None
        self._ports = ()
        self.teardown_time_s = time.monotonic() - started

    @staticmethod
    def _quietly(what: str, action: Any) -> None:
        try:
            action()
        except Exception as exc:  # teardown goes on: the resource sweep removes the rest
            log.warning("%s failed: %s", what, exc)

    def components(self) -> list[ComponentInfo]:
        if not self.topology.has_switch:
            note = "traffic only (--mode trafficgen): the generator ports are joined back to back"
            return [ComponentInfo("port", "wire", "veth pair", {"note": note})]
        found = self.vswitch.components()
        for index, vnf in enumerate(self.vnfs):
            for info in vnf.components():
                found.append(replace(info, details={**info.details, "index": str(index)}))
        return found

    def dut_ports(self) -> tuple[tuple[str | None, str], ...]:
        if not (self.topology.has_switch and self.topology.has_traffic_ports and self._ports):
            return ()
        return tuple((self.names.switch_netns, self.names.phy_if(i)) for i in (0, 1))

    def dut_pids(self) -> dict[str, int]:
        if not self.topology.has_switch:
            return {}
        pids = dict(self.vswitch.pids())
        for vnf in self.vnfs:
            pids.update(vnf.pids())
        return pids

    # --- DutControl (vsperf.search.measurer): what rfc2544_reset and RFC 2889 do to the DUT ---

    def restart(self) -> None:
        """Restart the switch under test (`VSwitch.restart`): returns when it forwards again."""
        if not self.topology.has_switch:
            raise DeploymentError("--mode trafficgen has no switch to restart")
        started = time.monotonic()
        self.vswitch.restart()
        log.info("restarted %s in %.3f s", self.vswitch.NAME, time.monotonic() - started)

    def forget_addresses(self) -> None:
        """Flush the MAC addresses the switch under test learned (`VSwitch.forget_addresses`)."""
        if not self.topology.has_switch:
            raise DeploymentError("--mode trafficgen has no switch whose addresses to flush")
        self.vswitch.forget_addresses()

    def check_alive(self) -> None:
        if self.topology.has_switch:
            self.vswitch.check_alive()
        for vnf in self.vnfs:
            vnf.check_alive()


def resolve_vnf(settings: Mapping[str, Any], registries: Registries, vswitch_cls: type[VSwitch]) -> type[Vnf]:
    """The VNF class for setting VNF ("auto": the switch's DEFAULT_VNF), checked for compatibility."""
    name = str(settings["VNF"])
    if name == "auto":
        name = vswitch_cls.DEFAULT_VNF
    cls: type[Vnf] = registries.vnfs.get(name).cls
    if cls.PORT_KIND not in vswitch_cls.PORT_KINDS:
        raise ConfigError(
            f"VNF {cls.NAME!r} needs {cls.PORT_KIND} ports, which vswitch {vswitch_cls.NAME!r} cannot attach "
            f"(it takes {', '.join(sorted(vswitch_cls.PORT_KINDS))}); choose another --vnf or --vswitch"
        )
    return cls


def build_deployment(
    name: str,
    *,
    settings: Mapping[str, Any],
    registries: Registries,
    ctx: RunContext,
    traffic: Traffic,
    frame_modification: str | None,
    state_root: Path = DEFAULT_STATE_ROOT,
) -> LabDeployment:
    """See `vsperf.lab.build_deployment`."""
    topology = parse_deployment(name)
    modification = check_frame_modification(frame_modification)
    vswitch_cls: type[VSwitch] = registries.vswitches.get(str(settings["VSWITCH"])).cls
    if topology.layout == "parallel" and not vswitch_cls.SUPPORTS_MATCH:
        raise ConfigError(f"deployment {topology.name} needs a switch that matches on headers; "
                          f"{vswitch_cls.NAME} cannot (use --vswitch ovs)")
    check_streams(topology, traffic.multistream)
    vswitch = vswitch_cls(settings, ctx)
    vlan_id: int | None = None
    if modification == "vlan":
        vlan_id = int(settings["VSWITCH_VLAN_ID"])
        check_vlan_push(vswitch)
    vnfs: list[Vnf] = []
    if topology.vnfs:
        vnf_cls = resolve_vnf(settings, registries, vswitch_cls)
        vnfs = [vnf_cls(settings, ctx) for _ in range(topology.vnfs)]
    generator = registries.trafficgens.get(str(settings["TRAFFICGEN"])).cls
    return LabDeployment(
        topology, ctx=ctx, traffic=traffic, vswitch=vswitch, vnfs=vnfs, vlan_id=vlan_id, state_root=state_root,
        port_queues=int(settings["LAB_PORT_QUEUES"]),
        one_gen_netns=bool(getattr(generator, "PORTS_IN_ONE_NAMESPACE", False)),
    )
