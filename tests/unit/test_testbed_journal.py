"""The testbed journal: saved at each record, read back, found by the next run once its owner is gone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from vsperf.executor import CommandLog, LocalExecutor
from vsperf.testbed.journal import PortJournal, leftover_journals
from vsperf.testbed.model import Testbed, TestbedHost
from vsperf.host.pci import PciBinding
from vsperf.host.ports import PortState
from vsperf.testbed.session import TestbedSession, host_run_dirs_removal

STATE = PortState("ens1f0", admin_up=False, carrier=False, mtu_bytes=1500, addresses=("198.18.0.1/30",),
                  xdp_attached=False, master=None)


def test_round_trip_and_removal(tmp_path: Path) -> None:
    journal = PortJournal.create(tmp_path, "abc123")
    assert not journal.path.exists()  # nothing recorded, nothing written
    journal.record_port("dut", STATE)
    journal.record_port("dut", STATE)  # the first record of a port wins; no duplicate
    journal.record_binding("dut", PciBinding("0000:3b:00.0", "ixgbe", None))
    journal.record_knob("dut", "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "0")
    back = PortJournal.load(journal.path)
    assert back.ports == [("dut", STATE)] and back.bindings == journal.bindings and back.knobs == journal.knobs
    assert back.owner_alive and leftover_journals(tmp_path) == []  # this process owns it
    journal.forget_port("dut", "ens1f0")
    journal.forget_binding("dut", "0000:3b:00.0")
    journal.forget_knob("dut", "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages")
    assert not journal.path.exists()


def test_a_dead_owners_journal_is_a_leftover(tmp_path: Path) -> None:
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    journal = PortJournal(tmp_path / "testbed-dead01.json", int(child.stdout), 12345.0, [("dut", STATE)])
    journal.save()
    (tmp_path / "testbed-junk.json").write_text("{not json")
    found = leftover_journals(tmp_path)
    assert [j.path.name for j in found] == ["testbed-dead01.json"] and found[0].ports == [("dut", STATE)]


def test_kernel_settings_are_put_back_by_the_next_run(tmp_path: Path) -> None:
    knob = tmp_path / "nr_hugepages"
    knob.write_text("0\n")
    testbed = Testbed("tb.yaml", (TestbedHost("local"),), "local", "local", ())
    session = TestbedSession.open(testbed, run_id="k1", state_root=tmp_path, command_log=CommandLog(None))
    session.set_knob("local", str(knob), "64")
    assert knob.read_text() == "64\n"
    journal = PortJournal.load(tmp_path / "testbed-k1.json")
    assert journal.knobs == [("local", str(knob), "0")]
    # as if the run had been killed: its journal, with a dead owner, is restored by the next run
    journal.owner_pid, journal.owner_start_time = 1, 0.0
    journal.save()
    later = TestbedSession.open(testbed, run_id="k2", state_root=tmp_path, command_log=CommandLog(None))
    later.close()
    assert knob.read_text() == "0\n" and list(tmp_path.glob("testbed-*.json")) == []
    assert isinstance(later.executors["local"], LocalExecutor)


def test_created_links_are_journaled_and_an_older_journal_without_them_loads(tmp_path: Path) -> None:
    journal = PortJournal.create(tmp_path, "lnk001")
    journal.record_link("dut", "vsperflnk001b0")
    journal.record_link("dut", "vsperflnk001b0")  # once
    assert PortJournal.load(journal.path).links == [("dut", "vsperflnk001b0")]
    journal.forget_link("dut", "vsperflnk001b0")
    assert not journal.path.exists()
    journal.record_port("dut", STATE)
    data = journal.as_dict()
    del data["links"]  # as a run before links were journaled wrote it
    journal.path.write_text(json.dumps(data))
    assert PortJournal.load(journal.path).links == []


def test_a_killed_runs_host_directories_are_found_by_its_run_id(tmp_path: Path) -> None:
    assert PortJournal.create(tmp_path, "abc123").run_id == "abc123"
    mine = [tmp_path / "vsperf-abc123-vsgen", tmp_path / "vspabc123o"]  # its files, OVS-DPDK's runtime dir
    other = [tmp_path / "vsperf-abc124-vsgen", tmp_path / "vspabc1234o", tmp_path / "vspabc123"]
    for d in mine + other:
        d.mkdir()
        (d / "vsgen-engine").write_text("x")
    argv = host_run_dirs_removal("abc123")
    assert argv[:3] == ["find", "/tmp", "/var/run/dpdk"]  # its files, its DPDK runtime directories
    subprocess.run([argv[0], str(tmp_path), *argv[3:]], check=True)  # the same command, on tmp_path
    assert not any(d.exists() for d in mine) and all(d.exists() for d in other)


def test_daemons_are_journaled_by_pid_and_start_time(tmp_path: Path) -> None:
    journal = PortJournal.create(tmp_path, "prc001")
    journal.record_process("dut", 4242, 123456, "ovs-vswitchd")
    assert PortJournal.load(journal.path).processes == [("dut", 4242, 123456, "ovs-vswitchd")]
    journal.forget_process("dut", 4242)
    assert not journal.path.exists()
