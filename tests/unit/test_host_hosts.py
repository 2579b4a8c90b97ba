"""The hosts of a run: opening them (connections, the sweep of killed runs' leftovers, the checks of
every cabled port), using a port, describing the hosts, and releasing everything at the end."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from fake_host import FakeMachine, RemoteMachine, install
from pci_tree import DEV, KernelTree

from vsperf.deploy.hugepages import set_knob
from vsperf.errors import UserError
from vsperf.executor import CommandLog, LocalExecutor
from vsperf.host import hosts as hosts_module
from vsperf.host.hosts import RunHosts, local_lab, sweep_leftovers
from vsperf.host.journal import Entry, Journal, Owner
from vsperf.host.names import run_dirs_removal
from vsperf.host.ports import PortError, PortState
from vsperf.host.proc import own_start_ticks
from vsperf.remote.connection import HostLostError, HostUnreachableError, SshHost
from vsperf.testbed.model import Cable, DutPort, GenPortSpec, Testbed, TestbedHost

DUT_SSH = SshHost("dut", "198.18.0.2")
GEN_SSH = SshHost("gen", "198.18.0.3")
PORT = PortState("ens1f0", admin_up=False, carrier=False, mtu_bytes=1500, addresses=(), xdp_attached=False,
                 master=None)
Bed = tuple[FakeMachine, RemoteMachine, RemoteMachine]  # this machine, the DUT host, the generator host


@pytest.fixture(autouse=True)
def no_scratch_dirs(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The sweep's scratch directories of dead runs: none, unless a test adds some (never this
    machine's real /tmp: other runs live there)."""
    orphans: list[Path] = []
    monkeypatch.setattr(hosts_module, "orphaned_work_dirs", lambda: list(orphans))
    return orphans


def _dead() -> Owner:
    """Our PID with another start time: the owner was killed and its PID reused."""
    return Owner(os.getpid(), own_start_ticks() - 100)


def _cabled(*cables: tuple[str, str]) -> Testbed:
    """A testbed: DUT host `dut` and generator host `gen`, both over SSH, kernel ports cabled."""
    return Testbed("bed.yaml", (TestbedHost("dut", DUT_SSH), TestbedHost("gen", GEN_SSH)), "dut", "gen",
                   tuple(Cable(DutPort(d, None, "kernel"), GenPortSpec(g, None)) for d, g in cables))


def _open(testbed: Testbed, tmp_path: Path, **kwargs: Any) -> RunHosts:
    """The hosts opened, and swept as a run does (a testbed's at opening, the lab's when the run starts)."""
    hosts = RunHosts.open(testbed, run_id="new001", command_log=CommandLog(None), state_root=tmp_path, **kwargs)
    hosts.sweep()
    return hosts


@pytest.fixture
def bed(monkeypatch: pytest.MonkeyPatch) -> Iterator[Bed]:
    """This machine, a DUT host and a generator host, each with two good ports."""
    local, dut, gen = FakeMachine("local"), RemoteMachine("dut"), RemoteMachine("gen")
    for ifname in ("ens1f0", "ens1f1"):
        dut.add_port(ifname)
    for ifname in ("ens2f0", "ens2f1"):
        gen.add_port(ifname)
    install(monkeypatch, local, dut, gen)
    yield local, dut, gen


# --- the sweep of killed runs' leftovers -----------------------------------------------------------


def test_open_sweeps_a_dead_runs_journal_on_every_host_and_leaves_a_live_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    local, dut = FakeMachine("local"), RemoteMachine("dut")
    install(monkeypatch, local, dut)
    local.netns |= {"vspdead01s", "vspa11ve1s"}
    daemon = dut.add_process(name="ovs-vswitchd")
    dut.links["vspdead01b0"] = None
    dut.add_port("ens1f0", mtu=9000)  # as the killed run left it
    dead = Journal("dead01", root=tmp_path, owner=_dead())
    dead.record(Entry("netns", "local", "vspdead01s"))
    dead.record(Entry("process", "dut", "ovs-vswitchd", pid=daemon.pid, start_ticks=daemon.start_ticks))
    dead.record(Entry("link", "dut", "vspdead01b0"))
    dead.record(Entry("port", "dut", "ens1f0", state=PORT.as_dict()))
    live = Journal("a11ve1", root=tmp_path)  # another vsperf, running now
    live.record(Entry("netns", "local", "vspa11ve1s"))
    testbed = Testbed("bed.yaml", (TestbedHost("local"), TestbedHost("dut", DUT_SSH)), "dut", "local", ())
    with caplog.at_level(logging.WARNING):
        hosts = _open(testbed, tmp_path)
    assert dut.connects == 1 and hosts.journal.run_id == "new001" and len(hosts.journal) == 0
    assert local.netns == {"vspa11ve1s"} and daemon.pid not in dut.procs and "vspdead01b0" not in dut.links
    assert dut.ran("ip", "link", "set", "dev", "ens1f0") == [("ip", "link", "set", "dev", "ens1f0", "mtu", "1500"),
                                                             ("ip", "link", "set", "dev", "ens1f0", "down")]
    # its directories on every host it used, and on this machine (its scratch files live there)
    assert local.ran("find") == [tuple(run_dirs_removal("dead01"))] == dut.ran("find")
    assert not dead.path.exists() and live.path.exists() and Journal.load(live.path).entries() == live.entries()
    assert [r.getMessage() for r in caplog.records] == [
        f"removed leftover of a killed run: run dead01: host dut: process ovs-vswitchd (pid {daemon.pid}) stopped",
        "removed leftover of a killed run: run dead01: netns vspdead01s deleted",
        "removed leftover of a killed run: run dead01: host dut: link vspdead01b0 deleted",
        "removed leftover of a killed run: run dead01: host dut: port ens1f0: MTU 9000 -> 1500, set down",
        f"removed leftover of a killed run: run dead01: journal {dead.path}"]


def test_an_unreachable_or_absent_hosts_entries_are_kept_with_one_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    local, dut = FakeMachine("local"), RemoteMachine("dut")
    dut.connected = False  # its connection died
    install(monkeypatch, local, dut)
    dead = Journal("dead01", root=tmp_path, owner=_dead())
    for name in ("vspdead01b0", "vspdead01b1"):
        dead.record(Entry("link", "dut", name))
    dead.record(Entry("port", "tgen", "ens2f0", state=PORT.as_dict()))  # a host this testbed does not have
    testbed = Testbed("bed.yaml", (TestbedHost("local"), TestbedHost("dut", DUT_SSH)), "dut", "local", ())
    with caplog.at_level(logging.WARNING):
        _open(testbed, tmp_path)
    assert [e.describe() for e in Journal.load(dead.path)] == [
        "host dut: link vspdead01b0", "host dut: link vspdead01b1", "host tgen: port ens2f0"]
    assert dut.ran("ip") == [] and dut.ran("find") == [] and local.ran("find") == [tuple(run_dirs_removal("dead01"))]
    assert [r.getMessage() for r in caplog.records] == [
        "host dut: not restored: the host is unreachable (the next run restores it)",
        "host tgen: not restored: not a host of this run (the next run with it restores it)"]


def test_a_port_gone_for_good_is_dropped_with_one_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    dut = RemoteMachine("dut", answers={("ip", "-j", "link", "show"): json.dumps([{"ifname": "lo"}])})
    install(monkeypatch, None, dut)
    dead = Journal("dead01", root=tmp_path, owner=_dead())
    dead.record(Entry("port", "dut", "ens1f0", state=PORT.as_dict()))  # the NIC was removed since
    with caplog.at_level(logging.WARNING):
        _open(Testbed("bed.yaml", (TestbedHost("dut", DUT_SSH),), "dut", "dut", ()), tmp_path)
    assert not dead.path.exists()  # never looked for again
    assert [r.getMessage() for r in caplog.records] == [
        "host dut: port ens1f0 is gone: not restored, and forgotten (vsperf will not look for it again)",
        f"removed leftover of a killed run: run dead01: journal {dead.path}"]


def test_a_host_that_fails_the_directory_removal_is_one_warning_and_the_sweep_goes_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    class Flaky(RemoteMachine):
        def run(self, argv: Any, **kwargs: Any) -> Any:
            if argv[0] == "find":
                raise HostLostError("lost the SSH connection to host dut (root@198.18.0.2:22)")
            return super().run(argv, **kwargs)

    dut = Flaky("dut")
    dut.links["vspdead01b0"] = None
    Journal("dead01", root=tmp_path, owner=_dead()).record(Entry("link", "dut", "vspdead01b0"))
    local = FakeMachine("local")
    with caplog.at_level(logging.WARNING):
        done = sweep_leftovers(tmp_path, {"local": local, "dut": dut})
    assert done == ["run dead01: host dut: link vspdead01b0 deleted",
                    f"run dead01: journal {tmp_path / 'dead01' / 'journal.json'}"]
    assert local.ran("find") == [tuple(run_dirs_removal("dead01"))]
    assert [r.getMessage() for r in caplog.records] == [
        "host dut: directories of run dead01 not removed: lost the SSH connection to host dut (root@198.18.0.2:22)"]


def test_an_empty_journal_of_a_dead_run_is_itself_the_leftover(tmp_path: Path) -> None:
    path = tmp_path / "dead01" / "journal.json"
    path.parent.mkdir()
    owner = _dead()
    path.write_text(json.dumps({"version": 2, "run_id": "dead01", "owner_pid": owner.pid,
                                "owner_start_ticks": owner.start_ticks, "entries": []}))
    local = FakeMachine("local")
    assert sweep_leftovers(tmp_path, {"local": local}) == [f"run dead01: journal {path}"]
    assert not path.exists() and not path.parent.exists()
    assert sweep_leftovers(tmp_path, {"local": local}) == []  # swept once


def test_unreadable_journals_are_left_alone_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    bad = tmp_path / "zz" / "journal.json"
    bad.parent.mkdir()
    bad.write_text("{")
    local = FakeMachine("local")
    assert sweep_leftovers(tmp_path, {"local": local}) == []
    assert bad.exists() and local.ran("find") == []
    assert [r.getMessage() for r in caplog.records] == [f"ignoring {bad}: unreadable journal: Expecting property name "
                                                        "enclosed in double quotes: line 1 column 2 (char 1)"]


def test_no_state_root_means_nothing_to_do(tmp_path: Path) -> None:
    local = FakeMachine("local")
    assert sweep_leftovers(tmp_path / "absent", {"local": local}) == []
    assert local.commands == [(("ip", "netns", "list"), None)]


def test_scratch_directories_of_dead_runs_are_removed(tmp_path: Path, no_scratch_dirs: list[Path]) -> None:
    orphan = tmp_path / "vsperf-dead01"
    orphan.mkdir()
    (orphan / "owner.json").write_text("{}")
    no_scratch_dirs.append(orphan)
    assert sweep_leftovers(tmp_path / "state", {"local": FakeMachine("local")}) == [f"work directory {orphan}"]
    assert not orphan.exists()


def test_namespaces_that_only_look_like_vsperfs_are_reported_never_removed(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    local = FakeMachine("local")
    local.netns |= {"vspabc123s", "vspa11ve1s", "vspzzzg0", "blue"}
    Journal("a11ve1", root=tmp_path).record(Entry("netns", "local", "vspa11ve1s"))
    sweep_leftovers(tmp_path, {"local": local})
    assert local.netns == {"vspabc123s", "vspa11ve1s", "vspzzzg0", "blue"}
    assert [r.getMessage() for r in caplog.records] == [
        "network namespace vspabc123s looks like vsperf's but no run records it; not removed "
        "(delete it with `ip netns delete vspabc123s` if it is yours)"]
    remote_only = FakeMachine("dut")
    sweep_leftovers(tmp_path, {"dut": remote_only})  # only this machine's namespaces are listed
    assert remote_only.commands == []


def test_a_killed_runs_kernel_setting_is_put_back_by_the_next_run(tmp_path: Path) -> None:
    """On this machine, for real: a knob file, the journal, and two runs of the local lab."""
    knob = tmp_path / "nr_hugepages"
    knob.write_text("0\n")
    state = tmp_path / "state"
    run = local_lab("zz9k1", CommandLog(tmp_path / "commands.log"), state_root=state)
    assert run.is_lab and list(run.hosts) == ["local"] and run.dut is run.trafficgen
    assert isinstance(run.dut.executor, LocalExecutor)
    set_knob(run.dut, str(knob), "64")
    assert knob.read_text() == "64\n"
    assert [(e.kind, e.name, dict(e.state)) for e in Journal.load(run.journal.path)] == [
        ("knob", str(knob), {"value": "0"})]
    # as if the run had been killed: its journal, with a dead owner, is put back by the next run
    killed = Journal.load(run.journal.path)
    Journal(killed.run_id, root=state, owner=_dead(), entries=killed.entries()).save()
    later = local_lab("zz9k2", CommandLog(None), state_root=state)
    later.sweep()  # when its run starts
    later.close()
    assert knob.read_text() == "0\n" and list(state.glob("*/journal.json")) == []
    assert f"sh 64 {knob}\n" in (tmp_path / "commands.log").read_text()  # the write, replayable


# --- opening: connections and port checks ----------------------------------------------------------


def test_open_connects_every_host_and_checks_every_cabled_port(
        tmp_path: Path, bed: Bed) -> None:
    _local, dut, gen = bed
    hosts = _open(_cabled(("ens1f0", "ens2f0"), ("ens1f1", "ens2f1")), tmp_path)
    assert (dut.connects, gen.connects) == (1, 1)
    assert hosts.dut.executor is dut and hosts.trafficgen.executor is gen and not hosts.is_lab
    assert [h.name for h in hosts] == ["dut", "gen"] and hosts.dut.journal is hosts.journal
    assert sorted(hosts.checked) == [("dut", "ens1f0"), ("dut", "ens1f1"), ("gen", "ens2f0"), ("gen", "ens2f1")]
    assert hosts.checked[("dut", "ens1f0")] == PortState("ens1f0", True, True, 1500, (), False, None)
    assert gen.ran("tc") == [("tc", "-j", "qdisc", "show", "dev", "ens2f0"), ("tc", "-j", "qdisc", "show", "dev",
                                                                              "ens2f1")]
    assert not hosts.journal.path.exists()  # checked, nothing changed yet
    hosts.close()
    assert (dut.closes, gen.closes) == (1, 1)


@pytest.mark.parametrize("host, ifname, state, message", [
    ("dut", "ens1f0", {"master": "br0"}, "host dut: interface ens1f0 is attached to br0; release it or pick another"),
    ("gen", "ens2f0", {"xdp": True}, "host gen: interface ens2f0 has an XDP program attached by someone else; "
                                     "detach it first (ip link set dev ens2f0 xdp off)"),
    ("gen", "ens2f0", {"qdiscs": [{"kind": "htb", "root": True}]}, "host gen: interface ens2f0 has root qdisc htb"),
    ("dut", "ens1f0", {"carrier": False}, "host dut: interface ens1f0 and host gen: interface ens2f0 are up but have "
                                          "no link; check the cable and the testbed file"),
])
def test_a_port_vsperf_must_not_use_is_refused_before_anything_is_made(
        tmp_path: Path, bed: Bed, host: str, ifname: str,
        state: dict[str, Any], message: str) -> None:
    _local, dut, gen = bed
    (dut if host == "dut" else gen).add_port(ifname, **state)
    with pytest.raises(PortError) as info:
        _open(_cabled(("ens1f0", "ens2f0")), tmp_path)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)
    assert (dut.closes, gen.closes) == (1, 1)  # the connections are closed on the way out
    assert not any(argv[:3] == ("ip", "link", "set") for m in (dut, gen) for argv, _ns in m.commands)


def test_a_missing_port_names_the_interfaces_there(tmp_path: Path,
                                                   bed: Bed) -> None:
    _local, dut, _gen = bed
    dut.answers[("ip", "-j", "link", "show")] = json.dumps([{"ifname": "lo"}, {"ifname": "ens1f0"},
                                                            {"ifname": "ens1f1"}])
    with pytest.raises(PortError, match=r"^host dut: no interface 'ens9' \(interfaces there: ens1f0, ens1f1\); "
                                        r"fix the testbed file's ports$"):
        _open(_cabled(("ens9", "ens2f0")), tmp_path)


def test_the_users_dut_ports_are_not_checked_in_trafficgen_mode(
        tmp_path: Path, bed: Bed) -> None:
    _local, dut, _gen = bed
    dut.add_port("ens1f0", master="ovsbr0")  # the user's switch has it
    hosts = _open(_cabled(("ens1f0", "ens2f0")), tmp_path, check_dut_ports=False)
    assert sorted(hosts.checked) == [("gen", "ens2f0")] and dut.ran("ip") == []


def test_a_generator_host_without_tc_is_only_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                       bed: Bed) -> None:
    _local, _dut, gen = bed
    gen.failing[("tc",)] = "tc: not found"
    hosts = _open(_cabled(("ens1f0", "ens2f0")), tmp_path)
    assert ("gen", "ens2f0") in hosts.checked
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        "host gen: qdiscs of ens2f0 not checked: command failed (exit 2): tc -j qdisc show dev ens2f0: tc: not found"]


def test_a_dpdk_port_must_be_bindable_and_not_in_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gen = RemoteMachine("gen")
    gen.add_port("ens2f0")
    testbed = Testbed("bed.yaml", (TestbedHost("dut", DUT_SSH), TestbedHost("gen", GEN_SSH)), "dut", "gen",
                      (Cable(DutPort(None, DEV, "vfio-pci"), GenPortSpec("ens2f0", None)),))
    dut = RemoteMachine("dut", sysfs=KernelTree(tmp_path / "tree"))
    dut.add_port("ens1f0", addresses=("10.1.1.1/24",))  # the device's interface: the host uses it
    install(monkeypatch, None, dut, gen)
    with pytest.raises(PortError, match=rf"^host dut: PCI device {DEV} is interface ens1f0, which has addresses "
                                        r"\(in use by the host\?\); refusing to take it for DPDK$"):
        _open(testbed, tmp_path)
    dut.add_port("ens1f0")
    hosts = _open(testbed, tmp_path)
    assert sorted(hosts.checked) == [("gen", "ens2f0")]  # the DPDK port has no kernel state to keep
    no_vfio = RemoteMachine("dut", sysfs=KernelTree(tmp_path / "tree2", drivers=("ixgbe",)))
    install(monkeypatch, None, no_vfio, gen)
    with pytest.raises(PortError, match=r"^host dut: driver vfio-pci is not loaded; run modprobe vfio-pci there$"):
        _open(testbed, tmp_path)


def test_an_unreachable_host_stops_the_open_and_closes_the_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  ) -> None:
    class Unreachable(RemoteMachine):
        def connect(self) -> None:
            raise HostUnreachableError("host gen (root@198.18.0.3:22): cannot connect: No route to host")

    dut, gen = RemoteMachine("dut"), Unreachable("gen")
    install(monkeypatch, None, dut, gen)
    with pytest.raises(UserError, match=r"^host gen .*No route to host$"):
        _open(_cabled(), tmp_path)
    assert dut.closes == 1 and dut.ran("ip") == []


# --- using, describing, releasing ----------------------------------------------------------------


def test_use_port_records_the_state_then_brings_the_port_up(tmp_path: Path,
                                                            bed: Bed) -> None:
    _local, dut, _gen = bed
    dut.add_port("ens1f0", up=False, carrier=False)
    hosts = _open(_cabled(("ens1f0", "ens2f0")), tmp_path)
    dut.commands.clear()
    hosts.use_port(hosts.dut, "ens1f0", mtu_bytes=2000)
    hosts.use_port(hosts.dut, "ens1f0", mtu_bytes=2000)  # recorded once: the state before the run
    assert dut.ran("ip", "link", "set") == [("ip", "link", "set", "dev", "ens1f0", "mtu", "2000", "up")] * 2
    assert [(e.kind, e.host, e.name, PortState.from_dict(dict(e.state)).admin_up)
            for e in Journal.load(hosts.journal.path)] == [("port", "dut", "ens1f0", False)]
    dut.add_port("ens1f0", mtu=2000)  # as the test left it
    done = hosts.close()
    assert done.done == ["host dut: port ens1f0: MTU 2000 -> 1500, set down"]
    assert not hosts.journal.path.exists() and dut.closes == 1


def test_release_removes_what_the_run_made_on_each_host_and_makes_dirs_again_after(
        tmp_path: Path, bed: Bed) -> None:
    _local, dut, gen = bed
    with _open(_cabled(), tmp_path) as hosts:
        assert hosts.dut.work_dir("ovs") == PurePosixPath("/tmp/vsperf-new001-ovs")
        hosts.trafficgen.net.add_netns("vspnew001g0")
        released = hosts.release()
        assert released.done == ["host gen: netns vspnew001g0 deleted", "host dut: dir /tmp/vsperf-new001-ovs removed"]
        assert dut.dirs == set() and gen.netns == set() and not hosts.journal.path.exists()
        dut.commands.clear()
        hosts.dut.work_dir("ovs")  # the next test of the run: made (and recorded) again
        assert dut.ran("mkdir") == [("mkdir", "-p", "-m", "700", "--", "/tmp/vsperf-new001-ovs")]
    assert dut.dirs == set() and (dut.closes, gen.closes) == (1, 1)  # the context closes it all


def test_describe_names_each_hosts_roles_address_and_facts(tmp_path: Path,
                                                           bed: Bed) -> None:
    local, dut, gen = bed
    dut.answers[("cat", "/proc/sys/kernel/hostname")] = "dut-01\n"
    gen.answers[("cat", "/proc/sys/kernel/hostname")] = "gen-01\n"
    testbed = Testbed("bed.yaml", (TestbedHost("dut", DUT_SSH), TestbedHost("gen", GEN_SSH), TestbedHost("local")),
                      "dut", "gen", (Cable(DutPort("ens1f0", None, "kernel"), GenPortSpec("ens2f0", None)),))
    described = _open(testbed, tmp_path).describe()
    assert [(d["name"], d["roles"], d["address"], d["hostname"], [n["name"] for n in d["nics"]])
            for d in described] == [
        ("dut", ["DUT"], "dut (root@198.18.0.2:22)", "dut-01", ["ens1f0"]),
        ("gen", ["traffic generator"], "gen (root@198.18.0.3:22)", "gen-01", ["ens2f0"]),
        ("local", ["unused"], "this machine", "unknown", [])]
    assert local.ran("cat", "/proc/sys/kernel/hostname") == [("cat", "/proc/sys/kernel/hostname")]
