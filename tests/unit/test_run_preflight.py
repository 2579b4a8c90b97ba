"""vsperf.run.preflight: the one check of a plan before anything is created, on the local lab and on
a testbed (FakeMachines): which host each program is looked for on, one line naming the fix, and
nothing changed on any host."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fake_machine import FakeMachine, cabled_hosts, lab_hosts
from settings_util import make_settings

from vsperf.backends import build_registries
from vsperf.catalog import Catalog
from vsperf.collectors.base import Collector, Statistics
from vsperf.deploy.build import build_deployment
from vsperf.errors import ConfigError, PrerequisiteError, UserError
from vsperf.executor import CommandLog
from vsperf.host.hosts import RunHosts
from vsperf.registry import Registries
from vsperf.run.plan import PlannedTest, plan_tests
from vsperf.run.preflight import TestbedUnsupportedError, check_plan, nic_pci_problem, open_hosts
from vsperf.steps.model import parse_steps
from vsperf.testbed.model import Cable, DutPort, GenPortSpec
from vsperf.traffic import Traffic
from vsperf.vswitch.ovs import OVS_SCHEMA

REGS = build_registries()
CATALOG = Catalog.load()


def _plan(*names: str, traffic_only: bool = False, registries: Registries = REGS, **settings: Any) -> list[PlannedTest]:
    values = make_settings({"TRAFFICGEN": "trafgen", "COLLECTOR": ["cpu"], **settings})
    return plan_tests([CATALOG.get(n) for n in names], values, registries, traffic_only=traffic_only)


def _ready(*machines: FakeMachine) -> None:
    """Hosts with everything installed, vsperf running as root there."""
    for machine in machines:
        machine.handlers["id"] = lambda argv: (0, "0\n")
        machine.files[OVS_SCHEMA] = "{}"


def _changes(machine: FakeMachine) -> list[str]:
    """Commands that could change something on the host (the checks only ask)."""
    # `python3 -`: the generator host's kernel asked for a BPF map (trafgen's counters), closed at once
    asking = ("sh -c 'command -v", "uname", "id -u", "test ", "cat ", "getconf", "gzip -dc", "ip link show",
              "grep '^Cpus_allowed_list:'",
              "ip -j", "ovs-vswitchd --version", "python3 -", "modprobe -n")
    return [c for c in machine.commands() if not c.startswith(asking)]


# --- opening the hosts ------------------------------------------------------------------------------


def test_a_plan_that_deploys_nothing_opens_no_lab_but_its_testbed(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr(RunHosts, "open", classmethod(lambda cls, testbed, **kw: opened.append((testbed, kw))))
    plan = _plan("phy2phy_tput", TRAFFICGEN="dummy")  # the simulated DUT
    assert open_hosts(plan, "", run_id="ab12", command_log=CommandLog(None)) is None
    assert opened == []
    # A testbed is still connected, put back and checked (the run describes its hosts)
    bed = tmp_path / "bed.yaml"
    bed.write_text("hosts: {local: {}}\ndut_host: local\ntrafficgen_host: local\n"
                   "ports:\n  - {dut: {interface: a}, trafficgen: {interface: b}}\n"
                   "  - {dut: {interface: c}, trafficgen: {interface: d}}\n")
    open_hosts(plan, str(bed), run_id="ab12", command_log=CommandLog(None))
    assert [(t.path, kw["check_dut_ports"]) for t, kw in opened] == [(str(bed), True)]


def test_the_local_lab_needs_linux_and_root(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr(RunHosts, "open", classmethod(lambda cls, testbed, **kw: opened.append((testbed, kw))))
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(PrerequisiteError) as err:
        open_hosts(_plan("phy2phy_tput"), "", run_id="ab12", command_log=CommandLog(None))
    assert str(err.value) == "vsperf needs root for the local lab: run as root, or use --trafficgen dummy"
    assert opened == []
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    open_hosts(_plan("phy2phy_tput"), "", run_id="ab12", command_log=CommandLog(None))
    [(testbed, kw)] = opened
    assert testbed.path == "" and [h.name for h in testbed.hosts] == ["local"] and kw["run_id"] == "ab12"


def test_a_testbed_is_opened_and_traffic_only_leaves_the_duts_ports_unchecked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr(RunHosts, "open", classmethod(lambda cls, testbed, **kw: opened.append((testbed, kw))))
    bed = tmp_path / "bed.yaml"
    bed.write_text("hosts: {local: {}}\ndut_host: local\ntrafficgen_host: local\n"
                   "ports:\n  - {dut: {interface: a}, trafficgen: {interface: b}}\n"
                   "  - {dut: {interface: c}, trafficgen: {interface: d}}\n")
    open_hosts(_plan("phy2phy_tput"), str(bed), run_id="ab12", command_log=CommandLog(None))
    open_hosts(_plan("phy2phy_tput", traffic_only=True), str(bed), run_id="ab12", command_log=CommandLog(None))
    assert [(t.path, kw["check_dut_ports"]) for t, kw in opened] == [(str(bed), True), (str(bed), False)]
    with pytest.raises(ConfigError, match=r"^testbed .*nope\.yaml: no such file"):
        open_hosts(_plan("phy2phy_tput"), str(tmp_path / "nope.yaml"), run_id="ab12", command_log=CommandLog(None))


class LocalOnly(Collector):
    """A collector that reads this machine only (REMOTE False)."""

    NAME = "localonly"

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def statistics(self) -> Statistics:
        raise NotImplementedError

    def version(self) -> str:
        return "1"


def test_a_collector_that_reads_only_this_machine_is_refused_before_a_testbed_is_opened(tmp_path: Path) -> None:
    registries = build_registries()
    registries.collectors.register(LocalOnly)
    plan = _plan("phy2phy_tput", registries=registries, COLLECTOR=["cpu", "localonly"])
    with pytest.raises(UserError) as err:  # the file is not even read
        open_hosts(plan, str(tmp_path / "nope.yaml"), run_id="ab12", command_log=CommandLog(None),
                   registries=registries)
    assert str(err.value) == ("collector localonly reads only this machine, not the testbed's hosts: remove it from "
                              "COLLECTOR for a --testbed run")
    hosts, dut, gen = cabled_hosts(tmp_path)
    _ready(dut, gen)
    with pytest.raises(UserError, match=r"^collector localonly reads only this machine"):
        check_plan(plan, registries, hosts)
    lab, machine = lab_hosts(tmp_path / "lab")
    _ready(machine)
    check_plan(plan, registries, lab)  # the local lab is this machine


# --- the local lab ------------------------------------------------------------------------------------


def test_the_lab_is_checked_on_this_machine(tmp_path: Path) -> None:
    hosts, machine = lab_hosts(tmp_path)
    _ready(machine)
    check_plan(_plan("phy2phy_tput", "pvp_tput", VSWITCH="ovs"), REGS, hosts)
    assert _changes(machine) == [] and len(hosts.journal) == 0
    for program, message in (
            ("ip", "ip is missing: apt-get install iproute2"),
            ("ovs-vsctl", "Open vSwitch is missing (ovs-vsctl): apt-get install openvswitch-switch"),
            ("trafgen", "trafgen is missing: apt-get install netsniff-ng")):
        machine.absent.add(program)
        with pytest.raises(PrerequisiteError) as err:
            check_plan(_plan("phy2phy_tput", VSWITCH="ovs"), REGS, hosts)
        assert str(err.value) == message
        machine.absent.discard(program)


@pytest.mark.parametrize(("names", "settings", "message"), [
    (("pvp_tput",), {"GUEST_LOOPBACK": ["l2fwd"]}, r"^GUEST_LOOPBACK 'l2fwd' is not available with the netns VNF"),
    (("pvpv_tput",), {"VSWITCH": "linux-bridge"}, r"^deployment pvpv splits streams between VNFs by header fields, "
                                                   r"which linux-bridge cannot do: use --vswitch ovs$"),
    (("phy2phy_tput",), {"VSWITCH": "ovs-dpdk", "VSWITCH_DPDK_HUGEPAGES": True},
     r"^VSWITCH_DPDK_HUGEPAGES: the local lab runs OVS-DPDK without hugepages"),
    (("pvp_tput",), {"VSWITCH": "ovs", "VNF": "testpmd-vhost"}, r"^VNF 'testpmd-vhost' needs vhostuser ports"),
    (("pvp_tput",), {"VNF": "QemuPciPassthrough"}, r"^VNF QemuPciPassthrough needs a physical NIC to pass to the "
                                                   r"guest, which the local lab has none of"),
])
def test_what_the_lab_cannot_deploy_is_one_line(tmp_path: Path, names: tuple[str, ...], settings: dict[str, Any],
                                                message: str) -> None:
    hosts, machine = lab_hosts(tmp_path)
    _ready(machine)
    with pytest.raises(PrerequisiteError, match=message) as err:
        check_plan(_plan(*names, **settings), REGS, hosts)
    assert "\n" not in str(err.value) and _changes(machine) == []


def test_each_tunnel_of_a_run_is_checked_not_only_the_first(tmp_path: Path) -> None:
    """Two op2p tests on the Linux bridge, vxlan then gre, on a kernel with vxlan only: the run is
    refused before anything is deployed, naming the second test (its check was once skipped as
    the same deployment as the first's)."""
    hosts, machine = lab_hosts(tmp_path)
    _ready(machine)
    machine.dirs.add("/sys/module/vxlan")  # loaded; modprobe finds no other module
    machine.handlers["modprobe"] = lambda argv: (1, "")
    base = CATALOG.get("phy2phy_cont")
    tests = [replace(base, name=f"{kind}_enc", deployment="op2p", tunnel_type=kind, tunnel_operation="encapsulation")
             for kind in ("vxlan", "gre")]
    plan = plan_tests(tests, make_settings({"TRAFFICGEN": "trafgen", "VSWITCH": "linux-bridge",
                                            "TRAFFIC": {"bidir": False}}), REGS)
    with pytest.raises(PrerequisiteError, match=r"^test gre_enc: Tunnel Type gre: the kernel of host local has no "
                                                r"gretap device \(module ip_gre\)") as err:
        check_plan(plan, REGS, hosts)
    assert "\n" not in str(err.value) and _changes(machine) == []
    check_plan(plan[:1], REGS, hosts)  # vxlan alone: the kernel has it


def test_steps_that_use_a_nics_pci_address_need_pci_nics(tmp_path: Path) -> None:
    """Upstream's tests that bind a NIC to a DPDK driver mid-test ($NICS[0]["pci"]) need NICs with
    a PCI address: refused on the local lab and on a testbed of kernel interfaces, in one line."""
    binding = parse_steps("t", [["log", "info", "x"],
                                ["tools", "exec_shell", 'sudo $TOOLS["bind-tool"] --bind igb_uio $NICS[0]["pci"]']])
    lab, _ = lab_hosts(tmp_path / "lab")
    assert nic_pci_problem(binding, lab) == (
        'step 1 uses a NIC\'s PCI address ($NICS[n]["pci"]), and the local lab\'s ports are veths: run it on a '
        "testbed whose DUT ports are PCI NICs")
    assert nic_pci_problem(parse_steps("t", [["tools", "exec_shell", 'ip link set $NICS[0]["device"] up']]), lab) == ""
    kernel, _, _ = cabled_hosts(tmp_path / "kernel")
    assert "its DUT ports have no pci address" in nic_pci_problem(binding, kernel)
    pci = tuple(Cable(DutPort(None, f"0000:3b:00.{n}", "vfio-pci"), GenPortSpec(g, None))  # type: ignore[arg-type]
                for n, g in enumerate(("p0", "p1")))
    nics, _, _ = cabled_hosts(tmp_path / "pci", pci)
    assert nic_pci_problem(binding, nics) == ""


# --- a testbed ----------------------------------------------------------------------------------------


def test_each_program_is_looked_for_on_the_host_that_runs_it(tmp_path: Path) -> None:
    hosts, dut, gen = cabled_hosts(tmp_path)
    _ready(dut, gen)
    plan = _plan("phy2phy_tput", "phy2phy_cpu_load", VSWITCH="ovs", COLLECTOR=["pidstat", "cpu"])
    check_plan(plan, REGS, hosts)
    assert _changes(dut) == [] and _changes(gen) == [] and len(hosts.journal) == 0
    asked_dut = {argv[-1] for argv, _ns in dut.calls if argv[:3] == ("sh", "-c", 'command -v "$1"')}
    asked_gen = {argv[-1] for argv, _ns in gen.calls if argv[:3] == ("sh", "-c", 'command -v "$1"')}
    assert {"ip", "ovs-vswitchd", "ovs-vsctl", "stress-ng", "ps", "getconf"} <= asked_dut
    assert {"trafgen", "tc", "python3", "taskset"} == asked_gen
    for host, program, message in (
            (dut, "ovs-vswitchd", "host dut: Open vSwitch is missing (ovs-vswitchd): apt-get install "
                                  "openvswitch-switch there"),
            (dut, "stress-ng", "host dut: stress-ng is missing: apt-get install stress-ng there"),
            (dut, "ps", "host dut: ps is missing: apt-get install procps there"),  # pidstat reads the DUT's processes
            (gen, "trafgen", "host gen: trafgen is missing: apt-get install netsniff-ng there")):
        host.absent.add(program)
        with pytest.raises(PrerequisiteError) as err:
            check_plan(plan, REGS, hosts)
        assert str(err.value) == f"testbed lab.yaml: {message}"
        host.absent.discard(program)
    dut.absent.add("tc")  # the generator's programs are not the DUT host's business
    check_plan(plan, REGS, hosts)
    dut.absent.add("stress-ng")  # the simulated DUT gets no load: nothing asked of the DUT host
    check_plan(_plan("phy2phy_cpu_load", TRAFFICGEN="dummy"), REGS, hosts)


def test_what_a_testbed_cannot_run_is_refused_after_its_hosts_were_checked(tmp_path: Path) -> None:
    hosts, dut, gen = cabled_hosts(tmp_path)
    _ready(dut, gen)
    with pytest.raises(TestbedUnsupportedError) as err:
        check_plan(_plan("pvpv_tput", VSWITCH="linux-bridge"), REGS, hosts)
    assert str(err.value) == (
        "testbed lab.yaml: hosts and ports checked, but test pvpv_tput: deployment pvpv splits streams between VNFs "
        "by header fields, which linux-bridge cannot do: use --vswitch ovs; run without --testbed, or with "
        "--trafficgen dummy")
    with pytest.raises(TestbedUnsupportedError, match=r"--mode trafficgen with otg \(on a testbed: --trafficgen "
                                                      r"vsgen, trafgen, trex\)"):
        check_plan(_plan("phy2phy_tput", traffic_only=True, TRAFFICGEN="otg"), REGS, hosts)
    with pytest.raises(PrerequisiteError, match=r"^testbed lab\.yaml: VNF QemuPciPassthrough needs a physical NIC to "
                                                r"pass to the guest, which vsperf does not pass through on host dut"):
        check_plan(_plan("pvp_tput", VNF="QemuPciPassthrough"), REGS, hosts)
    assert _changes(dut) == [] and _changes(gen) == []


def test_traffic_only_asks_nothing_of_the_users_dut_but_what_its_collectors_read(tmp_path: Path) -> None:
    hosts, dut, gen = cabled_hosts(tmp_path)
    _ready(dut, gen)
    check_plan(_plan("phy2phy_tput", traffic_only=True, VSWITCH="ovs", COLLECTOR=["pidstat"]), REGS, hosts)
    assert {argv[-1] for argv, _ns in dut.calls} == {"ps", "getconf"}  # only pidstat reads the DUT host
    dut.calls.clear()
    check_plan(_plan("phy2phy_tput", traffic_only=True, VSWITCH="ovs"), REGS, hosts)
    assert dut.calls == []


def test_a_vlan_push_the_dut_host_cannot_do_fails_that_test_when_it_deploys(tmp_path: Path) -> None:
    # the DUT host's kernel cannot tag frames in a Linux bridge: the plan passes its checks (the other
    # tests run), and the vlan test fails when its deployment is built, naming the host, nothing created
    hosts, dut, gen = cabled_hosts(tmp_path)
    _ready(dut, gen)
    dut.files["/boot/config-6.1.0-test"] = "#\nCONFIG_BRIDGE=y\n"
    plan = _plan("phy2phy_tput", "phy2phy_tput_mod_vlan", VSWITCH="linux-bridge")
    check_plan(plan, REGS, hosts)
    with pytest.raises(PrerequisiteError, match=r"^linux-bridge cannot push VLAN tags on the kernel of host dut "
                                                r"\(CONFIG_BRIDGE_VLAN_FILTERING is off\)"):
        build_deployment(plan[1].deployment, REGS, hosts, Traffic())
    assert _changes(dut) == [] and len(hosts.journal) == 0
