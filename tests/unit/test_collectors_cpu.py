"""The cpu collector: mpstat's per-core split of /proc/stat over the traffic phase."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from recorded_host import RecordedHost

from vsperf.collectors.base import CollectorTarget
from vsperf.collectors.cpu import GROUP, MPSTAT_COLUMNS, CpuCollector, busiest_cores, parse_proc_stat, utilisation
from vsperf.executor import LocalExecutor
from vsperf.host.workdir import RunContext

FIRST = """cpu  100 10 50 800 20 0 20 0 30 5
cpu0 60 10 20 400 10 0 10 0 30 5
cpu1 40 0 30 400 10 0 10 0 0 0
intr 12345
"""
LAST = """cpu  300 20 100 900 20 0 40 0 80 10
cpu0 250 20 50 400 10 0 20 0 80 10
cpu1 50 0 50 500 10 0 20 0 0 0
"""


def test_split_as_mpstat() -> None:
    table = utilisation(parse_proc_stat(FIRST), parse_proc_stat(LAST))
    assert list(table) == ["all", "0", "1"]
    # cpu0: user +190 (guest +50 in it), nice +10 (guest_nice +5), system +30, softirq +10 -> 240 ticks
    assert table["0"] == {
        "%usr": round(100 * 140 / 240, 2), "%nice": round(100 * 5 / 240, 2), "%sys": 12.5, "%iowait": 0.0,
        "%irq": 0.0, "%soft": round(100 * 10 / 240, 2), "%steal": 0.0, "%guest": round(100 * 50 / 240, 2),
        "%gnice": round(100 * 5 / 240, 2), "%idle": 0.0,
    }
    assert list(table["1"]) == list(MPSTAT_COLUMNS)
    assert table["1"]["%idle"] == round(100 * 100 / 140, 2)
    assert sum(v for v in table["1"].values() if v is not None) == pytest.approx(100.0, abs=0.05)
    assert busiest_cores(table, 5.0) == [("0", 0.0)]


def test_no_tick_no_split() -> None:
    same = parse_proc_stat(FIRST)
    assert utilisation(same, same)["0"]["%usr"] is None


@pytest.mark.skipif(not Path("/proc/stat").exists(), reason="needs Linux /proc")
def test_reads_every_core_of_this_host() -> None:
    ctx = RunContext("t", Path("/nonexistent"), Path("/nonexistent"), LocalExecutor())
    collector = CpuCollector({}, ctx, CollectorTarget())
    with collector:
        pass
    assert collector.statistics() == {}  # an instant phase has no meaningful split
    with collector:
        time.sleep(0.6)
    table = collector.statistics()[GROUP]
    cores = [line.split()[0][3:] for line in Path("/proc/stat").read_text().splitlines()
             if line.startswith("cpu") and line[3] != " "]
    assert list(table) == ["all", *cores]
    for row in table.values():
        assert sum(v for v in row.values() if v is not None) - row["%guest"] - row["%gnice"] == \
            pytest.approx(100.0, abs=0.1)


def test_reads_the_dut_hosts_proc_stat_through_its_executor() -> None:
    dut = RecordedHost("dut", {("cat", "/proc/stat"): [FIRST, LAST]})
    ctx = RunContext("t", Path("/nonexistent"), Path("/nonexistent"), LocalExecutor())
    collector = CpuCollector({}, ctx, CollectorTarget(dut_host=dut))
    with collector:
        time.sleep(0.6)  # a phase long enough to report
    # the recorded host's two cores, not this machine's; one command per reading
    assert collector.statistics()[GROUP] == utilisation(parse_proc_stat(FIRST), parse_proc_stat(LAST))
    assert dut.commands == [(("cat", "/proc/stat"), None)] * 2
    assert collector.component().version == "/proc/stat on host dut"
    assert CpuCollector({}, ctx, CollectorTarget()).component().details == {}  # this machine: no host
