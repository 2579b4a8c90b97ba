"""Collectors on a testbed host: the DUT host's process table, /proc/PID and /proc/stat read
through its executor (recorded output here) and parsed by the same code as this machine's."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from recorded_host import RecordedHost
from settings_util import make_settings

from vsperf.collectors.base import CollectorTarget
from vsperf.collectors.pidstat import MIN_WINDOW_S, PIDSTAT_COLUMNS, PidstatCollector, pidstat_row, read_host_sample
from vsperf.collectors.procps import PS_ARGV, HostFacts, PsRow, host_facts, parse_ps, select_processes
from vsperf.executor import LocalExecutor
from vsperf.host.workdir import RunContext

PS = """      1       0     0 systemd
   4100       1     0 ovsdb-server
   4242       1     0 ovs-vswitchd
   4300    4242     0 handler 1
   4301    4300   106 sh
   5000       1  1000 a-very-long-pro
   5001       1  1000 bash
"""
MEMINFO = "MemTotal:       16384000 kB\nMemFree:         8000000 kB\n"


def stat_line(pid: int, name: str, *, utime: int, stime: int, guest: int = 0, state: str = "S") -> str:
    """A /proc/PID/stat line (proc(5)'s 52 fields) with the given times."""
    fields = ["0"] * 53
    fields[1], fields[2], fields[3] = str(pid), f"({name})", state
    fields[10], fields[12] = "1000", "2"  # minflt, majflt
    fields[14], fields[15], fields[43] = str(utime), str(stime), str(guest)
    fields[22], fields[23], fields[24], fields[39] = "777", str(512 * 1024 * 1024), "25600", "1"
    return " ".join(fields[1:]) + "\n"


IO = "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 4096\nwrite_bytes: 0\ncancelled_write_bytes: 0\n"
IO_LATER = IO.replace("read_bytes: 4096", "read_bytes: 413696")  # +400 KiB


def test_ps_rows_and_the_processes_chosen_as_locally() -> None:
    rows = parse_ps(PS + "garbage line\n")
    assert rows[3] == PsRow(4300, 4242, 0, "handler 1")  # a name may hold a blank
    assert len(rows) == 7
    chosen = select_processes(rows, {"ovs-vswitchd": 4242, "gone": 9999},
                              ("ovsdb-server", "a-very-long-process-name", "absent"))
    # the switch with its descendants (under their own names), then the named ones; the kernel
    # keeps 15 characters of a name, so the long one matches by its first 15
    assert sorted(chosen) == sorted([("ovs-vswitchd", 4242), ("handler 1", 4300), ("sh", 4301),
                                     ("ovsdb-server", 4100), ("a-very-long-process-name", 5000)])


def test_host_facts_read_on_the_host() -> None:
    host = RecordedHost("dut", {("getconf", "CLK_TCK"): ["100\n"], ("getconf", "PAGESIZE"): ["4096\n"],
                                ("cat", "/proc/meminfo"): [MEMINFO]})
    assert host_facts(host) == HostFacts(100, 4096, 16384000)


def test_a_host_sample_is_one_command_parsed_as_a_local_one() -> None:
    host = RecordedHost("dut", {
        ("cat", "/proc/4242/stat", "/proc/4242/io"): [stat_line(4242, "ovs-vswitchd", utime=100, stime=50) + IO,
                                                      stat_line(4242, "ovs-vswitchd", utime=300, stime=150) + IO_LATER],
        ("cat", "/proc/77/stat", "/proc/77/io"): [stat_line(77, "x", utime=1, stime=1, state="Z")],
    })
    clock = iter([0.0, 2.0]).__next__
    samples = [read_host_sample(host, 4242, clock=clock), read_host_sample(host, 4242, clock=clock)]
    assert host.commands == [(("cat", "/proc/4242/stat", "/proc/4242/io"), None)] * 2
    row = pidstat_row(samples, uid=0, pid=4242, clk_tck=100, page_size=4096, mem_total_kb=16384000)
    # 200 user + 100 system ticks of 1/100 s in 2 s: 150 % CPU; 400 KiB read in 2 s
    assert (row["%usr"], row["%system"], row["%CPU"], row["kB_rd/s"]) == (100.0, 50.0, 150.0, 200.0)
    assert (row["VSZ"], row["RSS"], row["%MEM"]) == (524288, 102400, 0.62)
    with pytest.raises(ProcessLookupError):  # a zombie
        read_host_sample(host, 77)
    with pytest.raises(ProcessLookupError, match="not running on host dut"):  # cat printed nothing
        read_host_sample(host, 4343)
    no_io = RecordedHost("dut", {("cat", "/proc/5/stat", "/proc/5/io"): [stat_line(5, "y", utime=1, stime=1)]})
    assert read_host_sample(no_io, 5).read_bytes is None  # another user's io file: stat alone


def test_pidstat_reads_the_dut_host_not_this_machine() -> None:
    answers: dict[tuple[str, ...], list[str]] = {
        PS_ARGV: [PS], ("getconf", "CLK_TCK"): ["100\n"], ("getconf", "PAGESIZE"): ["4096\n"],
        ("cat", "/proc/meminfo"): [MEMINFO],
    }
    for pid, name in ((4242, "ovs-vswitchd"), (4300, "handler 1"), (4301, "sh"), (4100, "ovsdb-server")):
        answers[("cat", f"/proc/{pid}/stat", f"/proc/{pid}/io")] = [
            stat_line(pid, name, utime=100, stime=50) + IO, stat_line(pid, name, utime=200, stime=50) + IO]
    dut = RecordedHost("dut", answers)
    ctx = RunContext("t", Path("/nonexistent"), Path("/nonexistent"), LocalExecutor())
    # PID 4242 is the DUT host's (no such process here, or another one: this machine is not read)
    collector = PidstatCollector(make_settings({"COLLECTOR_INTERVAL_S": 0.1, "COLLECTOR_PROCESSES": ["ovsdb-server"]}),
                                 ctx, CollectorTarget({"ovs-vswitchd": 4242}, dut_host=dut))
    with collector:
        time.sleep(MIN_WINDOW_S + 0.1)
    stats = collector.statistics()
    assert sorted(stats) == ["Process: handler 1", "Process: ovs-vswitchd", "Process: ovsdb-server", "Process: sh"]
    row = stats["Process: ovs-vswitchd"]
    assert list(row) == list(PIDSTAT_COLUMNS) and row["PID"] == 4242
    assert stats["Process: sh"]["UID"] == 106  # the owner on the DUT host, from its ps
    assert row["%CPU"] is not None and row["%CPU"] > 0 and row["%MEM"] == 0.62
    assert collector.component().version == "/proc (cat) and ps (procps) on host dut"
    assert collector.component().details == {"host": "dut"}
    assert all(argv[0] in ("ps", "getconf", "cat") for argv, _ in dut.commands)
