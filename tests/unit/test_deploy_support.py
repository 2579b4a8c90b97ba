"""Testbed cables whose generator end is a hardware port's location (`trafficgen: {location}`): the
otg generator drives them (vsperf never touches them), vsgen and trafgen are refused in one line,
and TRAFFICGEN_OTG_PORTS must agree with them."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from settings_util import make_settings
from test_testbed_deploy import FakeHost, _link, _pt

from vsperf.config import traffic_from_settings
from vsperf.host.workdir import RunContext
from vsperf.executor import Executor
from vsperf.testbed.checks import gen_ports_problem, used_cables
from vsperf.testbed.deploy import LOCATION_MACS, TestbedDeployment
from vsperf.testbed.journal import PortJournal
from vsperf.testbed.model import Cable, DutPort, GenPortSpec, Testbed, TestbedHost
from vsperf.host.ports import read_port
from vsperf.testbed.session import TestbedSession
from vsperf.vswitch.linux_bridge import LinuxBridgeVSwitch

LOCATIONS = ("192.0.2.50;1;1", "192.0.2.50;1;2")


def _testbed(mixed: bool = False) -> Testbed:
    """ens1/ens2 cabled to chassis ports; `mixed`: a third cable, ens3 to the generator host's p0."""
    cables = [Cable(DutPort(d, None, "kernel"), GenPortSpec(None, loc))
              for d, loc in zip(("ens1", "ens2"), LOCATIONS, strict=True)]
    if mixed:
        cables.append(Cable(DutPort("ens3", None, "kernel"), GenPortSpec("p0", None)))
    return Testbed("lab.yaml", (TestbedHost("dut"), TestbedHost("gen")), "dut", "gen", tuple(cables))


def test_location_cables_serve_otg_and_are_refused_for_interface_generators() -> None:
    testbed = _testbed()
    assert used_cables(testbed.cables) == []
    assert used_cables(testbed.cables, locations=True) == list(testbed.cables)
    otg = _pt(trafficgen="otg")
    assert gen_ports_problem(testbed, otg, used_cables(testbed.cables, locations=True)) == ""
    for name in ("vsgen", "trafgen"):
        why = gen_ports_problem(testbed, _pt(trafficgen=name), used_cables(testbed.cables))
        assert why == (f"traffic generator {name} needs two DUT ports cabled to interfaces of host gen, testbed "
                       "lab.yaml has 0 (hardware port locations 192.0.2.50;1;1, 192.0.2.50;1;2 need --trafficgen otg)")
    # interface cables first: one location cable and one interface cable are not two interfaces
    mixed = _testbed(mixed=True)
    assert [c.dut.interface for c in used_cables(mixed.cables)] == ["ens3"]
    assert [c.dut.interface for c in used_cables(mixed.cables, locations=True)] == ["ens1", "ens2"]
    # TRAFFICGEN_OTG_PORTS (or VSPERF's Ixia settings) naming other ports than the cables
    other = _pt(trafficgen="otg", settings=make_settings(TRAFFICGEN_OTG_PORTS=["10.0.0.1;1;1", "10.0.0.1;1;2"]))
    assert "differ from the testbed's cabled generator ports" in gen_ports_problem(testbed, other, testbed.cables)
    same = _pt(trafficgen="otg", settings=make_settings(TRAFFICGEN_IXIA_HOST="192.0.2.50", TRAFFICGEN_IXIA_CARD="1",
                                                        TRAFFICGEN_IXIA_PORT1="1", TRAFFICGEN_IXIA_PORT2="2"))
    assert gen_ports_problem(testbed, same, testbed.cables) == ""
    partial = _pt(trafficgen="otg", settings=make_settings(TRAFFICGEN_IXIA_HOST="192.0.2.50"))
    assert "TRAFFICGEN_IXIA_CARD" in gen_ports_problem(testbed, partial, testbed.cables)


def test_a_deployment_on_location_cables_leaves_the_generators_ports_alone(tmp_path: Path) -> None:
    calls: list[tuple[str, list[str]]] = []
    hosts = {"dut": FakeHost("dut", {"ens1": _link("ens1", "02:00:00:00:00:01"),
                                     "ens2": _link("ens2", "02:00:00:00:00:02")}, calls),
             "gen": FakeHost("gen", {}, calls)}
    executors = cast(dict[str, Executor], hosts)
    session = TestbedSession(_testbed(), executors, PortJournal.create(tmp_path, "abc123"))
    for ifname in ("ens1", "ens2"):
        session.checked[("dut", ifname)] = read_port(executors["dut"], ifname)
    settings = make_settings()
    vswitch = LinuxBridgeVSwitch(settings, RunContext("abc123", tmp_path, tmp_path, session.dut))
    traffic = traffic_from_settings(settings, 64)
    deployment = TestbedDeployment("p2p", session, run_id="abc123", traffic=traffic, vswitch=vswitch,
                                   gen_locations=True)
    with deployment:
        ports = deployment.gen_ports
        assert [(p.ifname, p.location, p.mac, p.peer_mac) for p in ports] == [
            ("", LOCATIONS[0], LOCATION_MACS[0], LOCATION_MACS[1]),
            ("", LOCATIONS[1], LOCATION_MACS[1], LOCATION_MACS[0])]
        assert hosts["dut"].links["ens1"]["flags"] == ["UP", "LOWER_UP"]
        cabled = {c.name: c.details["cabled to"] for c in deployment.components() if c.role == "port"}
        assert cabled == {"port 0": LOCATIONS[0], "port 1": LOCATIONS[1]}
    assert [argv for host, argv in calls if host == "gen"] == []  # the chassis' ports are the controller's
    assert hosts["dut"].links["ens1"]["flags"] == [] and not session.journal.path.exists()
