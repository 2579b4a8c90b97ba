"""The testbed's p2p deployment against a recording executor: what it refuses, the order of its
commands (the bridge journaled before it exists, ports recorded before they change), teardown."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from types import SimpleNamespace
from typing import IO, Any, cast

import pytest
from settings_util import make_settings

from vsperf.config import traffic_from_settings
from vsperf.context import RunContext
from vsperf.errors import DeploymentError
from vsperf.executor import Executor, Process
from vsperf.plan import PlannedTest
from vsperf.testbed.checks import dut_tools, gen_tools, missing_tools, unsupported_on_testbed
from vsperf.testbed.deploy import TestbedDeployment, bridge_name
from vsperf.testbed.journal import PortJournal
from vsperf.testbed.model import Cable, DutPort, GenPortSpec, Testbed, TestbedHost
from vsperf.testbed.ports import read_port
from vsperf.testbed.session import TestbedSession
from vsperf.vswitch.linux_bridge import LinuxBridgeVSwitch
from vsperf.vswitch.ovs import OvsVSwitch


class FakeHost:
    """An executor whose interfaces are a dict; every command is recorded."""

    def __init__(self, name: str, links: dict[str, dict[str, Any]], calls: list[tuple[str, list[str]]]) -> None:
        self.name = name
        self.links = links
        self.calls = calls
        self.absent: set[str] = set()  # programs `command -v` does not find

    @property
    def host(self) -> str:
        return self.name

    def run(self, argv: Sequence[str], *, netns: str | None = None, check: bool = True,
            timeout_s: float | None = 60.0, env: Mapping[str, str] | None = None,
            input_text: str | None = None) -> subprocess.CompletedProcess[str]:
        args = list(argv)
        self.calls.append((self.name, args))
        out = ""
        if args[:2] == ["ip", "-j"]:
            dev = args[-1]
            out = json.dumps([self.links[dev]] if dev in self.links else [])
        elif args[:3] == ["ip", "link", "set"]:
            link = self.links[args[4]]
            if "master" in args:
                link["master"] = args[args.index("master") + 1]
            if args[-1] in ("up", "down"):
                link["flags"] = ["UP", "LOWER_UP"] if args[-1] == "up" else []
            if "mtu" in args:
                link["mtu"] = int(args[args.index("mtu") + 1])
        elif args[:4] == ["ip", "link", "add", "name"]:
            self.links[args[4]] = {"ifname": args[4], "flags": [], "mtu": 1500, "address": "02:00:00:00:00:ff"}
        elif args[:3] == ["ip", "link", "del"]:
            gone = args[-1]
            self.links.pop(gone, None)
            for link in self.links.values():
                if link.get("master") == gone:
                    link.pop("master")
        elif args[:3] == ["ip", "link", "show"]:
            return subprocess.CompletedProcess(args, 0 if args[-1] in self.links else 1, "", "")
        elif args[:3] == ["sh", "-c", 'command -v "$1"']:
            return subprocess.CompletedProcess(args, 1 if args[-1] in self.absent else 0, "", "")
        elif args[0] == "uname":
            out = "6.1.0-test\n"
        return subprocess.CompletedProcess(args, 0, out, "")

    def spawn(self, argv: Sequence[str], *, netns: str | None = None, env: Mapping[str, str] | None = None,
              stdout: IO[bytes] | int | None = None, stderr: IO[bytes] | int | None = None,
              stdin: int | None = None) -> Process:
        raise AssertionError("the deployment starts no process")

    def put(self, local: Path, remote: PurePosixPath | str, *, mode: int | None = None) -> None:
        raise AssertionError("no file copied")

    def get(self, remote: PurePosixPath | str, local: Path) -> None:
        raise AssertionError("no file copied")


def _link(name: str, mac: str, up: bool = False) -> dict[str, Any]:
    return {"ifname": name, "flags": ["UP", "LOWER_UP"] if up else [], "mtu": 1500, "address": mac, "addr_info": []}


def _session(tmp_path: Path) -> tuple[TestbedSession, list[tuple[str, list[str]]], dict[str, FakeHost]]:
    calls: list[tuple[str, list[str]]] = []
    hosts = {
        "dut": FakeHost("dut", {"ens1": _link("ens1", "02:00:00:00:00:01"),
                                "ens2": _link("ens2", "02:00:00:00:00:02")}, calls),
        "gen": FakeHost("gen", {"p0": _link("p0", "02:00:00:00:01:01", up=True),
                                "p1": _link("p1", "02:00:00:00:01:02")}, calls),
    }
    cables = tuple(Cable(DutPort(d, None, "kernel"), GenPortSpec(g, None)) for d, g in (("ens1", "p0"), ("ens2", "p1")))
    testbed = Testbed("lab.yaml", (TestbedHost("dut"), TestbedHost("gen")), "dut", "gen", cables)
    executors = cast(dict[str, Executor], hosts)
    session = TestbedSession(testbed, executors, PortJournal.create(tmp_path, "abc123"))
    for host, ifname in (("dut", "ens1"), ("dut", "ens2"), ("gen", "p0"), ("gen", "p1")):
        session.checked[(host, ifname)] = read_port(executors[host], ifname)
    calls.clear()
    return session, calls, hosts


def test_p2p_bridges_the_dut_ports_and_puts_everything_back(tmp_path: Path) -> None:
    session, calls, hosts = _session(tmp_path)
    traffic = traffic_from_settings(make_settings(), 64)
    # the lab's Linux bridge class, given the DUT host's executor
    vswitch = LinuxBridgeVSwitch(make_settings(), RunContext("abc123", tmp_path, tmp_path, session.dut))
    deployment = TestbedDeployment("p2p", session, run_id="abc123", traffic=traffic, vswitch=vswitch)
    with deployment:
        bridge = bridge_name("abc123")
        assert hosts["dut"].links["ens1"]["master"] == bridge and hosts["dut"].links["ens2"]["master"] == bridge
        journal = json.loads(session.journal.path.read_text())
        assert journal["links"] == [{"host": "dut", "name": bridge}]
        assert {(p["host"], p["interface"]) for p in journal["ports"]} == {("dut", "ens1"), ("dut", "ens2"),
                                                                           ("gen", "p0"), ("gen", "p1")}
        ports = deployment.gen_ports
        assert [(p.netns, p.ifname, p.mac, p.peer_mac) for p in ports] == [
            (None, "p0", "02:00:00:00:01:01", "02:00:00:00:01:02"),
            (None, "p1", "02:00:00:00:01:02", "02:00:00:00:01:01")]
        assert ports[0].ipv4 == traffic.l3.srcip and ports[1].ipv4 == traffic.l3.dstip
        deployment.check_alive()
        before = len(calls)
        deployment.restart()  # RFC 2544 reset: the lab's bridge code, on the DUT host
        assert calls[before:] == [("dut", ["ip", "link", "set", "dev", bridge, "down"]),
                                  ("dut", ["ip", "link", "set", "dev", bridge, "up"])]
        components = {c.name: c for c in deployment.components()}
        bridge_info = components["linux-bridge"]
        assert bridge_info.version == "6.1.0-test" and bridge_info.details["host"] == "dut"
    # every command ran on its own host; the bridge is gone, the ports are as they were
    assert {host for host, argv in calls if argv[:3] == ["ip", "link", "add"]} == {"dut"}
    assert bridge not in hosts["dut"].links and "master" not in hosts["dut"].links["ens1"]
    assert hosts["dut"].links["ens1"]["flags"] == [] and hosts["gen"].links["p0"]["flags"] == ["UP", "LOWER_UP"]
    assert hosts["gen"].links["p1"]["flags"] == [] and not session.journal.path.exists()
    with pytest.raises(DeploymentError, match=r"bridge .* is gone"):
        deployment.check_alive()


def test_the_bridge_name_is_an_interface_name_with_the_run_id() -> None:
    assert bridge_name("abc123") == "vsperfabc123b0" and len(bridge_name("abc123")) <= 15


def _pt(**kw: Any) -> PlannedTest:
    values = {"simulated": False, "traffic_only": False, "hold": "", "vswitch": "linux-bridge", "trafficgen": "vsgen",
              "settings": make_settings(),
              "test": SimpleNamespace(name="phy2phy_tput", deployment="p2p", frame_modification=None, load={})}
    values.update(kw)
    return cast(PlannedTest, SimpleNamespace(**values))


def test_what_a_testbed_cannot_run_yet_is_named() -> None:
    assert unsupported_on_testbed([_pt(), _pt(vswitch="ovs"), _pt(vswitch="ovs-dpdk"),
                                   _pt(simulated=True, vswitch="vpp")]) is None
    assert unsupported_on_testbed([_pt(vswitch="none")]) is None  # testpmd forwarding on the DUT host
    assert unsupported_on_testbed([_pt(vswitch="vpp")]) == \
        "test phy2phy_tput: vswitch vpp (only linux-bridge, ovs, ovs-dpdk, none deploy on a testbed)"
    pvp = SimpleNamespace(name="pvp_tput", deployment="pvp", frame_modification=None, load={})
    # the lab's chains of VNFs (pvvpN) and VNFs side by side (pvpvN: header matches, >= N streams)
    pvvp = SimpleNamespace(name="pvvp_tput", deployment="pvvp", frame_modification=None, load={})
    pvpv = SimpleNamespace(name="pvpv_tput", deployment="pvpv", frame_modification=None, load={})
    clean = SimpleNamespace(name="ovsdpdk_qos", deployment="clean", frame_modification=None, load={})
    streams = make_settings({"TRAFFIC": {"multistream": 2}})
    assert unsupported_on_testbed([_pt(test=pvvp, vnf="netns"), _pt(test=pvvp, vswitch="ovs", vnf="auto"),
                                   _pt(test=pvpv, vswitch="ovs", vnf="netns", settings=streams)]) is None
    assert unsupported_on_testbed([_pt(test=pvpv, vnf="netns", settings=streams)]) == \
        ("test pvpv_tput: deployment pvpv splits streams between VNFs by header fields, which linux-bridge "
         "cannot do: use --vswitch ovs")
    assert "set TRAFFIC multistream >= 2 (it is 0)" in \
        str(unsupported_on_testbed([_pt(test=pvpv, vswitch="ovs", vnf="netns")]))
    assert unsupported_on_testbed([_pt(test=clean)]) == \
        "test ovsdpdk_qos: deployment clean (only p2p, pvp, pvvpN, pvpvN deploy on a testbed)"
    settings = make_settings()
    # pvp with the netns VNF (the default of linux-bridge and ovs, either loopback) and ovs-dpdk's
    # default VNF (testpmd-vhost)
    testpmd = make_settings(GUEST_LOOPBACK=["testpmd"])
    assert unsupported_on_testbed([_pt(test=pvp, vnf="auto", settings=settings),
                                   _pt(test=pvp, vswitch="ovs", vnf="netns", settings=settings),
                                   _pt(test=pvp, vswitch="ovs-dpdk", vnf="netns", settings=settings),
                                   _pt(test=pvp, vnf="netns", settings=testpmd),
                                   _pt(test=pvp, vswitch="ovs-dpdk", vnf="auto", settings=settings)]) is None
    # the QEMU guests run on the DUT host; PCI passthrough is refused by name
    assert unsupported_on_testbed([_pt(test=pvp, vswitch="ovs-dpdk", vnf="qemu-vhost-user", settings=settings),
                                   _pt(test=pvp, vswitch="ovs", vnf="qemu-virtio-net", settings=settings)]) is None
    assert "VNF qemu-pci-passthrough runs on the local lab only (on a testbed: --vnf netns, testpmd-vhost, " \
        "qemu-vhost-user, qemu-virtio-net)" in \
        str(unsupported_on_testbed([_pt(test=pvp, vnf="qemu-pci-passthrough", settings=settings)]))
    assert "traffic generator moongen" in str(unsupported_on_testbed([_pt(trafficgen="moongen")]))
    assert unsupported_on_testbed([_pt(trafficgen="pktgen")]) is None  # vsperf starts it on the generator host
    assert unsupported_on_testbed([_pt(trafficgen="trafgen")]) is None  # it runs on the generator host
    # --mode trafficgen: the generator host's ports only (vsperf.testbed.wire); -off/-pause deploy as usual
    assert unsupported_on_testbed([_pt(traffic_only=True), _pt(hold="off"), _pt(hold="pause")]) is None
    assert "--mode trafficgen with otg (on a testbed: --trafficgen vsgen, trafgen, trex)" in \
        str(unsupported_on_testbed([_pt(traffic_only=True, trafficgen="otg")]))


def test_the_dut_hosts_programs_are_checked_with_a_one_line_fix(tmp_path: Path) -> None:
    tools = dut_tools([_pt(vswitch="ovs"), _pt(simulated=True, vswitch="linux-bridge")])
    assert tools["ovs-vswitchd"] == "openvswitch-switch" and tools["ip"] == "iproute2"
    assert dut_tools([_pt(simulated=True)]) == {} and "ovs-vsctl" not in dut_tools([_pt()])
    settings = make_settings()
    dpdk = dut_tools([_pt(vswitch="ovs-dpdk", settings=settings)])
    assert dpdk[str(settings["OVS_DPDK_VSWITCHD"])] == "openvswitch-switch-dpdk" and "ovs-vsctl" in dpdk
    assert "ovs-vswitchd" not in dpdk  # the DPDK build, not the plain one
    assert "dpdk-testpmd" not in dpdk  # p2p: no VNF
    pvp = SimpleNamespace(name="pvp_tput", deployment="pvp", frame_modification=None, load={})
    # testpmd-vhost (ovs-dpdk's default VNF) and the netns VNF's testpmd loopback run dpdk-testpmd,
    # and read its counters with DPDK's telemetry client
    for vnf_pt in (_pt(test=pvp, vswitch="ovs-dpdk", vnf="auto", settings=settings),
                   _pt(test=pvp, vnf="netns", settings=make_settings(GUEST_LOOPBACK=["testpmd"]))):
        assert {k: v for k, v in dut_tools([vnf_pt]).items() if "dpdk-" in k} == \
            {"dpdk-testpmd": "dpdk-dev", "dpdk-telemetry.py": "dpdk-dev"}
    assert "dpdk-testpmd" not in dut_tools([_pt(test=pvp, vnf="netns", settings=settings)])  # kernel bridge
    assert dut_tools([_pt(vswitch="none")])["dpdk-testpmd"] == "dpdk-dev"  # testpmd forwarding
    # pidstat reads the DUT host's process table (ps) and clock tick (getconf); cpu needs only cat
    assert dut_tools([_pt(settings=make_settings({"COLLECTOR": ["Pidstat"]}))])["ps"] == "procps"
    assert "ps" not in dut_tools([_pt(settings=make_settings({"COLLECTOR": ["cpu", "ifstats"]}))])
    session, calls, hosts = _session(tmp_path)
    assert missing_tools(session, tools) is None
    hosts["dut"].absent.add("ovs-vswitchd")
    assert missing_tools(session, tools) == \
        "host dut: ovs-vswitchd is missing: apt-get install openvswitch-switch there"
    assert all(host == "dut" for host, _ in calls)


def test_the_generator_hosts_programs_are_checked_on_that_host(tmp_path: Path) -> None:
    tools = gen_tools([_pt(trafficgen="trafgen"), _pt(simulated=True, trafficgen="dummy")])
    assert tools == {"trafgen": "netsniff-ng", "tc": "iproute2", "python3": "python3", "taskset": "util-linux"}
    assert gen_tools([_pt(trafficgen="vsgen")]) == {} and gen_tools([_pt(simulated=True, trafficgen="trafgen")]) == {}
    session, calls, hosts = _session(tmp_path)
    assert missing_tools(session, tools, host="gen") is None
    hosts["gen"].absent.add("trafgen")
    hosts["dut"].absent.add("tc")  # the DUT host's programs are not what is asked here
    assert missing_tools(session, tools, host="gen") == \
        "host gen: trafgen is missing: apt-get install netsniff-ng there"
    assert calls and all(host == "gen" for host, _ in calls)


def test_pktgen_on_the_generator_host_is_checked_there_with_how_to_build_it(tmp_path: Path) -> None:
    tools = gen_tools([_pt(trafficgen="pktgen", settings=make_settings(TRAFFICGEN_PKTGEN_BINARY="/opt/pg/pktgen"))])
    assert tools == {"/opt/pg/pktgen": "pktgen", "python3": "python3"}  # python3: its pty launcher
    # a pktgen the user started (TRAFFICGEN_PKTGEN_HOST): nothing to find on the host
    assert gen_tools([_pt(trafficgen="pktgen", settings=make_settings(TRAFFICGEN_PKTGEN_HOST="198.18.0.9"))]) == {}
    session, _calls, hosts = _session(tmp_path)
    hosts["gen"].absent.add("/opt/pg/pktgen")
    assert missing_tools(session, tools, host="gen") == \
        "host gen: /opt/pg/pktgen is missing: build Pktgen-DPDK >= 23.06 with Lua there (docs/trafficgens.rst) " \
        "and set TRAFFICGEN_PKTGEN_BINARY to its path"


def test_trex_on_the_generator_host_is_checked_there_with_how_to_build_it(tmp_path: Path) -> None:
    tools = gen_tools([_pt(trafficgen="trex", settings=make_settings(TRAFFICGEN_TREX_BASE_DIR="/opt/trex/scripts/"))])
    assert tools == {"/opt/trex/scripts/_t-rex-64": "trex", "ss": "iproute2"}  # ss: its ports in use there
    assert gen_tools([_pt(trafficgen="trex")]) == {"t-rex-64": "trex", "ss": "iproute2"}  # on the host's PATH
    # a server already running (on the host, or elsewhere): nothing to find
    assert gen_tools([_pt(trafficgen="trex", settings=make_settings(TRAFFICGEN_TREX_START_SERVER=False))]) == {}
    assert gen_tools([_pt(trafficgen="trex", settings=make_settings(TRAFFICGEN_TREX_HOST_IP_ADDR="10.0.0.5"))]) == {}
    session, _calls, hosts = _session(tmp_path)
    hosts["gen"].absent.add("/opt/trex/scripts/_t-rex-64")
    assert missing_tools(session, tools, host="gen") == \
        "host gen: /opt/trex/scripts/_t-rex-64 is missing: build TRex v3.0.7 there (docs/trafficgens.rst) and set " \
        "TRAFFICGEN_TREX_BASE_DIR to its scripts directory"


def test_another_userspace_ovs_on_the_dut_host_is_refused_before_the_switch_starts(tmp_path: Path) -> None:
    session, calls, hosts = _session(tmp_path)
    hosts["dut"].links["ovs-netdev"] = _link("ovs-netdev", "02:00:00:00:00:09")
    vswitch = OvsVSwitch(make_settings(), RunContext("abc123", tmp_path, tmp_path, session.dut))
    deployment = TestbedDeployment("p2p", session, run_id="abc123", traffic=traffic_from_settings(make_settings(), 64),
                                   vswitch=vswitch)
    with pytest.raises(DeploymentError, match=r"^host dut: another Open vSwitch .*\(ovs-netdev exists\)"), deployment:
        pass
    assert not any(argv[0].startswith("ovs") for _, argv in calls)  # no OVS command ran
    assert hosts["dut"].links["ens1"]["flags"] == [] and not session.journal.path.exists()
