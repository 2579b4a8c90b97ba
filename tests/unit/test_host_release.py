"""Teardown and leftover cleanup: every journaled thing is removed or put back, in the documented
order, through its host's executor; what cannot be done stays for the next run; nothing a run
does not make is ever touched."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_host import FakeMachine, RemoteMachine
from pci_tree import DEV, KernelTree

from vsperf.executor import LocalExecutor
from vsperf.host import release as release_module
from vsperf.host.journal import Entry, Journal, Owner
from vsperf.host.names import RunNames
from vsperf.host.pci import bind, read_binding
from vsperf.host.ports import PortState
from vsperf.host.proc import local_stat
from vsperf.host.release import PHASES, Released, reachable, release, safe_to_release, stop_recorded
from vsperf.remote.connection import HostLostError

HUGEPAGES = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
PORT = PortState("ens1f0", admin_up=False, carrier=False, mtu_bytes=1500, addresses=(),
                 xdp_attached=False, master=None)
# The port as the run left it: up, MTU 9000, an address of the test.
PORT_NOW = [{"ifname": "ens1f0", "flags": ["BROADCAST", "UP", "LOWER_UP"], "mtu": 9000,
             "addr_info": [{"family": "inet", "local": "198.18.0.9", "prefixlen": 30}]}]
TBF = {"kind": "tbf", "handle": "824d:", "root": True}
CLSACT = {"kind": "clsact", "handle": "ffff:", "parent": "ffff:fff1"}


def _journal(tmp_path: Path) -> Journal:
    return Journal("abc123", root=tmp_path / "state", owner=Owner(1, 1))


def _machine(tmp_path: Path) -> FakeMachine:
    """A machine holding one of everything a run makes or changes."""
    tree = KernelTree(tmp_path / "sys")
    machine = FakeMachine("local", sysfs=tree, answers={
        ("ip", "-j", "-d", "addr", "show", "dev", "ens1f0"): json.dumps(PORT_NOW),
        ("tc", "-j", "qdisc", "show", "dev", "vspabc123g0"): json.dumps([TBF, CLSACT]),
        ("tc", "qdisc", "del", "dev", "vspabc123g0", "root"): "",
        ("tc", "qdisc", "del", "dev", "vspabc123g0", "clsact"): "",
    })
    machine.netns |= {"vspabc123s", "vspabc123g0"}
    machine.links.update({"vspabc123b0": None, "vspabc123g0": "vspabc123g0", "ens1f0": None})
    machine.dirs.add("/tmp/vsperf-abc123-logs")
    machine.files[HUGEPAGES] = "64\n"
    return machine


def _record_everything(journal: Journal, machine: FakeMachine) -> tuple[int, int]:
    """One entry of every kind, kinds interleaved as a deployment records them; the PIDs of the
    two processes (the second started inside the switch's namespace)."""
    assert machine.sysfs is not None
    original = bind(machine.sysfs, DEV, "vfio-pci")
    vswitchd = machine.add_process(name="ovs-vswitchd")
    in_netns = machine.add_process(netns="vspabc123s", name="testpmd")
    journal.record(Entry("dir", "local", "/tmp/vsperf-abc123-logs"))
    journal.record(Entry("netns", "local", "vspabc123s"))
    journal.record(Entry("process", "local", "ovs-vswitchd", pid=vswitchd.pid, start_ticks=vswitchd.start_ticks))
    journal.record(Entry("port", "local", "ens1f0", state=PORT.as_dict()))
    journal.record(Entry("binding", "local", DEV, state={"pci": DEV, "driver": original.driver,
                                                         "override": original.override}))
    journal.record(Entry("knob", "local", HUGEPAGES, state={"value": "0"}))
    journal.record(Entry("link", "local", "vspabc123g0", netns="vspabc123g0"))
    journal.record(Entry("qdisc", "local", "vspabc123g0", netns="vspabc123g0",
                         state={"qdisc": "root", "root_before": "noqueue"}))
    journal.record(Entry("link", "local", "vspabc123b0"))
    journal.record(Entry("qdisc", "local", "vspabc123g0", netns="vspabc123g0",
                         state={"qdisc": "clsact", "root_before": "noqueue"}))
    journal.record(Entry("process", "local", "testpmd", pid=in_netns.pid, start_ticks=in_netns.start_ticks))
    return vswitchd.pid, in_netns.pid


def test_everything_is_undone_kind_by_kind_newest_first_and_the_journal_is_gone(tmp_path: Path) -> None:
    machine = _machine(tmp_path)
    journal = _journal(tmp_path)
    vswitchd, testpmd = _record_everything(journal, machine)
    out = release(journal, {"local": machine})
    assert PHASES == ("process", "qdisc", "netns", "link", "binding", "knob", "port", "dir")
    assert out.done == [
        f"process testpmd (pid {testpmd}) stopped",
        f"process ovs-vswitchd (pid {vswitchd}) stopped",
        "vspabc123g0: clsact qdisc deleted",
        "vspabc123g0: root qdisc tbf deleted",
        "netns vspabc123s deleted",
        "link vspabc123b0 deleted",
        "link vspabc123g0 in vspabc123g0 deleted",
        f"binding {DEV} back to ixgbe",
        f"knob {HUGEPAGES} back to 0",
        "port ens1f0: address 198.18.0.9/30 removed, MTU 9000 -> 1500, set down",
        "dir /tmp/vsperf-abc123-logs removed",
    ]
    assert out.errors == [] and out.lost_hosts == []
    assert not journal.path.exists() and not journal.path.parent.exists()
    # what the machine saw: SIGTERM to each process (checked against its start time), qdiscs in
    # its namespace, the port put back exactly, the driver and the setting back
    assert [s for s in machine.signals] == [(testpmd, signal.SIGTERM), (vswitchd, signal.SIGTERM)]
    assert [(a, ns) for a, ns in machine.commands if a[:3] == ("tc", "qdisc", "del")] == [
        (("tc", "qdisc", "del", "dev", "vspabc123g0", "clsact"), "vspabc123g0"),
        (("tc", "qdisc", "del", "dev", "vspabc123g0", "root"), "vspabc123g0")]
    assert machine.ran("ip", "addr") + machine.ran("ip", "link", "set") == [
        ("ip", "addr", "del", "198.18.0.9/30", "dev", "ens1f0"),
        ("ip", "link", "set", "dev", "ens1f0", "mtu", "1500"),
        ("ip", "link", "set", "dev", "ens1f0", "down")]
    assert machine.sysfs is not None and read_binding(machine.sysfs, DEV).driver == "ixgbe"
    assert machine.files[HUGEPAGES] == "0\n"
    assert machine.netns == {"vspabc123g0"} and machine.links == {"ens1f0": None} and machine.dirs == set()
    assert machine.procs == {}


def test_what_is_already_gone_is_not_an_error(tmp_path: Path) -> None:
    machine = _machine(tmp_path)
    journal = _journal(tmp_path)
    _record_everything(journal, machine)
    gone = FakeMachine("local", sysfs=machine.sysfs, answers={
        ("ip", "-j", "-d", "addr", "show", "dev", "ens1f0"): json.dumps([{**PORT_NOW[0], "mtu": 1500, "flags": [],
                                                                          "addr_info": []}]),
        ("tc", "-j", "qdisc", "show", "dev", "vspabc123g0"): "[]"})
    gone.links["ens1f0"] = None
    gone.files[HUGEPAGES] = "64\n"
    assert machine.sysfs is not None
    machine.sysfs.write(Path(f"/sys/bus/pci/devices/{DEV}/driver_override"), "")  # type: ignore[arg-type]
    out = release(journal, {"local": gone})
    # only the kernel setting, which is written back whatever it holds, and the binding that was left
    assert [d.split(" back")[0] for d in out.done] == [f"binding {DEV}", f"knob {HUGEPAGES}"]
    assert out.errors == [] and not journal.path.exists()
    assert gone.signals == [] and gone.ran("rm") == [] and gone.ran("ip", "netns", "del") == []


def test_a_failure_stays_in_the_journal_for_the_next_run_and_the_rest_goes_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    machine = _machine(tmp_path)
    machine.failing[("ip", "netns", "del")] = "Device or resource busy"
    journal = _journal(tmp_path)
    _record_everything(journal, machine)
    out = release(journal, {"local": machine})
    assert len(out.done) == 10
    assert out.errors == ["netns vspabc123s: command failed (exit 2): ip netns del vspabc123s: "
                          "Device or resource busy"]
    assert [e.describe() for e in Journal.load(journal.path)] == ["netns vspabc123s"]
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR] == [
        "netns vspabc123s: not restored: command failed (exit 2): ip netns del vspabc123s: Device or resource busy "
        "(the next run tries again)"]


def test_things_no_run_of_this_id_makes_are_never_touched(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    machine = FakeMachine("local")
    journal = _journal(tmp_path)
    foreign = [
        Entry("netns", "local", "dpxns0"),
        Entry("netns", "local", "vspabc123"),  # the tag alone: no role
        Entry("link", "local", "eth0"),
        Entry("link", "local", "vspffffffg0"),  # another run's tag
        Entry("link", "local", "vspabc123x0"),  # not one of the role letters
        Entry("dir", "local", "/"),
        Entry("dir", "local", "/tmp"),
        Entry("dir", "local", "/tmp/somebody-else"),
        Entry("dir", "local", "/tmp/vsperf-abc124-logs"),
        Entry("dir", "local", "/home/vsperf-abc123-logs"),
        Entry("dir", "local", "/var/run/dpdk/vspffffffo"),
        Entry("dir", "local", "/var/run/dpdk/rte"),
        Entry("process", "local", "init", pid=1, start_ticks=1),
        Entry("process", "local", "no start time", pid=1234, start_ticks=0),
    ]
    for entry in foreign:
        journal.record(entry)
    out = release(journal, {"local": machine})
    assert out == Released() and machine.commands == []
    assert not journal.path.exists()  # forgotten: a later run would refuse them again
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == len(foreign)
    assert "not touching netns dpxns0: not something run abc123 creates" in warnings
    assert "not touching process no start time (pid 1234): not something run abc123 creates" in warnings


def test_a_qdisc_of_a_kind_vsperf_never_adds_is_forgotten_untouched(tmp_path: Path) -> None:
    machine = FakeMachine("local")
    journal = _journal(tmp_path)
    journal.record(Entry("qdisc", "local", "eth0", state={"qdisc": "htb", "root_before": "noqueue"}))
    assert release(journal, {"local": machine}) == Released() and machine.commands == []
    assert not journal.path.exists()


@pytest.mark.parametrize("entry, safe", [
    (Entry("netns", "h", "vspabc123s"), True),
    (Entry("netns", "h", "vspabc123v0"), True),
    (Entry("link", "h", "vspabc123v0s1"), True),
    (Entry("link", "h", "ovs-netdev"), True),  # the userspace datapath's own interface
    (Entry("netns", "h", "ovs-netdev"), False),
    (Entry("link", "h", "vspabc12g0"), False),
    (Entry("dir", "h", "/tmp/vsperf-abc123-files"), True),
    (Entry("dir", "h", "/var/run/dpdk/vspabc123o"), True),
    (Entry("dir", "h", "/var/run/dpdk/vspabc123pg0"), True),
    (Entry("dir", "h", "/tmp/vsperf-abc123"), False),
    (Entry("dir", "h", "/tmp/x/vsperf-abc123-files"), False),
    (Entry("process", "h", "p", pid=2, start_ticks=5), True),
    (Entry("process", "h", "p", pid=2, start_ticks=0), False),
    (Entry("port", "h", "eth0"), True),  # put back what was there: any interface the testbed names
    (Entry("knob", "h", HUGEPAGES), True),
])
def test_safe_to_release(entry: Entry, safe: bool) -> None:
    assert safe_to_release(entry, RunNames("abc123")) is safe


def test_an_unreachable_host_keeps_its_entries_with_one_warning(tmp_path: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    local, dut = FakeMachine("local"), RemoteMachine("dut")
    local.netns.add("vspabc123s")
    dut.connected = False
    journal = _journal(tmp_path)
    journal.record(Entry("netns", "local", "vspabc123s"))
    journal.record(Entry("link", "dut", "vspabc123b0"))
    journal.record(Entry("dir", "dut", "/tmp/vsperf-abc123-logs"))
    journal.record(Entry("port", "gen", "ens2"))  # a host this run has no executor for
    out = release(journal, {"local": local, "dut": dut})
    assert out.done == ["netns vspabc123s deleted"] and out.errors == []
    assert out.lost_hosts == ["dut", "gen"] and dut.commands == []
    assert [e.host for e in Journal.load(journal.path)] == ["dut", "dut", "gen"]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == [
        "host dut: not restored: the host is unreachable (the next run restores it)",
        "host gen: not restored: not a host of this run (the next run with it restores it)"]


def test_only_the_hosts_asked_for_are_released(tmp_path: Path) -> None:
    local, dut = FakeMachine("local"), RemoteMachine("dut")
    local.netns.add("vspabc123s")
    dut.links["vspabc123b0"] = None
    journal = _journal(tmp_path)
    journal.record(Entry("netns", "local", "vspabc123s"))
    journal.record(Entry("link", "dut", "vspabc123b0"))
    out = release(journal, {"local": local, "dut": dut}, hosts=lambda h: h == "dut")
    assert out.done == ["host dut: link vspabc123b0 deleted"] and local.commands == []
    assert [e.host for e in journal] == ["local"]


def test_a_port_gone_for_good_is_dropped_with_one_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    dut = RemoteMachine("dut", answers={("ip", "-j", "link", "show"): json.dumps([{"ifname": "lo"},
                                                                                  {"ifname": "ens9"}])})
    journal = _journal(tmp_path)
    journal.record(Entry("port", "dut", "ens1f0", state=PORT.as_dict()))
    out = release(journal, {"dut": dut})
    assert out == Released() and not journal.path.exists()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == [
        "host dut: port ens1f0 is gone: not restored, and forgotten (vsperf will not look for it again)"]


def test_reachable() -> None:
    assert reachable(None) is False
    assert reachable(LocalExecutor()) is True  # this machine has no connection to lose
    ssh = RemoteMachine("dut")
    assert reachable(ssh) is True
    ssh.connected = False
    assert reachable(ssh) is False


# --- stopping a recorded process ----------------------------------------------------------------


def test_stop_recorded_sends_sigterm_then_sigkill_to_one_that_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(release_module, "_TERM_WAIT_S", 0.1)
    machine = FakeMachine("dut")
    stubborn = machine.add_process(survives_term=True)
    assert stop_recorded(machine, stubborn.pid, stubborn.start_ticks) is True
    assert machine.signals == [(stubborn.pid, signal.SIGTERM), (stubborn.pid, signal.SIGKILL)]
    assert machine.procs == {}
    assert stop_recorded(machine, stubborn.pid, stubborn.start_ticks) is False  # gone now


def test_stop_recorded_leaves_a_reused_pid_and_a_zombie_alone() -> None:
    machine = FakeMachine("dut")
    other = machine.add_process()
    assert stop_recorded(machine, other.pid, other.start_ticks - 10) is False
    zombie = machine.add_process()
    zombie.state = "Z"
    assert stop_recorded(machine, zombie.pid, zombie.start_ticks) is False
    assert machine.signals == []


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def _ticks(pid: int) -> int:
    stat = local_stat(pid)
    assert stat is not None
    return stat.start_ticks


def test_stop_recorded_stops_the_recorded_process_on_this_machine() -> None:
    proc = _sleeper()
    try:
        assert stop_recorded(LocalExecutor(), proc.pid, _ticks(proc.pid)) is True
        assert proc.wait(timeout=5) == -signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()


def test_a_reused_pid_on_this_machine_is_never_signalled() -> None:
    proc = _sleeper()
    try:
        # Same PID, another start time: what a reused PID looks like.
        assert stop_recorded(LocalExecutor(), proc.pid, _ticks(proc.pid) - 10) is False
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()
    assert stop_recorded(LocalExecutor(), proc.pid, 1) is False  # gone: nothing to stop
    assert os.getpid() > 1


def test_what_is_gone_for_good_is_dropped_with_one_warning_and_never_retried(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # A PCI device taken out of the host, a kernel setting the kernel no longer has, and the port
    # of a qdisc deleted with its namespace: each undo fails, and each object is gone for good.
    dut = RemoteMachine("dut", sysfs=KernelTree(tmp_path / "sys"))
    journal = _journal(tmp_path)
    journal.record(Entry("binding", "dut", "0000:5e:00.0", state={"pci": "0000:5e:00.0", "driver": "ixgbe",
                                                                  "override": None}))
    journal.record(Entry("knob", "dut", "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages",
                         state={"value": "0"}))
    journal.record(Entry("port", "dut", "ens1f0", state=PORT.as_dict()))
    out = release(journal, {"dut": dut})
    assert out == Released() and not journal.path.exists()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == [
        "host dut: binding 0000:5e:00.0 is gone: not restored, and forgotten (vsperf will not look for it again)",
        "host dut: knob /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages is gone: not restored, and "
        "forgotten (vsperf will not look for it again)",
        "host dut: port ens1f0 is gone: not restored, and forgotten (vsperf will not look for it again)"]


def test_a_failure_on_something_still_there_is_kept_with_one_error(tmp_path: Path,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    dut = RemoteMachine("dut")
    dut.add_port("ens1f0", mtu=9000)
    dut.failing[("ip", "link", "set", "dev", "ens1f0", "mtu")] = "RTNETLINK answers: Device or resource busy"
    journal = _journal(tmp_path)
    journal.record(Entry("port", "dut", "ens1f0", state=PORT.as_dict()))
    out = release(journal, {"dut": dut})
    assert len(out.errors) == 1 and [e.name for e in Journal.load(journal.path)] == ["ens1f0"]
    assert [r.levelname for r in caplog.records if r.levelno >= logging.WARNING] == ["ERROR"]


class _LostMachine(RemoteMachine):
    def _complete(self, cmd: Any, timeout_s: float | None, input_text: str | None) -> Any:
        raise HostLostError("lost the SSH connection to host dut")


def test_gone_is_false_when_it_cannot_tell() -> None:
    assert release_module.gone(Entry("port", "dut", "ens1f0"), _LostMachine("dut")) is False
    failing = RemoteMachine("dut")
    failing.failing[("ip",)] = "ip: cannot talk to the kernel"
    assert release_module.gone(Entry("port", "dut", "ens1f0"), failing) is False
    assert release_module.gone(Entry("netns", "dut", "vspabc123s"), FakeMachine("dut")) is False
