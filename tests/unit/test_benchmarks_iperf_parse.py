"""iperf3 JSON: intervals, the end summary for TCP and UDP, iperf3's own errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from vsperf.benchmarks.iperf_parse import IperfRun, intervals, parse_json, summary
from vsperf.errors import TrafficGenError


def _tcp_client() -> dict[str, Any]:
    return {
        "start": {"test_start": {"protocol": "TCP"}},
        "intervals": [
            {"sum": {"start": 0, "end": 1.0, "seconds": 1.0, "bytes": 125_000_000, "bits_per_second": 1e9,
                     "retransmits": 3, "sender": True}},
            {"sum": {"start": 1.0, "end": 2.0, "seconds": 1.0, "bytes": 250_000_000, "bits_per_second": 2e9,
                     "retransmits": 0, "sender": True}},
        ],
        "end": {
            "sum_sent": {"seconds": 2.0, "bytes": 375_000_000, "bits_per_second": 1.5e9, "retransmits": 3},
            "sum_received": {"seconds": 2.0, "bytes": 374_000_000, "bits_per_second": 1.496e9},
        },
    }


def _udp_client() -> dict[str, Any]:
    return {
        "start": {"test_start": {"protocol": "UDP"}},
        "intervals": [{"sum": {"start": 0, "end": 1.0, "bytes": 1_250_000, "bits_per_second": 1e7,
                               "packets": 1000, "sender": True}}],
        "end": {
            "sum_sent": {"seconds": 1.0, "bytes": 1_250_000, "bits_per_second": 1e7, "packets": 1000,
                         "lost_packets": 0, "lost_percent": 0, "jitter_ms": 0},
            "sum_received": {"seconds": 1.0, "bytes": 1_237_500, "bits_per_second": 9.9e6, "packets": 1000,
                             "lost_packets": 10, "lost_percent": 1.0, "jitter_ms": 0.02},
        },
    }


def test_tcp_summary_has_both_sides_and_retransmits() -> None:
    s = summary(_tcp_client())
    assert (s.protocol, s.sender_bps, s.receiver_bps, s.retransmits) == ("TCP", 1.5e9, 1.496e9, 3)
    assert s.loss_percent is None and s.jitter_ms is None


def test_udp_summary_has_loss_and_jitter_of_the_receiver() -> None:
    s = summary(_udp_client())
    assert (s.lost_packets, s.packets, s.loss_percent, s.jitter_ms) == (10, 1000, 1.0, 0.02)
    assert s.retransmits is None


def test_intervals_in_order_with_their_counters() -> None:
    got = intervals(_tcp_client())
    assert [i.bits_per_second for i in got] == [1e9, 2e9]
    assert got[0].retransmits == 3 and got[0].packets is None


def test_per_second_rows_pair_client_and_server_intervals() -> None:
    server = {"intervals": [{"sum": {"start": 0, "end": 1.0, "bytes": 1, "bits_per_second": 9.9e6,
                                     "packets": 990, "lost_packets": 10, "sender": False}}]}
    run = IperfRun("kernel", "", summary(_udp_client()), tuple(intervals(_udp_client())), tuple(intervals(server)))
    (row,) = run.per_second_rows()
    assert row["sender_mbps"] == pytest.approx(10.0) and row["receiver_mbps"] == pytest.approx(9.9)
    assert row["sender_kpps"] == pytest.approx(1.0) and row["receiver_kpps"] == pytest.approx(0.99)
    assert row["lost_packets"] == 10


def test_iperf3_errors_become_trafficgen_errors_naming_them() -> None:
    with pytest.raises(TrafficGenError, match="unable to connect to server"):
        parse_json(json.dumps({"error": "unable to connect to server: Connection refused"}), "client")
    with pytest.raises(TrafficGenError, match="printed no JSON"):
        parse_json("iperf3: error", "server")


def test_a_summary_without_both_sums_is_refused() -> None:
    doc = _tcp_client()
    del doc["end"]["sum_received"]
    with pytest.raises(TrafficGenError, match="sum_received"):
        summary(doc)
