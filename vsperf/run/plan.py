"""Turn the selected test cases into a validated plan before anything is created.

Every user error (a test's Parameters of the wrong type, an unknown backend, a missing
prerequisite) surfaces here, so a run either starts cleanly or leaves nothing behind. The plan
holds what each test runs with, built once: its traffic and search (or benchmark) configuration
per frame size (`vsperf.run.kinds.TrafficPlan`), its backends, its collectors; the runner and the
searches take those and never parse the settings again (components built from the test's
settings read their own settings' section).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vsperf.catalog import TestCase
from vsperf.collectors.base import collector_names
from vsperf.config import Settings, traffic_from_settings
from vsperf.config.schema_core import frame_sizes
from vsperf.deploy.build import DeploymentSpec
from vsperf.deploy.jumbo import jumbo_mtu_bytes
from vsperf.deploy.overlay import tunnel_of
from vsperf.deploy.topology import check_frame_modification, parse_deployment
from vsperf.registry import Registries
from vsperf.run.integration import check_integration, integration_settings
from vsperf.run.kinds import TrafficKind, TrafficPlan, configure_traffic
from vsperf.run.mixcheck import check_frame_mixes
from vsperf.traffic import Traffic
from vsperf.traffic.model import PacketSize


@dataclass(frozen=True)
class PlannedTest:
    """A test case with the settings it runs with and its backends resolved."""

    test: TestCase
    settings: Settings
    frames: tuple[TrafficPlan, ...]  # per frame size (TRAFFICGEN_PKT_SIZES), in order
    trafficgen: str  # canonical registry names
    vswitch: str
    vnf: str
    simulated: bool  # the generator simulates the DUT: nothing is deployed
    traffic_only: bool  # --mode trafficgen: nothing is deployed, traffic only
    collectors: tuple[str, ...] = ()  # canonical names of the COLLECTOR setting's collectors, each once
    guest_loopback: str | None = None  # VSPERF's result key: each VNF's GUEST_LOOPBACK (None: no VNF)
    port_locations: bool = False  # the generator drives hardware port locations (a testbed cable's)
    ports_in_one_netns: bool = False  # one process of the generator owns both ports (TRex): one namespace
    loadgen: str | None = None  # load generator of a test with a Load
    hold: str = ""  # --mode trafficgen-off ("off": deploy, hold, no traffic) / -pause ("pause": hold, then traffic)
    test_params: str | None = None  # this run's element of a --test-params sweep (None: no sweep)
    jumbo_mtu_bytes: int | None = None  # VSPERF's jumbo frames: the switch's ports' MTU (vsperf.deploy.jumbo)

    @property
    def deployment(self) -> DeploymentSpec:
        """What the test deploys (nothing when the DUT is simulated)."""
        return DeploymentSpec(
            name=self.test.deployment, vswitch=self.vswitch, vnf=self.vnf, settings=self.settings,
            frame_modification=check_frame_modification(self.test.frame_modification), simulated=self.simulated,
            traffic_only=self.traffic_only, locations=self.port_locations,
            one_gen_netns=self.ports_in_one_netns, steps=self.test.steps is not None,
            jumbo_mtu_bytes=self.jumbo_mtu_bytes,
            tunnel=tunnel_of(self.test.deployment, self.test.tunnel_type, self.test.tunnel_operation, self.settings))

    @property
    def sizes(self) -> tuple[PacketSize, ...]:
        """Frame sizes (bytes) and frame mixes (their names), in order."""
        return tuple(f.traffic.packet_size for f in self.frames)

    @property
    def traffic(self) -> Traffic:
        """The test's traffic at its first frame size (type, direction: the same at every size)."""
        return self.frames[0].traffic

    @property
    def kind(self) -> TrafficKind:
        return self.frames[0].kind

    @property
    def largest(self) -> Traffic:
        """The traffic of the largest frame size: what the deployment's MTU must carry."""
        return max((f.traffic for f in self.frames), key=lambda t: t.largest_frame_bytes)

    @property
    def deploys(self) -> bool:
        """True when the test deploys something on the run's hosts."""
        return self.deployment.deploys is not None


def plan_tests(
    tests: Sequence[TestCase], settings: Settings, registries: Registries, *, traffic_only: bool = False,
    hold: str = "", test_params: str | None = None,
) -> list[PlannedTest]:
    """Validate each test's settings and backend names; raise ConfigError on the first problem.

    `hold` and `test_params` are recorded on every planned test (see PlannedTest).
    """
    planned = []
    for test in tests:
        test_settings = settings.merged(test.parameters, f"test case {test.name}")
        gen = registries.trafficgens.get(test_settings["TRAFFICGEN"])
        simulated = bool(getattr(gen.cls, "SIMULATED", False))
        if not simulated and not traffic_only:  # the lab's plan's needs (a testbed's switch gets it too)
            test_settings = _lab_parallel_streams(test, test_settings)
        test_settings = integration_settings(test, _flow_mode(test, test_settings), simulated=simulated)
        frames = plan_frames(test_settings)
        check_frame_mixes(test.name, frames, gen.cls)
        vswitch = registries.vswitches.resolve(test_settings["VSWITCH"])
        check_integration(test, test_settings, registries.vswitches.get(vswitch).cls, simulated=simulated)
        vnf = str(test_settings["VNF"])
        if vnf != "auto":
            vnf = registries.vnfs.resolve(vnf)
        loadgen = None
        if test.load:
            # --loadgen overrides every test; otherwise the test's own Load tool, else LOADGEN.
            chosen = test_settings["LOADGEN"]
            if test_settings.source("LOADGEN") != "--loadgen":
                chosen = test.load.get("tool") or chosen
            loadgen = registries.loadgens.resolve(str(chosen))
        planned.append(
            PlannedTest(
                test=test, settings=test_settings, frames=frames, test_params=test_params,
                collectors=_collectors(test_settings, registries), guest_loopback=_guest_loopback(test, test_settings),
                trafficgen=gen.name, vswitch=vswitch, vnf=vnf, loadgen=loadgen,
                simulated=simulated, traffic_only=traffic_only, hold=hold,
                port_locations=bool(getattr(gen.cls, "PORT_LOCATIONS", False)),
                ports_in_one_netns=bool(getattr(gen.cls, "PORTS_IN_ONE_NAMESPACE", False)),
                jumbo_mtu_bytes=jumbo_mtu_bytes(test_settings),
            )
        )
    return planned


def deployment_modification(pt: PlannedTest) -> str | None:
    """The Frame Modification the test's switch applies (None: none, or nothing is deployed)."""
    spec = pt.deployment
    return spec.frame_modification if spec.deploys not in (None, "wire") else None


def plan_frames(settings: Mapping[str, Any]) -> tuple[TrafficPlan, ...]:
    """A TrafficPlan per frame size or frame mix of TRAFFICGEN_PKT_SIZES (or TRAFFIC imix), for
    TRAFFIC (a ConfigError names the first bad setting). A step's send_traffic plans its traffic the
    same way."""
    return tuple(configure_traffic(traffic_from_settings(settings, size), settings) for size in frame_sizes(settings))


def _collectors(settings: Settings, registries: Registries) -> tuple[str, ...]:
    """The COLLECTOR setting's collectors, canonical names in order, each once (a name given twice,
    or by two aliases, runs once); UnknownNameError for a name not registered."""
    names: list[str] = []
    for name in collector_names(settings["COLLECTOR"]):
        canonical = registries.collectors.resolve(name)
        if canonical not in names:
            names.append(canonical)
    return tuple(names)


def _guest_loopback(test: TestCase, settings: Settings) -> str | None:
    """VSPERF's guest_loopback result key: GUEST_LOOPBACK of each VNF of the test (None: no VNF);
    past the list's end, its first entry (VSPERF's rule)."""
    vnfs = parse_deployment(test.deployment).vnfs
    raw = settings["GUEST_LOOPBACK"]
    values = [raw] if isinstance(raw, str) else list(raw)
    if not vnfs or not values:
        return None
    return " ".join(str(values[i] if i < len(values) else values[0]) for i in range(vnfs))


# ovs learns MAC addresses only with a NORMAL flow: what RFC 2889's address tests measure.
_LEARNING_TRAFFIC = ("rfc2889_learning", "rfc2889_caching")


def _flow_mode(test: TestCase, settings: Settings) -> Settings:
    """VSWITCH_FLOW_MODE auto: normal for the RFC 2889 address tests, ports otherwise."""
    if settings["VSWITCH_FLOW_MODE"] != "auto":
        return settings
    mode = "normal" if settings["TRAFFIC"]["traffic_type"] in _LEARNING_TRAFFIC else "ports"
    return settings.merged({"VSWITCH_FLOW_MODE": mode}, f"VSWITCH_FLOW_MODE auto for test {test.name}")


def _lab_parallel_streams(test: TestCase, settings: Settings) -> Settings:
    """pvpvN on the local lab (or a testbed: its switch gets the lab's plan) needs N streams to
    split between its VNFs: a lab setting, not the test's definition (VSPERF's pvpv tests send
    one stream)."""
    topology = parse_deployment(test.deployment)
    traffic = settings["TRAFFIC"]
    if topology.layout != "parallel" or traffic["multistream"] >= topology.vnfs:
        return settings
    extra = {"TRAFFIC": {"multistream": topology.vnfs, "stream_type": settings["LAB_PARALLEL_STREAM_TYPE"]}}
    return settings.merged(extra, f"local lab: {test.deployment} needs {topology.vnfs} streams "
                                  f"(LAB_PARALLEL_STREAM_TYPE)")
