"""iperf3's JSON (-J) output as frozen results: per-interval rates and the end summary."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from vsperf.errors import TrafficGenError


@dataclass(frozen=True)
class IperfInterval:
    """One reporting interval of one side (all streams summed)."""

    start_s: float
    end_s: float
    bytes: int
    bits_per_second: float
    packets: int | None = None  # UDP only
    retransmits: int | None = None  # TCP sender only
    lost_packets: int | None = None  # UDP receiver only


@dataclass(frozen=True)
class IperfSummary:
    """The end of a test as the client reports it (both sides' totals) plus UDP receive figures."""

    protocol: str  # "TCP" or "UDP"
    duration_s: float
    sender_bytes: int
    sender_bps: float
    receiver_bytes: int
    receiver_bps: float
    retransmits: int | None  # TCP
    lost_packets: int | None  # UDP, counted by the receiver
    packets: int | None  # UDP datagrams sent
    loss_percent: float | None  # UDP
    jitter_ms: float | None  # UDP


def _error(doc: Mapping[str, Any], who: str) -> None:
    if doc.get("error"):
        raise TrafficGenError(f"iperf3 {who}: {doc['error']}")


def parse_json(text: str, who: str) -> dict[str, Any]:
    """The document iperf3 -J printed; TrafficGenError naming iperf3's own error when it failed."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TrafficGenError(f"iperf3 {who} printed no JSON: {text.strip()[-300:]!r}") from exc
    if not isinstance(doc, dict):
        raise TrafficGenError(f"iperf3 {who} printed unexpected JSON: {text.strip()[-300:]!r}")
    _error(doc, who)
    return doc


def intervals(doc: Mapping[str, Any]) -> list[IperfInterval]:
    """Per-interval sums, in order."""
    out = []
    for entry in doc.get("intervals", []):
        s = entry["sum"]
        out.append(
            IperfInterval(
                start_s=float(s["start"]),
                end_s=float(s["end"]),
                bytes=int(s["bytes"]),
                bits_per_second=float(s["bits_per_second"]),
                packets=int(s["packets"]) if "packets" in s else None,
                retransmits=int(s["retransmits"]) if "retransmits" in s else None,
                lost_packets=int(s["lost_packets"]) if "lost_packets" in s and not s.get("sender") else None,
            )
        )
    return out


def summary(client: Mapping[str, Any]) -> IperfSummary:
    """The client's end summary (iperf3 >= 3.9 reports the server's received totals there too)."""
    end = client.get("end") or {}
    protocol = str(client.get("start", {}).get("test_start", {}).get("protocol", "TCP"))
    sent, received = end.get("sum_sent"), end.get("sum_received")
    if not sent or not received:
        raise TrafficGenError("iperf3 client: no sum_sent/sum_received in its summary (iperf3 older than 3.9?)")
    udp = protocol == "UDP"
    return IperfSummary(
        protocol=protocol,
        duration_s=float(sent["seconds"]),
        sender_bytes=int(sent["bytes"]),
        sender_bps=float(sent["bits_per_second"]),
        receiver_bytes=int(received["bytes"]),
        receiver_bps=float(received["bits_per_second"]),
        retransmits=None if udp else int(sent.get("retransmits", 0)),
        lost_packets=int(received["lost_packets"]) if udp else None,
        packets=int(sent["packets"]) if udp else None,
        loss_percent=float(received["lost_percent"]) if udp else None,
        jitter_ms=float(received["jitter_ms"]) if udp else None,
    )


@dataclass(frozen=True)
class IperfRun:
    """One iperf3 test: which stack, the client's and server's intervals, the summary."""

    stack: str  # "kernel" or USERSTACK_NAME
    preload: str  # the LD_PRELOAD library ("" for the kernel stack)
    summary: IperfSummary
    client_intervals: tuple[IperfInterval, ...]
    server_intervals: tuple[IperfInterval, ...]
    tcp_mss_bytes: int | None = None  # the client's TCP maximum segment size (None: UDP)

    def per_second_rows(self) -> list[dict[str, Any]]:
        """Seed 000's table: per interval, sender (client) and receiver (server) Mbit/s and kpps."""
        rows = []
        for i, tx in enumerate(self.client_intervals):
            rx = self.server_intervals[i] if i < len(self.server_intervals) else None
            rows.append({
                "end_s": tx.end_s,
                "sender_mbps": tx.bits_per_second / 1e6,
                "sender_kpps": tx.packets / (tx.end_s - tx.start_s) / 1e3
                if tx.packets is not None and tx.end_s > tx.start_s else None,
                "receiver_mbps": rx.bits_per_second / 1e6 if rx else None,
                "receiver_kpps": rx.packets / (rx.end_s - rx.start_s) / 1e3
                if rx and rx.packets is not None and rx.end_s > rx.start_s else None,
                "retransmits": tx.retransmits,
                "lost_packets": rx.lost_packets if rx else None,
            })
        return rows

    def as_dict(self) -> dict[str, Any]:
        return {
            "stack": self.stack,
            "preload": self.preload,
            "summary": asdict(self.summary),
            "tcp_mss_bytes": self.tcp_mss_bytes,
            "per_second": self.per_second_rows(),
        }
