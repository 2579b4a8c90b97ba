"""What a test deploys (`DeploymentSpec`, built once by the plan) and the deployment built from it
on the run's hosts: its generator ports (veth pairs on the local lab, a testbed's cables), its
switch and VNF classes from the registries, each constructed with the DUT host it runs on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vsperf.deploy.base import Deployment, NoDeployment, SimulatedDeployment
from vsperf.deploy.deployment import HostDeployment
from vsperf.deploy.hugepages import HugepageConf, uses_hugepages
from vsperf.deploy.overlay import OverlayDeployment, tunnel_builder
from vsperf.deploy.ports import CabledPorts, GenPorts, VethPorts
from vsperf.deploy.topology import check_frame_modification, check_streams, parse_deployment
from vsperf.errors import ConfigError
from vsperf.host.hosts import RunHosts
from vsperf.registry import Registries
from vsperf.traffic import Traffic
from vsperf.traffic.tunnel import TunnelSpec
from vsperf.vnf.base import Vnf
from vsperf.vswitch.base import VSwitch


@dataclass(frozen=True)
class DeploymentSpec:
    """What one test deploys, resolved from its settings before anything is created."""

    name: str  # the test's Deployment (p2p, pvp, pvvpN, pvpvN, clean)
    vswitch: str  # canonical registry name
    vnf: str  # canonical registry name, or "auto" (the switch's DEFAULT_VNF)
    settings: Mapping[str, Any]
    frame_modification: str | None = None  # vsperf.traffic.framemod's, or None (checked)
    simulated: bool = False  # the generator simulates the DUT: nothing is deployed
    traffic_only: bool = False  # --mode trafficgen: the generator ports only ("wire")
    locations: bool = False  # the generator drives hardware port locations (a testbed cable's `location`)
    # One process of the generator owns both ports (TRex): the local lab puts both generator ends
    # in one namespace (`TrafficGenerator.PORTS_IN_ONE_NAMESPACE`).
    one_gen_netns: bool = False
    steps: bool = False  # a step-driven test: the generator ports are made even for `clean`
    tunnel: TunnelSpec | None = None  # op2p and ptunp: what the overlay builds
    jumbo_mtu_bytes: int | None = None  # VSPERF's jumbo frames: the MTU of the switch's ports (vsperf.deploy.jumbo)

    @classmethod
    def from_settings(cls, name: str, settings: Mapping[str, Any], registries: Registries, *,
                      frame_modification: str | None = None) -> DeploymentSpec:
        """Deployment `name` with the switch and VNF the settings name (VSWITCH, VNF), resolved."""
        vnf = str(settings["VNF"])
        return cls(name=name, vswitch=registries.vswitches.resolve(str(settings["VSWITCH"])),
                   vnf=vnf if vnf == "auto" else registries.vnfs.resolve(vnf), settings=settings,
                   frame_modification=check_frame_modification(frame_modification))

    @property
    def deploys(self) -> str | None:
        """What is deployed: the test's deployment, "wire" (the generator's ports, joined back to
        back on the local lab, the user's DUT on a testbed) for traffic only, None when simulated."""
        if self.simulated:
            return None
        return "wire" if self.traffic_only else self.name

    @property
    def vlan_id(self) -> int | None:
        """The VLAN id the switch pushes for Frame Modification vlan (None: none)."""
        if check_frame_modification(self.frame_modification) != "vlan":
            return None
        return int(self.settings["VSWITCH_VLAN_ID"])


def resolve_vnf(spec: DeploymentSpec, registries: Registries, vswitch_cls: type[VSwitch]) -> type[Vnf]:
    """The VNF class of `spec` ("auto": the switch's DEFAULT_VNF), checked for compatibility."""
    name = vswitch_cls.DEFAULT_VNF if spec.vnf == "auto" else spec.vnf
    cls: type[Vnf] = registries.vnfs.get(name).cls
    if cls.PORT_KIND not in vswitch_cls.PORT_KINDS:
        raise ConfigError(
            f"VNF {cls.NAME!r} needs {cls.PORT_KIND} ports, which vswitch {vswitch_cls.NAME!r} cannot attach "
            f"(it takes {', '.join(sorted(vswitch_cls.PORT_KINDS))}); choose another --vnf or --vswitch"
        )
    return cls


def check_vlan_push(vswitch: VSwitch) -> None:
    """The switch's own check that it can push Frame Modification vlan's tag, when it has one
    (`check_vlan_support`: on its host, through its executor); raises what that check raises."""
    check_vlan = getattr(vswitch, "check_vlan_support", None)
    if callable(check_vlan):
        check_vlan()


def gen_ports(spec: DeploymentSpec, hosts: RunHosts) -> GenPorts:
    """The generator ports of `spec` on `hosts`: veth pairs on the local lab, the cables of a testbed."""
    wire = spec.traffic_only or parse_deployment(spec.name).layout == "wire"
    if hosts.is_lab:
        return VethPorts(hosts, wire=wire, queues=int(spec.settings["LAB_PORT_QUEUES"]), one_netns=spec.one_gen_netns)
    return CabledPorts(hosts, wire=wire, locations=spec.locations)


def build_deployment(spec: DeploymentSpec, registries: Registries, hosts: RunHosts | None,
                     traffic: Traffic) -> Deployment:
    """The deployment of `spec` for `traffic` (the largest frame size of the test) on `hosts`."""
    if spec.deploys is None or hosts is None:
        return NoDeployment(spec.name) if spec.traffic_only else SimulatedDeployment(spec.name)
    ports = gen_ports(spec, hosts)
    dut = hosts.dut
    if spec.traffic_only or parse_deployment(spec.name).layout == "wire":
        return HostDeployment(parse_deployment("wire"), ports=ports, dut=dut, traffic=traffic, vswitch=None,
                              release=hosts.release, label_hosts=not hosts.is_lab)
    topology = parse_deployment(spec.name)
    vswitch_cls: type[VSwitch] = registries.vswitches.get(spec.vswitch).cls
    if topology.layout == "overlay":
        if spec.tunnel is None:
            raise ConfigError(f"deployment {spec.name} needs its tunnel (Tunnel Type, Tunnel Operation)")
        vswitch = vswitch_cls(spec.settings, dut)
        return OverlayDeployment(spec.tunnel, tunnel_builder(vswitch, ports.switch_netns), topology=topology,
                                 ports=ports, dut=dut, traffic=traffic, vswitch=vswitch, release=hosts.release,
                                 label_hosts=not hosts.is_lab, jumbo_mtu_bytes=spec.jumbo_mtu_bytes)
    if topology.layout == "parallel" and not vswitch_cls.SUPPORTS_MATCH:
        raise ConfigError(f"deployment {topology.name} needs a switch that matches on headers; "
                          f"{vswitch_cls.NAME} cannot (use --vswitch ovs)")
    check_streams(topology, traffic.multistream)
    vswitch = vswitch_cls(spec.settings, dut)
    if spec.vlan_id is not None:
        check_vlan_push(vswitch)
    vnfs: list[Vnf] = []
    if topology.vnfs:
        vnf_cls = resolve_vnf(spec, registries, vswitch_cls)
        vnfs = [vnf_cls(spec.settings, dut) for _ in range(topology.vnfs)]
    hugepages = None
    if isinstance(ports, CabledPorts) and uses_hugepages(spec.vswitch, spec.settings, ports.cables):
        hugepages = HugepageConf.from_settings(spec.settings)
    return HostDeployment(topology, ports=ports, dut=dut, traffic=traffic, vswitch=vswitch, vnfs=vnfs,
                          vlan_id=spec.vlan_id, hugepages=hugepages, release=hosts.release,
                          label_hosts=not hosts.is_lab, spare_ports=spec.steps, modification=spec.frame_modification,
                          jumbo_mtu_bytes=spec.jumbo_mtu_bytes)


