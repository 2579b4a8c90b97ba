"""vsperf.dpdk.testpmd: statistics parsing and the testpmd process lifecycle (with a fake testpmd)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from vsperf.dpdk.eal import EalConfig, TestpmdConfig
from vsperf.dpdk.testpmd import (
    PortCounters,
    TestpmdProcess,
    parse_forward_stats,
    parse_nic_stats,
    parse_telemetry_stats,
)
from vsperf.errors import DeploymentError
from vsperf.executor import LocalExecutor
from vsperf.host.host import Host
from vsperf.host.journal import Journal
from vsperf.host.names import RunNames
from vsperf.host.proc import local_stat

# Captured from dpdk-testpmd 22.11 (io forwarding between two net_af_packet ports).
NIC_STATS = """\
\x1b[2J\x1b[1;1H
Port statistics ====================================
  ######################## NIC statistics for port 0  ########################
  RX-packets: 341023     RX-missed: 7          RX-bytes:  20461380
  RX-errors: 1
  RX-nombuf:  2\x20\x20\x20\x20\x20\x20\x20\x20\x20
  TX-packets: 5          TX-errors: 0          TX-bytes:  300

  Throughput (since last show)
  Rx-pps:        23614          Rx-bps:     11335056
  Tx-pps:            0          Tx-bps:            0
  ############################################################################

  ######################## NIC statistics for port 1  ########################
  RX-packets: 5          RX-missed: 0          RX-bytes:  300
  RX-errors: 0
  RX-nombuf:  0\x20\x20\x20\x20\x20\x20\x20\x20\x20
  TX-packets: 341023     TX-errors: 3          TX-bytes:  20461380
"""

FORWARD_STATS = """\
Telling cores to stop...
Waiting for lcores to finish...

  ---------------------- Forward statistics for port 0  ----------------------
  RX-packets: 150000         RX-dropped: 12            RX-total: 150012
  TX-packets: 4              TX-dropped: 0             TX-total: 4
  ----------------------------------------------------------------------------

  ---------------------- Forward statistics for port 1  ----------------------
  RX-packets: 4              RX-dropped: 0             RX-total: 4
  TX-packets: 149990         TX-dropped: 10            TX-total: 150000
  ----------------------------------------------------------------------------

  +++++++++++++++ Accumulated forward statistics for all ports+++++++++++++++
  RX-packets: 150004         RX-dropped: 12            RX-total: 150016
  TX-packets: 149994         TX-dropped: 10            TX-total: 150004
  ++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++
"""

TELEMETRY = (
    '{"/ethdev/stats": {"ipackets": 39439, "opackets": 17, "ibytes": 2366340, "obytes": 1020, '
    '"imissed": 3, "ierrors": 0, "oerrors": 1, "rx_nombuf": 0, "q_ipackets": [39439, 0]}}\n'
)


def test_parse_nic_stats_reads_every_port() -> None:
    stats = parse_nic_stats(NIC_STATS)
    assert stats[0] == PortCounters(0, 341023, 5, rx_missed=7, rx_errors=1, rx_nombuf=2,
                                    rx_bytes=20461380, tx_bytes=300)
    assert stats[1].tx_packets == 341023 and stats[1].tx_errors == 3


def test_parse_nic_stats_keeps_the_last_block_per_port() -> None:
    later = NIC_STATS.replace("341023     RX-missed: 7", "400000     RX-missed: 9")
    assert parse_nic_stats(NIC_STATS + later)[0].rx_packets == 400000


def test_parse_forward_stats_per_port_without_the_accumulated_block() -> None:
    stats = parse_forward_stats(FORWARD_STATS)
    assert set(stats) == {0, 1}
    assert stats[0] == PortCounters(0, rx_packets=150000, tx_packets=4, rx_missed=12)
    assert stats[1] == PortCounters(1, rx_packets=4, tx_packets=149990, tx_dropped=10)
    assert parse_forward_stats("no statistics here") == {}


def test_parse_telemetry_stats() -> None:
    c = parse_telemetry_stats("Connecting to /var/run/dpdk/x/dpdk_telemetry.v2\n" + TELEMETRY, 0)
    assert c == PortCounters(0, 39439, 17, rx_missed=3, tx_errors=1, rx_bytes=2366340, tx_bytes=1020)
    with pytest.raises(ValueError, match="no JSON"):
        parse_telemetry_stats("", 0)
    with pytest.raises(ValueError, match="without /ethdev/stats"):
        parse_telemetry_stats('{"/ethdev/list": [0, 1]}', 0)


# --- lifecycle, with a script standing in for dpdk-testpmd -------------------------------------

FAKE_TESTPMD = textwrap.dedent("""\
    import os, signal, sys, time
    print(f"pid {{os.getpid()}}", flush=True)
    print("EAL: a warning on stderr", file=sys.stderr, flush=True)
    if "{exit}" == "early":
        print("EAL: Cause: Creation of mbuf pool for socket 0 failed: Cannot allocate memory", flush=True)
        sys.exit(1)
    def stop(signum, frame):
        print({stats!r}, flush=True)
        sys.exit(130)
    if "{exit}" == "ignore_sigint":
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    else:
        signal.signal(signal.SIGINT, stop)
    if "{exit}" != "never_ready":
        print("io packet forwarding - ports=2 - cores=1 - streams=2", flush=True)
    while True:
        time.sleep(0.05)
""")


class TelemetryExecutor(LocalExecutor):
    """A real executor whose telemetry client answers with canned JSON."""

    def __init__(self) -> None:
        super().__init__()
        self.telemetry_inputs: list[str | None] = []

    def run(self, argv: Sequence[str], *, netns: str | None = None, check: bool = True,
            timeout_s: float | None = 60.0, env: Mapping[str, str] | None = None,
            input_text: str | None = None) -> subprocess.CompletedProcess[str]:
        if argv[0] == "dpdk-telemetry.py":
            self.telemetry_inputs.append(input_text)
            return subprocess.CompletedProcess(list(argv), 0, TELEMETRY, "")
        return super().run(argv, netns=netns, check=check, timeout_s=timeout_s, env=env,
                           input_text=input_text)


def _host(tmp_path: Path) -> Host:
    """This machine as the run's host (its journal under `tmp_path`), telemetry answered."""
    return Host("local", TelemetryExecutor(), RunNames("ab12"), Journal("ab12", root=tmp_path / "state"))


def pid_exists(pid: int) -> bool:
    """True while `pid` runs on this machine (a zombie does not count)."""
    stat = local_stat(pid)
    return stat is not None and stat.running


_STARTED: list[TestpmdProcess] = []  # every fake testpmd of the current test, stopped after it


@pytest.fixture(autouse=True)
def _stop_fake_testpmds() -> Iterator[None]:
    """A test that fails before its own `stop()` must not leave its fake testpmd running."""
    yield
    while _STARTED:
        _STARTED.pop().stop(timeout_s=0.5)


def _testpmd(tmp_path: Path, behaviour: str, ready_timeout_s: float = 10.0) -> TestpmdProcess:
    script = tmp_path / f"fake-testpmd-{behaviour}.py"
    script.write_text(FAKE_TESTPMD.format(exit=behaviour, stats=FORWARD_STATS), encoding="utf-8")
    wrapper = tmp_path / f"fake-testpmd-{behaviour}"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {script} \"$@\"\n", encoding="utf-8")
    wrapper.chmod(0o755)
    cfg = TestpmdConfig(eal=EalConfig("vspab12t0", 64, vdevs=("a", "b")), binary=str(wrapper))
    tp = TestpmdProcess(_host(tmp_path), "testpmd vnf0", cfg, log_path=tmp_path / f"{behaviour}.log",
                        runtime_root=tmp_path / "dpdk", ready_timeout_s=ready_timeout_s)
    _STARTED.append(tp)
    return tp


def _recorded_processes(tp: TestpmdProcess) -> list[tuple[str, str, int]]:
    """(host, label, pid) of the processes the run's journal file lists (what a kill leaves)."""
    journal = tp.host.journal
    assert journal is not None
    if not journal.path.exists():
        return []
    return [(e.host, e.name, e.pid) for e in Journal.load(journal.path) if e.kind == "process"]


def test_start_waits_for_forwarding_and_stop_collects_final_counters(tmp_path: Path) -> None:
    tp = _testpmd(tmp_path, "normal")
    tp.start()
    pid = tp.pid
    assert pid is not None and pid_exists(pid)
    (tmp_path / "dpdk" / "vspab12t0").mkdir(parents=True)  # what DPDK makes for its file prefix
    assert _recorded_processes(tp) == [("local", "testpmd vnf0", pid)]  # on disk while it runs
    log = (tmp_path / "normal.log").read_text()  # its output and its errors in its log on its host
    assert "io packet forwarding" in log and "EAL: a warning on stderr" in log
    assert f"pid {pid}\n" in log  # the PID recorded is the command's own (the log wrapper execs in place)
    tp.check_alive()
    assert tp.counters(0).rx_packets == 39439
    assert tp.host.executor.telemetry_inputs == ["/ethdev/stats,0\n"]  # type: ignore[attr-defined]
    final = tp.stop()
    assert final[1].tx_dropped == 10 and final[0].rx_packets == 150000
    assert not pid_exists(pid)
    assert not (tmp_path / "dpdk" / "vspab12t0").exists()
    assert _recorded_processes(tp) == []
    assert tp.stop() == final  # twice is fine
    tp.check_alive()  # nothing running: nothing to report


def test_exit_before_forwarding_reports_its_log(tmp_path: Path) -> None:
    tp = _testpmd(tmp_path, "early")
    (tmp_path / "dpdk" / "vspab12t0").mkdir(parents=True)  # what its EAL made before it gave up
    with pytest.raises(DeploymentError, match=r"exited \(code 1\) before forwarding.*Cannot allocate memory"):
        tp.start()
    tp.stop()
    assert not (tmp_path / "dpdk" / "vspab12t0").exists()
    assert _recorded_processes(tp) == []


def test_never_ready_times_out_and_stop_still_kills_it(tmp_path: Path) -> None:
    tp = _testpmd(tmp_path, "never_ready", ready_timeout_s=0.5)
    with pytest.raises(DeploymentError, match=r"did not start forwarding within 0.5 s"):
        tp.start()
    pid = tp.pid
    assert pid is not None
    tp.stop()
    assert not pid_exists(pid)
    assert _recorded_processes(tp) == []


def test_stop_falls_back_to_sigterm_when_sigint_is_ignored(tmp_path: Path) -> None:
    tp = _testpmd(tmp_path, "ignore_sigint")
    tp.start()
    pid = tp.pid
    assert pid is not None
    assert tp.stop(timeout_s=0.5) == {}
    assert not pid_exists(pid)


def test_check_alive_reports_a_dead_testpmd(tmp_path: Path) -> None:
    import os
    import signal

    tp = _testpmd(tmp_path, "normal")
    tp.start()
    pid = tp.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    assert tp.proc is not None
    tp.proc.wait(5.0)
    with pytest.raises(DeploymentError, match=rf"testpmd vnf0 \(pid {pid}\) died"):
        tp.check_alive()
    tp.stop()
