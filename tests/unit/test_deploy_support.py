"""vsperf.deploy.support: what the run's hosts can deploy, answered before anything is created, each
answer one line naming the problem and the fix: the local lab (this machine, root, its kernel, the
benchmarking addresses) and a testbed (its layouts, its cables' generator ends and PCI ports)."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fake_machine import cabled_hosts, lab_hosts
from settings_util import make_settings

from vsperf.backends import build_registries
from vsperf.config import traffic_from_settings
from vsperf.deploy.build import DeploymentSpec
from vsperf.deploy.support import (
    deployment_problem,
    gen_ports_problem,
    jumbo_problem,
    lab_addresses_problem,
    lab_problem,
    state_root_problem,
)
from vsperf.host.hosts import RunHosts
from vsperf.testbed.model import Cable, DutPort, GenPortSpec, Testbed, TestbedHost

REGS = build_registries()
LOCATIONS = ("192.0.2.50;1;1", "192.0.2.50;1;2")


def _spec(name: str = "p2p", vswitch: str = "linux-bridge", vnf: str = "auto", *, traffic_only: bool = False,
          **settings: Any) -> DeploymentSpec:
    return DeploymentSpec(name, vswitch, vnf, make_settings(settings), traffic_only=traffic_only)


def _problem(hosts: RunHosts, spec: DeploymentSpec, trafficgen: str = "vsgen") -> str:
    supports_match = REGS.vswitches.get(spec.vswitch).cls.SUPPORTS_MATCH
    traffic = traffic_from_settings(spec.settings, 64)
    return deployment_problem(spec, traffic, REGS.trafficgens.get(trafficgen).cls, hosts, supports_match=supports_match)


def _located(mixed: bool = False) -> Testbed:
    """ens1/ens2 cabled to chassis ports; `mixed`: a third cable, ens3 to the generator host's p0."""
    cables = [Cable(DutPort(d, None, "kernel"), GenPortSpec(None, loc))
              for d, loc in zip(("ens1", "ens2"), LOCATIONS, strict=True)]
    if mixed:
        cables.append(Cable(DutPort("ens3", None, "kernel"), GenPortSpec("p0", None)))
    return Testbed("lab.yaml", (TestbedHost("dut"), TestbedHost("gen")), "dut", "gen", tuple(cables))


# --- a testbed --------------------------------------------------------------------------------------


def test_what_a_testbed_deploys(tmp_path: Path) -> None:
    hosts, _dut, _gen = cabled_hosts(tmp_path)
    streams = {"TRAFFIC": {"multistream": 2}}
    for spec in (_spec(), _spec(vswitch="ovs"), _spec(vswitch="ovs-dpdk"), _spec(vswitch="none"),
                 # the lab's chains of VNFs (pvvpN) and VNFs side by side (pvpvN: header matches, >= N streams)
                 _spec("pvvp", vnf="netns"), _spec("pvvp", "ovs"), _spec("pvpv", "ovs", "netns", **streams),
                 _spec("pvp"), _spec("pvp", "ovs-dpdk", "qemu-vhost-user"), _spec("pvp", "ovs", "qemu-virtio-net")):
        assert _problem(hosts, spec) == "", spec
    assert _problem(hosts, _spec("pvpv", vnf="netns", **streams)) == (
        "deployment pvpv splits streams between VNFs by header fields, which linux-bridge cannot do: "
        "use --vswitch ovs")
    assert "set TRAFFIC multistream >= 2 (it is 0)" in _problem(hosts, _spec("pvpv", "ovs", "netns"))
    assert _problem(hosts, _spec("clean")) == "deployment clean (only p2p, pvp, pvvpN, pvpvN deploy on a testbed)"


def test_traffic_only_on_a_testbed_needs_a_generator_of_interfaces(tmp_path: Path) -> None:
    hosts, _dut, _gen = cabled_hosts(tmp_path)
    for generator in ("vsgen", "trafgen", "trex"):  # trex: its server on the generator host's interfaces
        assert _problem(hosts, _spec(traffic_only=True), generator) == ""
    assert _problem(hosts, _spec(traffic_only=True), "otg") == \
        "--mode trafficgen with otg (on a testbed: --trafficgen vsgen, trafgen, trex)"


def test_location_cables_serve_otg_and_are_refused_for_interface_generators(tmp_path: Path) -> None:
    hosts, _dut, _gen = cabled_hosts(tmp_path, _located().cables)
    assert _problem(hosts, _spec(), "otg") == ""
    for name in ("vsgen", "trafgen"):
        assert _problem(hosts, _spec(), name) == (
            f"traffic generator {name} needs two DUT ports cabled to interfaces of host gen, testbed lab.yaml has 0 "
            "(hardware port locations 192.0.2.50;1;1, 192.0.2.50;1;2 need --trafficgen otg)")


def test_the_generators_settings_must_name_the_cabled_locations() -> None:
    testbed, otg = _located(), REGS.trafficgens.get("otg").cls
    cables = list(testbed.cables)
    assert gen_ports_problem(testbed, _spec(), otg, cables) == ""
    # TRAFFICGEN_OTG_PORTS (or VSPERF's Ixia settings) naming other ports than the cables
    other = _spec(TRAFFICGEN_OTG_PORTS=["10.0.0.1;1;1", "10.0.0.1;1;2"])
    assert "differ from the testbed's cabled generator ports" in gen_ports_problem(testbed, other, otg, cables)
    same = _spec(TRAFFICGEN_IXIA_HOST="192.0.2.50", TRAFFICGEN_IXIA_CARD="1", TRAFFICGEN_IXIA_PORT1="1",
                 TRAFFICGEN_IXIA_PORT2="2")
    assert gen_ports_problem(testbed, same, otg, cables) == ""
    partial = _spec(TRAFFICGEN_IXIA_HOST="192.0.2.50")
    assert "TRAFFICGEN_IXIA_CARD" in gen_ports_problem(testbed, partial, otg, cables)
    # a generator of interfaces, given too few of them, hears where the locations go
    vsgen = REGS.trafficgens.get("vsgen").cls
    assert "need --trafficgen otg" in gen_ports_problem(_located(mixed=True), _spec(), vsgen, cables[2:])


def test_a_pci_port_needs_a_dpdk_switch_and_hugepages_there(tmp_path: Path) -> None:
    cables = (Cable(DutPort(None, "0000:3b:00.0", "vfio-pci"), GenPortSpec("p0", None)),
              Cable(DutPort("ens2", None, "kernel"), GenPortSpec("p1", None)))
    hosts, dut, _gen = cabled_hosts(tmp_path, cables)
    dut.files["/proc/meminfo"] = "MemTotal:       16384000 kB\nMemAvailable:    8192000 kB\n"
    assert _problem(hosts, _spec(vswitch="ovs")) == (
        "DUT port 0 is PCI device 0000:3b:00.0 for DPDK (driver vfio-pci): vswitch ovs cannot attach it "
        "(use --vswitch ovs-dpdk, or driver kernel with its interface)")
    # ovs-dpdk: the DUT host has no hugepages at all
    assert _problem(hosts, _spec(vswitch="ovs-dpdk")) == \
        "host dut: the kernel has no hugepages (no Hugepagesize in /proc/meminfo)"
    assert all(argv[0] in ("cat", "test") for argv, _ns in dut.calls)  # asked, nothing changed


# --- the local lab ----------------------------------------------------------------------------------


def test_the_local_lab_needs_linux_and_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert lab_problem() == "vsperf needs root for the local lab: run as root, or use --trafficgen dummy"
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert lab_problem() == ""
    monkeypatch.setattr(sys, "platform", "darwin")
    assert lab_problem() == "the local lab needs Linux (namespaces, veth): use --trafficgen dummy"


def test_the_local_lab_sends_only_to_the_benchmarking_range(tmp_path: Path) -> None:
    traffic = traffic_from_settings(make_settings(), 64)
    assert lab_addresses_problem(traffic) == ""
    outside = replace(traffic, l3=replace(traffic.l3, dstip="10.0.0.1"))
    assert lab_addresses_problem(outside) == (
        "TRAFFIC l3 dstip 10.0.0.1 is outside 198.18.0.0/15: the local lab sends only there; set TRAFFIC l3 "
        "srcip/dstip inside it (e.g. 198.18.0.1, 198.18.1.1) or use a testbed")
    hosts, _machine = lab_hosts(tmp_path)
    assert _problem(hosts, _spec(TRAFFIC={"l3": {"dstip": "10.0.0.1"}})).startswith("TRAFFIC l3 dstip 10.0.0.1")
    # a testbed's network is the user's: any address
    testbed, _dut, _gen = cabled_hosts(tmp_path / "bed")
    assert _problem(testbed, _spec(TRAFFIC={"l3": {"dstip": "10.0.0.1"}})) == ""


def test_the_lab_hosts_kernel_must_have_namespaces_veth_and_tc(tmp_path: Path) -> None:
    hosts, machine = lab_hosts(tmp_path)
    config = "/boot/config-6.1.0-test"
    machine.files[config] = "#\nCONFIG_NET_NS=y\nCONFIG_VETH=m\nCONFIG_NET_CLS_BPF=m\nCONFIG_NET_SCH_TBF=m\n"
    assert _problem(hosts, _spec()) == ""
    machine.files[config] = machine.files[config].replace("CONFIG_VETH=m", "# CONFIG_VETH is not set")
    assert _problem(hosts, _spec()) == "the kernel lacks veth interfaces (CONFIG_VETH): use a kernel built with it"


def test_the_lab_runs_ovs_dpdk_without_hugepages(tmp_path: Path) -> None:
    hosts, _machine = lab_hosts(tmp_path)
    assert _problem(hosts, _spec(vswitch="ovs-dpdk", VSWITCH_DPDK_HUGEPAGES=True)) == (
        "VSWITCH_DPDK_HUGEPAGES: the local lab runs OVS-DPDK without hugepages (--no-huge); set it false, or run "
        "on a testbed (--testbed)")
    assert _problem(hosts, _spec(vswitch="ovs-dpdk")) == ""


def test_the_runs_journal_must_be_writable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert state_root_problem(tmp_path / "state" / "deeper") == ""
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    assert state_root_problem(tmp_path / "state") == f"cannot write run state under {tmp_path / 'state'}: run as root"


def test_a_frame_above_the_paths_mtu_is_refused_before_anything_is_deployed() -> None:
    from vsperf.deploy.support import frame_size_problem
    from vsperf.traffic import Traffic
    from vsperf.traffic.mix import parse_mix
    from vsperf.vswitch.linux_bridge import LinuxBridgeVSwitch
    from vsperf.vswitch.ovs_dpdk import OvsDpdkVSwitch

    limit = OvsDpdkVSwitch.LAB_MAX_FRAME_BYTES
    assert limit == 1518 and LinuxBridgeVSwitch.LAB_MAX_FRAME_BYTES is None
    mix = Traffic().with_frame_size(parse_mix("aaah"))
    assert frame_size_problem(mix, "ovs-dpdk", limit) == (
        "frame mix aaah has 2112-byte frames, above the path's MTU: vswitch ovs-dpdk's veth ports carry frames "
        "of at most 1518 bytes here; use smaller frames, or --vswitch ovs or linux-bridge")
    assert "frame size 9000 B, above the path's MTU" in frame_size_problem(Traffic(frame_size_bytes=9000), "none", 1518)
    assert frame_size_problem(Traffic().with_frame_size(parse_mix("IMIX")), "ovs-dpdk", limit) == ""
    assert frame_size_problem(mix, "linux-bridge", None) == ""


def test_jumbo_mtu_above_what_the_labs_veth_ports_carry_is_one_line() -> None:
    spec = replace(_spec("p2p", "ovs-dpdk"), jumbo_mtu_bytes=2000)
    why = jumbo_problem(spec, 1518)  # ovs-dpdk's LAB_MAX_FRAME_BYTES
    assert why.startswith("VSWITCH_JUMBO_FRAMES_SIZE 2000: vswitch ovs-dpdk's veth ports carry an MTU of at most 1500")
    assert jumbo_problem(replace(spec, jumbo_mtu_bytes=1500), 1518) == ""
    assert jumbo_problem(spec, None) == ""  # a switch whose lab ports carry any frame
    assert jumbo_problem(replace(spec, steps=True), 1518) == ""  # steps ask the switch, as VSPERF's did
