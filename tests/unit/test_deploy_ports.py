"""--mode trafficgen on a testbed (vsperf.testbed.wire): the generator host's ports only, the
DUT's ports (the user's DUT) neither checked nor touched, nothing deployed on the DUT host."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from settings_util import make_settings
from test_testbed_deploy import _pt, _session

from vsperf.config import traffic_from_settings
from vsperf.errors import DeploymentError
from vsperf.testbed.checks import checks_dut_ports, dut_problems, dut_tools, gen_tools
from vsperf.testbed.model import Cable, DutPort, GenPortSpec, Testbed
from vsperf.testbed.wire import TestbedWireDeployment, generator_cables


def test_traffic_only_uses_the_generator_ports_and_puts_them_back(tmp_path: Path) -> None:
    session, calls, hosts = _session(tmp_path)
    hosts["dut"].links["ens1"]["master"] = "userbr0"  # the user's DUT: a bridge vsperf did not make
    traffic = traffic_from_settings(make_settings(), 64)
    deployment = TestbedWireDeployment("p2p", session, traffic=traffic)
    with deployment:
        journal = json.loads(session.journal.path.read_text())
        assert {(p["host"], p["interface"]) for p in journal["ports"]} == {("gen", "p0"), ("gen", "p1")}
        assert hosts["gen"].links["p1"]["flags"] == ["UP", "LOWER_UP"]
        ports = deployment.gen_ports
        assert [(p.netns, p.ifname, p.mac, p.peer_mac, p.rx_vlan_id) for p in ports] == [
            (None, "p0", "02:00:00:00:01:01", "02:00:00:00:01:02", None),
            (None, "p1", "02:00:00:00:01:02", "02:00:00:00:01:01", None)]
        assert ports[0].ipv4 == traffic.l3.srcip and ports[1].peer_ipv4 == traffic.l3.srcip
        deployment.check_alive()
        components = deployment.components()
        assert [(c.role, c.details["host"], c.details["interface"], c.details["cabled to"]) for c in components] == [
            ("port", "gen", "p0", "dut:ens1"), ("port", "gen", "p1", "dut:ens2")]
    assert {host for host, _argv in calls} == {"gen"}  # not one command on the DUT host
    assert hosts["dut"].links["ens1"]["master"] == "userbr0"
    assert hosts["gen"].links["p1"]["flags"] == [] and not session.journal.path.exists()


def test_traffic_only_needs_two_generator_interfaces(tmp_path: Path) -> None:
    session, _calls, _hosts = _session(tmp_path)
    hardware = Cable(DutPort("ens1", None, "kernel"), GenPortSpec(None, "192.0.2.50;1;1"))
    assert generator_cables((hardware, *session.testbed.cables)) == list(session.testbed.cables)
    session.testbed = Testbed("lab.yaml", session.testbed.hosts, "dut", "gen", (hardware, session.testbed.cables[0]))
    with pytest.raises(DeploymentError, match="--mode trafficgen needs two cables with an interface on the "
                                              "generator host, the file has 1"):
        TestbedWireDeployment("p2p", session, traffic=traffic_from_settings(make_settings(), 64))


def test_the_preflight_leaves_the_users_dut_alone(tmp_path: Path) -> None:
    traffic_only = [_pt(traffic_only=True, vswitch="ovs")]
    assert not checks_dut_ports(traffic_only) and checks_dut_ports([_pt()])
    assert dut_tools(traffic_only) == {"ps": "procps", "getconf": "libc-bin"}  # only pidstat reads the DUT host
    assert gen_tools([_pt(traffic_only=True, trafficgen="trafgen")])["trafgen"] == "netsniff-ng"
    session, calls, hosts = _session(tmp_path)
    hosts["dut"].links["ens1"]["master"] = "userbr0"
    session.checked.clear()
    for cable in session.testbed.cables:
        session._check(cable, dut_port=False)
    assert sorted(session.checked) == [("gen", "p0"), ("gen", "p1")]
    assert {host for host, _argv in calls} == {"gen"}
    assert dut_problems(session, traffic_only) is None
