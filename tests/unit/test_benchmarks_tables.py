"""The seeds' tables built from benchmark details: columns and cells as the seeds print them."""

from __future__ import annotations

from typing import Any

from vsperf.benchmarks.tables import csv_tables, seed_tables
from vsperf.benchmarks.udploss.rows import UdpLossResult, UdpLossRow


def _udp_details() -> dict[str, Any]:
    rows = [
        UdpLossResult(UdpLossRow(payload_bytes=64, rcvbuf_bytes=262144), 1000, 987, 0, 0, 0.1, 0.05, 524288),
        UdpLossResult(UdpLossRow("FIFO", 50, "RR", 20, 16777216, 1472, 1000, True, "epoll"), 1000, 1000, 0, 0,
                      0.1, 0.1, 33554432),
    ]
    return {"benchmark": "udp_msg_loss", "path": "loopback", "rows": [r.as_dict() for r in rows]}


def _iperf_details() -> dict[str, Any]:
    def run(stack: str, bps: float) -> dict[str, Any]:
        summary = {"protocol": "UDP", "duration_s": 2.0, "sender_bytes": 2 << 30, "sender_bps": bps,
                   "receiver_bytes": 1 << 30, "receiver_bps": bps / 2, "retransmits": None, "lost_packets": 5,
                   "packets": 100, "loss_percent": 5.0, "jitter_ms": 0.25}
        per_second = [{"end_s": float(s), "sender_mbps": bps / 1e6, "sender_kpps": 10.0,
                       "receiver_mbps": bps / 2e6, "receiver_kpps": 9.0, "retransmits": None, "lost_packets": 1}
                      for s in (1, 2)]
        return {"stack": stack, "preload": "", "summary": summary, "per_second": per_second}

    return {"benchmark": "iperf3_udp", "runs": [run("kernel", 9.4e9), run("dmm", 2.5e9)]}


def test_udp_loss_table_has_the_seeds_columns_and_units() -> None:
    (table,) = seed_tables(_udp_details())
    assert table.header[:5] == ("Client Scheduler", "Connected Mode", "Payload", "Server Scheduler", "RcvBuf")
    assert table.header[-3:] == ("Loss %", "Data", "Wire")
    first, second = table.rows
    assert first[0] == "SCHED_OTHER" and first[1] == "No" and first[4] == "256 KiB" and first[6] == "1.300"
    assert second[0] == "SCHED_FIFO (50)" and second[3] == "SCHED_RR (20)" and second[4] == "16 MiB"
    assert second[7].endswith(" Mbps") and second[8].endswith(" Mbps")


def test_iperf_tables_show_both_stacks_side_by_side() -> None:
    summary, per_second = seed_tables(_iperf_details())
    assert [r[0] for r in summary.rows] == ["kernel", "kernel", "dmm", "dmm"]
    assert summary.rows[0][3] == "9.40 Gbits/sec" and summary.rows[0][-1] == "sender"
    assert summary.rows[1][5] == "5.000" and summary.rows[1][-1] == "receiver"
    assert per_second.header == ("kernel S:mbps", "kernel S:kpps", "kernel R:mbps", "kernel R:kpps",
                                 "dmm S:mbps", "dmm S:kpps", "dmm R:mbps", "dmm R:kpps", "info")
    assert per_second.rows[1][-1] == "00:02" and per_second.rows[0][0] == "9400"


def test_csv_tables_keep_plain_numbers() -> None:
    (rows,) = csv_tables(_udp_details())
    assert "loss_percent" in rows.header and rows.rows[0][rows.header.index("loss_percent")] == 1.3
    per_second, summary = csv_tables(_iperf_details())
    assert per_second.header[0] == "stack" and len(per_second.rows) == 4
    assert summary.rows[1][summary.header.index("receiver_bps")] == 1.25e9


def test_other_traffic_types_have_no_tables() -> None:
    assert seed_tables({"trial_count": 3}) == [] and csv_tables({}) == []
