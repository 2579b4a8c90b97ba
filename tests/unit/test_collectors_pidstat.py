"""The pidstat collector: seeds/001's columns, checked against /proc for processes we start."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from settings_util import make_settings

from vsperf.cli.main import main
from vsperf.collectors.base import CollectorTarget
from vsperf.collectors.pidstat import (
    MIN_WINDOW_S,
    PIDSTAT_COLUMNS,
    PidstatCollector,
    ProcSample,
    find_processes,
    parse_stat,
    pidstat_row,
    read_sample,
)
from vsperf.executor import LocalExecutor
from vsperf.host.workdir import RunContext

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")

SEED_COLUMNS = [  # seeds/001, "Statistic Value" rows of every process table, in order
    "UID", "PID", "%usr", "%system", "%guest", "%CPU", "CPU", "minflt/s", "majflt/s",
    "VSZ", "RSS", "%MEM", "kB_rd/s", "kB_wr/s", "kB_ccwr/s",
]


@pytest.fixture
def spawn() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes a test starts; each is killed by its PID afterwards, whatever happens."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def _start(spawn: list[subprocess.Popen[bytes]], argv: list[str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(argv)
    spawn.append(proc)
    time.sleep(0.1)  # let it exec
    return proc


def _collector(target: CollectorTarget, **settings: object) -> PidstatCollector:
    ctx = RunContext("t", Path("/nonexistent"), Path("/nonexistent"), LocalExecutor())
    return PidstatCollector(make_settings({"COLLECTOR_INTERVAL_S": 0.1, **settings}), ctx, target)


def _status(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmSize", "VmRSS"):
            fields[key] = int(value.split()[0])
    return fields


def test_columns_of_a_sleeping_process_match_proc(spawn: list[subprocess.Popen[bytes]]) -> None:
    sleeper = _start(spawn, ["sleep", "30"])
    collector = _collector(CollectorTarget({"sleep": sleeper.pid}))
    with collector:
        time.sleep(MIN_WINDOW_S + 0.2)
    stats = collector.statistics()
    assert list(stats) == ["Process: sleep"]
    row = stats["Process: sleep"]
    assert list(row) == SEED_COLUMNS == list(PIDSTAT_COLUMNS)
    status = _status(sleeper.pid)
    mem_total_kb = psutil.virtual_memory().total // 1024
    assert row["UID"] == os.getuid()
    assert row["PID"] == sleeper.pid
    assert row["VSZ"] == status["VmSize"]  # kB, as pidstat
    # RSS as pidstat reads it: /proc/PID/stat's resident pages (VmRSS of /proc/PID/status adds
    # the per-thread counters not yet folded in, so it may differ by a few pages)
    stat = parse_stat(Path(f"/proc/{sleeper.pid}/stat").read_text())
    assert row["RSS"] == int(stat[24]) * os.sysconf("SC_PAGE_SIZE") // 1024
    assert row["RSS"] == pytest.approx(status["VmRSS"], rel=0.25)
    assert row["%MEM"] == round(100.0 * row["RSS"] / mem_total_kb, 2)
    assert row["CPU"] == int(parse_stat(Path(f"/proc/{sleeper.pid}/stat").read_text())[39])
    assert 0 <= row["CPU"] < (os.cpu_count() or 1)
    # sleep does nothing: no CPU time, no page faults, no I/O over the phase
    for column in ("%usr", "%system", "%guest", "%CPU", "minflt/s", "majflt/s", "kB_rd/s", "kB_wr/s", "kB_ccwr/s"):
        assert row[column] == 0.0, column


def test_a_busy_process_shows_its_cpu(spawn: list[subprocess.Popen[bytes]]) -> None:
    busy = _start(spawn, [sys.executable, "-c", "while True: pass"])
    collector = _collector(CollectorTarget({"busy": busy.pid}))
    with collector:
        time.sleep(1.0)
    row = collector.statistics()["Process: busy"]
    # One thread spinning: about 100 % of a core (less when the 2 shared cores are contended).
    assert 25.0 < row["%CPU"] <= 105.0
    assert row["%CPU"] == pytest.approx(row["%usr"] + row["%system"], abs=0.02)
    assert row["%usr"] > row["%system"]


def test_children_and_processes_by_name(spawn: list[subprocess.Popen[bytes]], tmp_path: Path) -> None:
    # a load generator's workers are its children; COLLECTOR_PROCESSES finds others by name
    parent = _start(spawn, ["sh", "-c", "sleep 30 & sleep 30 & wait"])
    named = tmp_path / "vsperf-test-sleeper"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", named)
    other = _start(spawn, [str(named), "30"])
    found = dict((pid, name) for name, pid in find_processes(
        CollectorTarget({"stress-ng": parent.pid}, process_names=("vsperf-test-sleeper",))))
    children = [p.pid for p in psutil.Process(parent.pid).children()]
    assert found[parent.pid] == "stress-ng" and found[other.pid] == "vsperf-test-sleeper"
    assert [found[c] for c in children] == ["sleep", "sleep"]
    collector = _collector(CollectorTarget({"stress-ng": parent.pid}), COLLECTOR_PROCESSES=["vsperf-test-sleeper"])
    with collector:
        time.sleep(0.2)
    groups = sorted(collector.statistics())
    assert groups == sorted(["Process: stress-ng", "Process: vsperf-test-sleeper",
                             *(f"Process: sleep (PID {c})" for c in children)])


def test_a_process_that_exits_during_traffic(spawn: list[subprocess.Popen[bytes]],
                                             caplog: pytest.LogCaptureFixture) -> None:
    short = _start(spawn, ["sleep", "0.3"])
    collector = _collector(CollectorTarget({"short": short.pid, "gone": 2**22 + 7}))
    with collector:
        time.sleep(0.6)
    stats = collector.statistics()
    assert list(stats) == ["Process: short"]  # measured while it lived
    assert "gone (PID 4194311) is not running" in caplog.text
    assert "short (PID" in caplog.text and "exited during traffic" in caplog.text


@pytest.mark.parametrize("on_host", [False, True], ids=["lab", "testbed-host"])
def test_a_restarted_daemon_is_followed(spawn: list[subprocess.Popen[bytes]], caplog: pytest.LogCaptureFixture,
                                        on_host: bool) -> None:
    # rfc2544_reset restarts ovs-vswitchd during the phase: the deployment's PIDs then name the
    # new process, which the collector watches from then on (read directly or through a host's executor)
    old = _start(spawn, ["sleep", "30"])
    current = {"ovs-vswitchd": old.pid}
    target = CollectorTarget(dict(current), current_pids=lambda: current,
                             dut_host=LocalExecutor() if on_host else None)
    collector = _collector(target)
    caplog.set_level("INFO", logger="vsperf.collectors.pidstat")
    with collector:
        time.sleep(0.3)
        old.kill()
        old.wait()
        new = _start(spawn, ["sleep", "30"])
        current["ovs-vswitchd"] = new.pid
        time.sleep(MIN_WINDOW_S + 0.3)
    stats = collector.statistics()
    assert sorted(stats) == [f"Process: ovs-vswitchd (PID {old.pid})", f"Process: ovs-vswitchd (PID {new.pid})"]
    assert stats[f"Process: ovs-vswitchd (PID {new.pid})"]["PID"] == new.pid
    assert stats[f"Process: ovs-vswitchd (PID {new.pid})"]["%CPU"] == 0.0  # sampled over >= MIN_WINDOW_S
    assert f"ovs-vswitchd (PID {old.pid}) restarted as PID {new.pid}" in caplog.text
    assert "exited during traffic" not in caplog.text


def test_a_start_interrupted_before_its_thread_ran_stops_cleanly(spawn: list[subprocess.Popen[bytes]],
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    """A signal inside Thread.start() (before the thread ran): the stop after the failed start
    does not fail on joining it."""
    sleeper = _start(spawn, ["sleep", "30"])
    collector = _collector(CollectorTarget({"sleep": sleeper.pid}))

    def interrupted(_thread: threading.Thread) -> None:
        raise KeyboardInterrupt
    monkeypatch.setattr(threading.Thread, "start", interrupted)
    with pytest.raises(KeyboardInterrupt), collector:
        pytest.fail("the body never runs")
    assert "Process: sleep" in collector.statistics()  # the readings of start() and stop()
    assert "failed too" not in caplog.text


def test_row_arithmetic() -> None:
    def sample(t: float, utime: int, stime: int, guest: int, minflt: int, rss: int, read: int) -> ProcSample:
        return ProcSample(t, 5, utime, stime, guest, minflt, 0, 1, 8192 * 1024, rss, read, 0, 0)

    samples = [sample(10.0, 100, 50, 20, 1000, 100, 0), sample(11.0, 200, 60, 30, 1500, 300, 4096),
               sample(12.0, 300, 70, 40, 2000, 200, 8192)]
    row = pidstat_row(samples, uid=0, pid=42, clk_tck=100, page_size=4096, mem_total_kb=1_000_000)
    # over 2 s at 100 ticks/s: user 200 ticks of which guest 20 -> %usr 90, %guest 10, %system 10
    assert row["%usr"] == 90.0 and row["%guest"] == 10.0 and row["%system"] == 10.0
    assert row["%CPU"] == 110.0  # user (guest included) + system, as pidstat
    assert row["minflt/s"] == 500.0 and row["kB_rd/s"] == 4.0
    assert row["VSZ"] == 8192 and row["RSS"] == 800  # pages 200 on average * 4 kB
    assert row["%MEM"] == 0.08 and row["CPU"] == 1
    short = pidstat_row(samples[:1], uid=0, pid=42, clk_tck=100, page_size=4096, mem_total_kb=1_000_000)
    assert short["%CPU"] is None and short["VSZ"] == 8192  # rates need a window


def test_parse_stat_handles_odd_command_names() -> None:
    text = "42 (a b) c)) S 1 2 3 0 -1 4 5 6 7 8 9 10 11 12 20 0 1 0 99 4096 10"
    fields = parse_stat(text)
    assert fields[1] == "42" and fields[2] == "a b) c)" and fields[3] == "S" and fields[22] == "99"
    sample = read_sample(os.getpid())
    assert sample.vsize_bytes > 0 and sample.rss_pages > 0


def test_a_run_stores_process_statistics(spawn: list[subprocess.Popen[bytes]], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    named = tmp_path / "vsperf-test-dut"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", named)
    dut = _start(spawn, [str(named), "30"])
    with pytest.raises(SystemExit) as exc:
        main(["phy2phy_tput", "--trafficgen", "dummy", "--results-dir", str(tmp_path / "r"), "--report-format",
              "rst", "--test-params", "TRAFFICGEN_PKT_SIZES=(64,);COLLECTOR_PROCESSES=['vsperf-test-dut'];"
              "REPORT_PLOTS=False"])
    assert exc.value.code == 0
    data = json.loads((tmp_path / "r" / "results.json").read_text())
    stats = data["tests"][0]["results"][0]["statistics"]["Process: vsperf-test-dut"]
    assert list(stats) == SEED_COLUMNS and stats["PID"] == dut.pid
    collectors = [c for c in data["tests"][0]["components"] if c["role"] == "collector"]
    assert [c["name"] for c in collectors] == ["pidstat", "cpu", "ifstats"]
    report = (tmp_path / "r" / "report.rst").read_text()
    table = report[report.index("Process: vsperf-test-dut:"):]
    assert re.search(rf"^\| PID\s+\|\s+{dut.pid} \|$", table, re.MULTILINE)
