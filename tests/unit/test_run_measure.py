"""One test's measurement (vsperf.run.measure): the headline metric of every traffic type, VSPERF's
guest_loopback key (planned by vsperf.run.plan), where the report says the generator ran, and a load
on a simulated DUT."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any, cast

import pytest

from vsperf.backends import build_registries
from vsperf.catalog import Catalog
from vsperf.config import load_settings
from vsperf.config.schema_core import TRAFFIC_TYPES
from vsperf.deploy.base import SimulatedDeployment
from vsperf.run.kinds import TRAFFIC_KINDS
from vsperf.run.measure import Measurement, _collector_hosts, _generator_details, _load
from vsperf.run.plan import PlannedTest, plan_tests
from vsperf.traffic.ports import GenPort


def _planned(test: str, params: str = "", trafficgen: str = "dummy") -> PlannedTest:
    settings = load_settings(env={}, test_params=f"TRAFFICGEN={trafficgen}{params}")
    (pt,) = plan_tests(Catalog.load().select([test]), settings, build_registries())
    return pt


def test_every_traffic_type_has_its_headline_metric() -> None:
    headline_keys = {name: kind.headline for name, kind in TRAFFIC_KINDS.items()}
    assert set(headline_keys) == set(TRAFFIC_TYPES)  # one table: no type without its summary line
    assert headline_keys["rfc2544_throughput"] == "throughput_rx_fps" and headline_keys["rfc2544_back2back"] == \
        "b2b_frames"


@pytest.mark.parametrize(("test", "params", "loopback"), [
    ("phy2phy_tput", "", None),  # no VNF: no key
    ("pvp_tput", "", "linux_bridge"),  # the default
    ("pvvp_tput", ";GUEST_LOOPBACK=['testpmd', 'l2fwd']", "testpmd l2fwd"),  # one per VNF
    ("pvvp_tput", ";GUEST_LOOPBACK=['testpmd']", "testpmd testpmd"),  # past the list's end: its first (VSPERF)
    ("pvpv_tput", ";GUEST_LOOPBACK=['l2fwd', 'testpmd', 'clean']", "l2fwd testpmd"),
])
def test_guest_loopback_is_vsperfs_key(test: str, params: str, loopback: str | None) -> None:
    assert _planned(test, params).guest_loopback == loopback


def _measurement(hosts: Any) -> Measurement:
    return cast(Measurement, SimpleNamespace(hosts=hosts, registries=build_registries()))


PORTS = (GenPort(None, "eth1", "02:00:00:00:00:01", "198.18.0.1"),
         GenPort(None, "eth2", "02:00:00:00:00:02", "198.18.1.1"))


class Cabled(SimulatedDeployment):
    """A deployment whose generator ports are `ports`."""

    def __init__(self, ports: tuple[GenPort, ...]) -> None:
        super().__init__("p2p")
        self.ports = ports

    @property
    def gen_ports(self) -> Sequence[GenPort]:
        return self.ports


def test_the_report_names_the_generators_host_only_on_a_testbed() -> None:
    testbed = SimpleNamespace(is_lab=False, trafficgen=SimpleNamespace(name="tgen"))
    assert _generator_details(_measurement(testbed), Cabled(PORTS)) == {"host": "tgen"}
    lab = SimpleNamespace(is_lab=True, trafficgen=SimpleNamespace(name="local"))
    assert _generator_details(_measurement(lab), Cabled(PORTS)) == {}
    assert _generator_details(_measurement(None), Cabled(PORTS)) == {}  # nothing deployed
    # a hardware generator's port locations are not interfaces of a host
    located = tuple(GenPort(None, "", p.mac, p.ipv4, location=f"10.0.0.1;1;{i}") for i, p in enumerate(PORTS))
    assert _generator_details(_measurement(testbed), Cabled(located)) == {}


def test_the_collectors_read_a_testbeds_hosts_only_for_a_test_that_deploys_there() -> None:
    dut, gen = SimpleNamespace(executor="dut-executor"), SimpleNamespace(executor="gen-executor")
    testbed = SimpleNamespace(is_lab=False, dut=dut, trafficgen=gen)
    deploying = _planned("phy2phy_tput", trafficgen="vsgen")
    assert deploying.deploys
    assert _collector_hosts(deploying, _measurement(testbed)) == ("dut-executor", "gen-executor")
    # the local lab: this machine; a simulated DUT on a testbed has no host: this machine too
    assert _collector_hosts(deploying, _measurement(SimpleNamespace(is_lab=True, dut=dut, trafficgen=gen))) == \
        (None, None)
    assert _collector_hosts(_planned("phy2phy_tput"), _measurement(testbed)) == (None, None)
    assert _collector_hosts(deploying, _measurement(None)) == (None, None)


def test_a_load_on_a_simulated_dut_is_noted_not_applied(caplog: pytest.LogCaptureFixture) -> None:
    pt = _planned("phy2phy_cpu_load")
    assert pt.test.load and pt.simulated
    with _load(pt, _measurement(None)) as (components, pids):
        ((component,), pids_seen) = (components, pids)
    assert (component.role, component.name, component.details) == (
        "loadgen", "none", {"note": "not applied to a simulated DUT"})
    assert pids_seen == {}
    assert "Load" in caplog.text and "not applied: the DUT is simulated" in caplog.text
    with _load(_planned("phy2phy_cont"), _measurement(None)) as (none, no_pids):
        assert none == [] and no_pids == {}  # a test without a Load

