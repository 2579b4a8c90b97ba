"""The seeds' other benchmarks on the local lab through `vsperf` (root): UDP message loss and
iperf3 bandwidth between the generator ports' namespaces across a real switch, the LD_PRELOAD
path with a counting interposer library built here (no user-space stack exists on these machines),
results, CSV, report tables, plots, --matrix, and nothing left behind."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import lab_leftovers, lab_skip_reason

from vsperf.host.workdir import work_dir_for

ROOT = Path(__file__).resolve().parents[2]
INTERPOSER_SOURCE = Path(__file__).resolve().parent / "data" / "interposer_count.c"
QUICK = "REPORT_FORMATS=('rst',)"
OVS_DPDK = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"

pytestmark = pytest.mark.root


@pytest.fixture(autouse=True)
def _lab() -> None:
    reason = lab_skip_reason({"ip": "iproute2", "iperf3": "iperf3", "cc": "gcc", "make": "make"})
    if reason:
        pytest.skip(reason)


def vsperf(*args: str, timeout_s: float = 180) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRAFFIC", "VSWITCH", "VNF", "UDPLOSS", "IPERF"))}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "vsperf", *args], capture_output=True, text=True, env=env,
                          timeout=timeout_s)


def results(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "results.json").read_text())
    return data


def assert_clean(out: Path) -> None:
    run_id = results(out)["run_id"]
    assert lab_leftovers(run_id, work_dir_for(run_id)) == []


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_udp_message_loss_across_the_linux_bridge(tmp_path: Path) -> None:
    out = tmp_path / "run"
    params = f"{QUICK};UDPLOSS_MESSAGES=20000;UDPLOSS_SENDER_SCHED=FIFO;UDPLOSS_SENDER_PRIORITY=10;" \
             "UDPLOSS_RCVBUF_BYTES=8388608;UDPLOSS_METHOD=epoll;UDPLOSS_CONNECTED=True"
    proc = vsperf("udp_msg_loss", "--vswitch", "linux-bridge", "--results-dir", str(out), "--test-params", params)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (test,) = results(out)["tests"]
    (result,) = test["results"]
    metrics, details = result["metrics"], result["details"]
    assert metrics["type"] == "udp_msg_loss" and metrics["messages_sent"] == 20000
    assert 0 < metrics["messages_received"] <= 20000
    assert metrics["frame_loss_percent"] == pytest.approx(100 * (20000 - metrics["messages_received"]) / 20000)
    assert metrics["wire_mbps"] > metrics["data_mbps"] > 0
    assert "loopback" not in details["path"]  # between the generator ports' namespaces
    (row,) = details["rows"]
    assert (row["sender_sched"], row["connected"], row["method"]) == ("FIFO", True, "epoll")
    assert row["rcvbuf_effective_bytes"] >= 8388608
    (csv_row,) = read_csv(out / "result_0_udp_msg_loss_p2p_1518_rows.csv")
    assert csv_row["sender_sched"] == "FIFO" and float(csv_row["loss_percent"]) == pytest.approx(
        metrics["frame_loss_percent"])
    report = (out / "report.rst").read_text()
    assert "UDP message loss (seeds/004)" in report and "SCHED_FIFO (10)" in report
    assert (out / "plots" / "test00_udp_msg_loss_benchmark_1518.png").stat().st_size > 1000
    assert_clean(out)


def test_udp_loss_sweep_and_matrix_in_one_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    params = f"{QUICK};UDPLOSS_MESSAGES=20000;MATRIX_METRIC=data_mbps"
    proc = vsperf("udp_msg_loss", "udp_msg_loss_methods", "--vswitch", "linux-bridge", "--matrix",
                  "--results-dir", str(out), "--test-params", params)
    assert proc.returncode == 0, proc.stderr[-2000:]
    _, sweep = results(out)["tests"]
    rows = sweep["results"][0]["details"]["rows"]
    assert [r["method"] for r in rows] == ["select", "epoll", "thread"]
    assert all(r["sent_messages"] == 100000 and r["received_messages"] > 0 for r in rows)
    assert len(read_csv(out / "result_1_udp_msg_loss_methods_p2p_1518_rows.csv")) == 3
    matrix = (out / "matrix.rst").read_text()
    assert "udp_msg_loss_methods" in matrix and "data_mbps" in matrix
    assert_clean(out)


@pytest.fixture
def interposer(tmp_path: Path) -> Path:
    """The counting LD_PRELOAD library, built from tests/integration/data/interposer_count.c."""
    lib = tmp_path / "lib" / "libinterposer_count.so"
    lib.parent.mkdir()
    subprocess.run([shutil.which("cc") or "cc", "-shared", "-fPIC", "-O2", "-o", str(lib), str(INTERPOSER_SOURCE),
                    "-ldl"], check=True, capture_output=True, timeout=60)
    return lib


def test_iperf3_with_and_without_a_preloaded_stack_across_ovs(tmp_path: Path, interposer: Path) -> None:
    out = tmp_path / "run"
    counts = tmp_path / "counts.txt"
    env = {"INTERPOSER_COUNT_FILE": str(counts), "LD_LIBRARY_PATH": str(interposer.parent)}
    params = f"{QUICK};IPERF_DURATION_S=2;IPERF_UDP_BANDWIDTH_BPS=50e6;USERSTACK_PRELOAD='{interposer}';" \
             f"USERSTACK_ENV={env!r};USERSTACK_NAME='counting interposer'"
    proc = vsperf("host_stack_tcp_bw", "host_stack_udp_bw", "--vswitch", "ovs", "--results-dir", str(out),
                  "--test-params", params)
    assert proc.returncode == 0, proc.stderr[-2000:]
    tcp, udp = (t["results"][0] for t in results(out)["tests"])
    for result in (tcp, udp):
        stacks = [r["stack"] for r in result["details"]["runs"]]
        assert stacks == ["kernel", "counting interposer"]
        assert result["metrics"]["receiver_mbps"] > 0 and result["metrics"]["userstack_receiver_mbps"] > 0
        assert [r["preload"] for r in result["details"]["runs"]] == ["", str(interposer)]
        assert all(len(r["per_second"]) >= 2 for r in result["details"]["runs"])
    assert tcp["metrics"]["retransmits"] is not None and tcp["metrics"]["loss_percent"] is None
    assert udp["metrics"]["loss_percent"] is not None and udp["metrics"]["jitter_ms"] is not None
    # Only the preloaded runs count: two processes (client, server) per test, none for the kernel runs.
    lines = counts.read_text().splitlines()
    assert len(lines) == 4, lines
    for client, server in zip(lines[0::2], lines[1::2], strict=True):
        sends = sorted(int(line.split("send=")[1].split()[0]) for line in (client, server))
        recvs = sorted(int(line.split("recv=")[1]) for line in (client, server))
        assert sends[1] > 100 and recvs[1] > 100  # one side sent the data, the other received it
    stacks_csv = {row["stack"] for row in read_csv(out / "result_1_host_stack_udp_bw_p2p_1518_per_second.csv")}
    assert stacks_csv == {"kernel", "counting interposer"}
    report = (out / "report.rst").read_text()
    assert "Per-second bandwidth (seeds/000)" in report and "counting interposer S:mbps" in report
    assert "Bandwidth summary (seeds/002)" in report
    assert_clean(out)


def test_iperf3_over_jumbo_frames(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = vsperf("host_stack_tcp_bw_jumbo", "--vswitch", "linux-bridge", "--results-dir", str(out),
                  "--test-params", f"{QUICK};IPERF_DURATION_S=1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    (run,) = results(out)["tests"][0]["results"][0]["details"]["runs"]
    assert run["tcp_mss_bytes"] > 8000  # the ports' MTU is 9000 end to end
    assert_clean(out)


def test_invalid_benchmark_settings_end_in_one_line_and_exit_2(tmp_path: Path) -> None:
    proc = vsperf("udp_msg_loss", "--vswitch", "linux-bridge", "--results-dir", str(tmp_path / "run"),
                  "--test-params", "UDPLOSS_RECEIVER_SCHED=RR")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "UDPLOSS_RECEIVER_PRIORITY must be 1..99" in proc.stderr
    assert not (tmp_path / "run").exists()


def test_sweeps_on_the_linux_bridge_with_xdp_live_frames(tmp_path: Path) -> None:
    out = tmp_path / "run"
    params = f"{QUICK};SWEEP_FLOWS=[1,8];SWEEP_DURATION_S=0.5;VSGEN_PATH=auto"
    proc = vsperf("phy2phy_sweep_bw", "phy2phy_sweep_latency", "--vswitch", "linux-bridge", "--trafficgen", "vsgen",
                  "--results-dir", str(out), "--test-params", params)
    assert proc.returncode == 0, proc.stderr[-2000:]
    bw, latency = results(out)["tests"]
    assert [r["packet_size"] for r in bw["results"]] == [64, 1500, 9000]
    for result in bw["results"]:
        points = result["details"]["points"]
        assert [p["flows"] for p in points] == [1, 8]
        for p in points:  # jumbo frames cross too: the MTU is set on every port
            assert p["rx_tester_mpps"] > 0 and p["direction"] == "Tester <=> DUT"
            # the DUT's ports count every frame that reached the tester (and learning frames)
            assert p["rx_dut_mpps"] >= p["rx_tester_mpps"] * 0.99
    rows = read_csv(out / "result_0_phy2phy_sweep_bw_p2p_9000_points.csv")
    assert [int(r["flows"]) for r in rows] == [1, 8]
    for result in latency["results"]:
        m = result["metrics"]
        assert 0 < m["latency_p50_us"] <= m["latency_p90_us"] <= m["latency_p99_us"]
    report = (out / "report.rst").read_text()
    assert "Bandwidth sweep (seeds/003 test_perf_bw)" in report and "Latency (seeds/003 test_perf_latency)" in report
    # The bridge's ports take XDP frames (GRO on their veth ends): no AF_PACKET fallback.
    log = (out / "overall.log").read_text()
    assert "xdp-live" in log and "takes no XDP frames" not in log
    assert_clean(out)


def test_two_queues_per_port_across_ovs_afxdp(tmp_path: Path) -> None:
    out = tmp_path / "run"
    params = f"{QUICK};SWEEP_FLOWS=[8];SWEEP_DURATION_S=0.5"
    proc = vsperf("phy2phy_sweep_bw_q2", "--vswitch", "ovs", "--results-dir", str(out), "--test-params", params)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (test,) = results(out)["tests"]
    assert test["parameters"]["LAB_PORT_QUEUES"] == 2
    for result in test["results"]:
        (point,) = result["details"]["points"]
        # read from sysfs: the switch end's rx queues and the generator end's tx queues
        assert point["queues"] == "2 / 2" and point["rx_tester_mpps"] > 0 and point["rx_dut_mpps"] > 0
    assert_clean(out)


@pytest.mark.skipif(not Path(OVS_DPDK).exists(), reason="OVS-DPDK missing: apt-get install openvswitch-switch-dpdk")
def test_two_rx_queues_per_port_across_ovs_dpdk(tmp_path: Path) -> None:
    out = tmp_path / "run"
    params = f"{QUICK};SWEEP_FLOWS=[8];SWEEP_DURATION_S=0.5;DPDK_PORT_DRIVER=af_packet"
    proc = vsperf("phy2phy_sweep_bw_q2", "--vswitch", "ovs-dpdk", "--results-dir", str(out), "--test-params", params)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for result in results(out)["tests"][0]["results"]:  # 64 and 1500 bytes
        (point,) = result["details"]["points"]
        assert point["queues"] == "2 / 2" and point["rx_tester_mpps"] > 0 and point["rx_dut_mpps"] > 0
    log = (out / "overall.log").read_text()
    # OVS's PMD thread polls both rx queues of each veth port, and both took frames (8 flows
    # spread by the kernel's fanout hash)
    rxq_show = log.split("PMD rx queues polled:", 1)[1].split(" INFO ", 1)[0]
    for port in ("dpdk0", "dpdk1"):  # VSPERF's names of OVS-DPDK's ports
        assert re.findall(rf"port: {port}\s+queue-id:\s+(\d) \(enabled\)", rxq_show) == ["0", "1"]
    per_queue = re.findall(r"rx packets per queue: q0=(\d+), q1=(\d+)", log)
    assert len(per_queue) == 2 and all(int(n) > 0 for counts in per_queue for n in counts)
    assert_clean(out)


@pytest.mark.skipif(not Path(OVS_DPDK).exists(), reason="OVS-DPDK missing: apt-get install openvswitch-switch-dpdk")
def test_ovs_dpdk_refuses_two_queues_on_af_xdp(tmp_path: Path) -> None:
    out = tmp_path / "run"
    params = f"{QUICK};SWEEP_FLOWS=[8];DPDK_PORT_DRIVER=af_xdp"
    proc = vsperf("phy2phy_sweep_bw_q2", "--vswitch", "ovs-dpdk", "--results-dir", str(out), "--test-params", params)
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert "LAB_PORT_QUEUES=2" in line and "DPDK_PORT_DRIVER=af_packet" in line and "combined" in line
