"""The run's journal: on disk at each change, read back, refused when foreign, found by the next
run once its owner is gone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vsperf.host.journal import (
    ENTRY_KINDS,
    JOURNAL_FILE,
    JOURNAL_VERSION,
    Entry,
    Journal,
    Owner,
    leftover_journals,
)
from vsperf.host.pci import PciBinding
from vsperf.host.ports import PortState
from vsperf.host.proc import own_start_ticks

STATE = PortState("ens1f0", admin_up=False, carrier=False, mtu_bytes=1500, addresses=("198.18.0.1/30",),
                  xdp_attached=False, master=None)
PORT = json.loads(json.dumps(STATE.as_dict()))  # as the file holds it (a list of addresses)


def _on_disk(journal: Journal) -> dict[str, object]:
    data = json.loads(journal.path.read_text())
    assert isinstance(data, dict)
    return data


def _dead_owner() -> Owner:
    """The owner of a killed run: a process that has ended."""
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                           check=True)
    return Owner(int(child.stdout), 12345)


def test_each_change_is_on_disk_at_once(tmp_path: Path) -> None:
    journal = Journal("abc123", root=tmp_path, owner=Owner(4242, 1000))
    ns = journal.record(Entry("netns", "local", "vspabc123s"))
    journal.record(Entry("process", "dut", "ovs-vswitchd", pid=77, start_ticks=1225))
    assert journal.path == tmp_path / "abc123" / JOURNAL_FILE
    data = _on_disk(journal)
    assert (data["version"], data["run_id"], data["owner_pid"], data["owner_start_ticks"]) == (
        JOURNAL_VERSION, "abc123", 4242, 1000)
    assert data["entries"] == [
        {"kind": "netns", "host": "local", "name": "vspabc123s", "netns": None, "pid": 0, "start_ticks": 0,
         "state": {}},
        {"kind": "process", "host": "dut", "name": "ovs-vswitchd", "netns": None, "pid": 77, "start_ticks": 1225,
         "state": {}},
    ]
    journal.forget(ns)
    assert [e["kind"] for e in _on_disk(journal)["entries"]] == ["process"]  # type: ignore[index]
    assert not list(tmp_path.glob(f"abc123/.{JOURNAL_FILE}*"))  # no temporary file left by the atomic write


def test_load_round_trips_every_kind(tmp_path: Path) -> None:
    journal = Journal("abc123", root=tmp_path, owner=Owner(1, 2))
    entries = [
        Entry("process", "local", "ovs-vswitchd", pid=4321, start_ticks=99),
        Entry("netns", "local", "vspabc123s"),
        Entry("link", "local", "vspabc123g0", netns="vspabc123g0"),
        Entry("dir", "dut", "/tmp/vsperf-abc123-logs"),
        Entry("port", "dut", "ens1f0", state=PORT),
        Entry("binding", "dut", "0000:3b:00.0", state={"pci": "0000:3b:00.0", "driver": "ixgbe", "override": None}),
        Entry("knob", "dut", "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", state={"value": "0"}),
        Entry("qdisc", "gen", "b0", state={"qdisc": "root", "root_before": "noqueue"}),
    ]
    assert sorted(e.kind for e in entries) == sorted(ENTRY_KINDS)
    for entry in entries:
        journal.record(entry)
    loaded = Journal.load(journal.path)
    assert (loaded.run_id, loaded.owner, loaded.root) == ("abc123", Owner(1, 2), tmp_path)
    assert loaded.entries() == entries and list(loaded) == entries and len(loaded) == 8
    assert loaded.hosts() == {"local", "dut", "gen"}
    assert PortState.from_dict(dict(loaded.entries()[4].state)) == STATE
    assert PciBinding(**loaded.entries()[5].state) == PciBinding("0000:3b:00.0", "ixgbe", None)


def test_the_first_record_of_an_object_wins(tmp_path: Path) -> None:
    journal = Journal("abc123", root=tmp_path)
    journal.record(Entry("port", "dut", "ens1f0", state=STATE.as_dict()))
    journal.record(Entry("port", "dut", "ens1f0", state={**STATE.as_dict(), "mtu_bytes": 9000}))  # as vsperf left it
    journal.record(Entry("netns", "local", "vspabc123s"))
    journal.record(Entry("netns", "local", "vspabc123s"))
    assert [(e.kind, e.state.get("mtu_bytes")) for e in journal] == [("port", 1500), ("netns", None)]
    # the same name on another host, or in another namespace, is another object
    journal.record(Entry("port", "gen", "ens1f0", state=STATE.as_dict()))
    journal.record(Entry("link", "local", "vspabc123g0", netns="vspabc123g0"))
    journal.record(Entry("link", "local", "vspabc123g0"))
    assert len(journal) == 5


def test_processes_are_one_object_per_pid_and_qdiscs_one_per_kind(tmp_path: Path) -> None:
    journal = Journal("prc001", root=tmp_path)
    journal.record(Entry("process", "dut", "ovs-vswitchd", pid=4242, start_ticks=123456))
    journal.record(Entry("process", "dut", "ovs-vswitchd", pid=4343, start_ticks=123999))  # restarted
    journal.record(Entry("qdisc", "gen", "b0", state={"qdisc": "clsact", "root_before": "noqueue"}))
    journal.record(Entry("qdisc", "gen", "b0", state={"qdisc": "clsact", "root_before": "noqueue"}))
    journal.record(Entry("qdisc", "gen", "b0", state={"qdisc": "root", "root_before": "noqueue"}))
    assert [(e.pid, e.start_ticks) for e in Journal.load(journal.path) if e.kind == "process"] == [
        (4242, 123456), (4343, 123999)]
    assert [e.state["qdisc"] for e in journal if e.kind == "qdisc"] == ["clsact", "root"]
    journal.forget(Entry("process", "dut", "ovs-vswitchd", pid=4242))  # by PID: its start time is not needed
    journal.forget(Entry("qdisc", "gen", "b0", state={"qdisc": "clsact"}))
    assert [(e.kind, e.pid, e.state.get("qdisc")) for e in Journal.load(journal.path)] == [
        ("process", 4343, None), ("qdisc", 0, "root")]


def test_nothing_recorded_nothing_written_and_the_last_forget_removes_file_and_directory(tmp_path: Path) -> None:
    journal = Journal("abc123", root=tmp_path)
    assert not journal.path.parent.exists()
    journal.forget(Entry("netns", "local", "vspabc123s"))  # nothing to forget: still nothing written
    assert not journal.path.parent.exists()
    proc = journal.record(Entry("process", "local", "x", pid=5, start_ticks=1))
    binding = journal.record(Entry("binding", "dut", "0000:3b:00.0", state={"pci": "0000:3b:00.0", "driver": None,
                                                                            "override": None}))
    journal.forget(proc)
    assert journal.path.exists()
    journal.forget(binding)
    assert not journal.path.exists() and not journal.path.parent.exists()


def test_a_directory_holding_other_files_of_the_run_stays(tmp_path: Path) -> None:
    journal = Journal("abc123", root=tmp_path)
    entry = journal.record(Entry("netns", "local", "vspabc123s"))
    (journal.path.parent / "other").write_text("x")
    journal.forget(entry)
    assert not journal.path.exists() and (journal.path.parent / "other").exists()


@pytest.mark.parametrize("content, reason", [
    ("not json", "unreadable journal"),
    ('{"version": 99}', "not a vsperf journal of version 2 (version 99)"),
    ('{"version": 1, "run_id": "abc123", "resources": []}', "not a vsperf journal of version 2 (version 1)"),
    ("[]", "not a vsperf journal of version 2 (version None)"),
    ('{"version": 2, "run_id": "abc123"}', "malformed journal"),
    ('{"version": 2, "run_id": "ABC", "owner_pid": 1, "owner_start_ticks": 1}', "malformed journal"),
    ('{"version": 2, "run_id": "abc123", "owner_pid": 1, "owner_start_ticks": 1, '
     '"entries": [{"kind": "volume", "host": "local", "name": "x"}]}', "unknown journal entry kind 'volume'"),
    (b"\xff\xfe".decode("latin-1"), "unreadable journal"),
])
def test_foreign_files_are_refused_in_one_line_naming_the_file(tmp_path: Path, content: str, reason: str) -> None:
    path = tmp_path / "x" / JOURNAL_FILE
    path.parent.mkdir()
    path.write_text(content, encoding="latin-1")
    with pytest.raises(ValueError) as info:
        Journal.load(path)
    assert str(info.value).startswith(f"{path}: ") and reason in str(info.value) and "\n" not in str(info.value)


def test_an_entry_written_with_only_its_required_fields_loads_with_defaults(tmp_path: Path) -> None:
    path = tmp_path / "abc123" / JOURNAL_FILE
    path.parent.mkdir()
    path.write_text(json.dumps({"version": 2, "run_id": "abc123", "owner_pid": 1, "owner_start_ticks": 2,
                                "entries": [{"kind": "dir", "host": "local", "name": "/tmp/vsperf-abc123-x"}]}))
    assert Journal.load(path).entries() == [Entry("dir", "local", "/tmp/vsperf-abc123-x")]


def test_unknown_kinds_and_bad_run_ids_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown journal entry kind 'volume'"):
        Entry.from_dict({"kind": "volume", "host": "local", "name": "x"})
    with pytest.raises(ValueError, match="run id"):
        Journal("../etc")


def test_descriptions_name_the_host_unless_it_is_this_machine() -> None:
    assert Entry("process", "local", "ovs-vswitchd", pid=7, start_ticks=1).describe() == "process ovs-vswitchd (pid 7)"
    assert Entry("process", "dut", "testpmd", pid=7).describe() == "host dut: process testpmd (pid 7)"
    assert Entry("link", "local", "vspabc123g0", netns="vspabc123g0").describe() == "link vspabc123g0 in vspabc123g0"
    assert Entry("link", "dut", "vspabc123b0").describe() == "host dut: link vspabc123b0"
    assert Entry("qdisc", "gen", "b0", state={"qdisc": "clsact"}).describe() == "host gen: b0: clsact qdisc"
    assert Entry("port", "dut", "ens1f0").describe() == "host dut: port ens1f0"
    assert Entry("binding", "dut", "0000:3b:00.0").describe() == "host dut: binding 0000:3b:00.0"
    assert Entry("knob", "local", "/proc/sys/x").describe() == "knob /proc/sys/x"
    assert Entry("netns", "local", "vspabc123s").describe() == "netns vspabc123s"
    assert Entry("dir", "dut", "/tmp/vsperf-abc123-x").describe() == "host dut: dir /tmp/vsperf-abc123-x"


def test_the_owner_is_this_process_while_it_runs() -> None:
    me = Owner.current()
    assert me == Owner(os.getpid(), own_start_ticks()) and me.start_ticks > 0 and me.alive
    assert not Owner(os.getpid(), me.start_ticks - 100).alive  # our PID, another start: a reused PID
    assert not _dead_owner().alive


def test_journals_of_dead_owners_are_leftovers_live_ones_and_junk_are_not(tmp_path: Path) -> None:
    assert leftover_journals(tmp_path / "absent") == ([], [])
    dead = Journal("dead01", root=tmp_path, owner=_dead_owner())
    dead.record(Entry("port", "dut", "ens1f0", state=PORT))
    reused = Journal("feed01", root=tmp_path, owner=Owner(os.getpid(), own_start_ticks() - 100))
    reused.record(Entry("netns", "local", "vspfeed01s"))
    live = Journal("11ve01", root=tmp_path)
    live.record(Entry("netns", "local", "vsp11ve01s"))
    (tmp_path / "junk01").mkdir()
    (tmp_path / "junk01" / JOURNAL_FILE).write_text("{not json")
    found, problems = leftover_journals(tmp_path)
    assert [j.run_id for j in found] == ["dead01", "feed01"]
    assert found[0].entries() == dead.entries()
    assert len(problems) == 1 and problems[0].startswith(str(tmp_path / "junk01" / JOURNAL_FILE))
    assert (tmp_path / "junk01" / JOURNAL_FILE).exists()  # not ours to judge: left alone
