"""One UDP message-loss measurement's parameters and results, as frozen dataclasses."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from vsperf.config.schema_bench import MAX_PAYLOAD_BYTES, REALTIME_SCHEDULERS, RECEIVE_METHODS, SCHEDULERS
from vsperf.errors import ConfigError

UDP_HEADER_BYTES = 8
IPV4_HEADER_BYTES = 20
ETHERNET_HEADER_BYTES = 14  # destination, source, EtherType; no FCS, preamble or gap (as the seed)


def wire_bytes(payload_bytes: int, mtu_bytes: int = 1500) -> int:
    """Bytes one message puts on the wire: payload, UDP header, and an IPv4 and Ethernet header
    per IP fragment (a 1500-byte payload takes two packets at MTU 1500)."""
    per_fragment = mtu_bytes - IPV4_HEADER_BYTES
    per_fragment -= per_fragment % 8  # fragment offsets count 8-byte units
    fragments = max(1, math.ceil((payload_bytes + UDP_HEADER_BYTES) / per_fragment))
    return payload_bytes + UDP_HEADER_BYTES + fragments * (IPV4_HEADER_BYTES + ETHERNET_HEADER_BYTES)


@dataclass(frozen=True)
class UdpLossRow:
    """Parameters of one measurement (one row of seeds/004's table)."""

    sender_sched: str = "OTHER"  # OTHER, BATCH, IDLE, FIFO, RR
    sender_priority: int = 0  # 1..99 with FIFO/RR, else 0
    receiver_sched: str = "OTHER"
    receiver_priority: int = 0
    rcvbuf_bytes: int = 262144  # receiver's SO_RCVBUF; 0: the system default
    payload_bytes: int = 64  # UDP payload, 0..1500
    messages: int = 100000
    connected: bool = False  # connect() + send() instead of sendto()
    method: str = "select"  # select, epoll, thread

    def __post_init__(self) -> None:
        for side in ("sender", "receiver"):
            sched, prio = getattr(self, f"{side}_sched"), getattr(self, f"{side}_priority")
            if sched not in SCHEDULERS:
                raise ConfigError(f"{side} scheduler {sched!r} is not one of {', '.join(SCHEDULERS)}")
            if (sched in REALTIME_SCHEDULERS) != (0 < prio <= 99):
                need = "1..99" if sched in REALTIME_SCHEDULERS else "0"
                raise ConfigError(f"{side} priority must be {need} with scheduler {sched}, got {prio}")
        if not 0 <= self.payload_bytes <= MAX_PAYLOAD_BYTES:
            raise ConfigError(f"payload {self.payload_bytes} B is outside 0..{MAX_PAYLOAD_BYTES}")
        if self.messages < 1 or self.rcvbuf_bytes < 0:
            raise ConfigError(f"messages must be >= 1 and rcvbuf >= 0, got {self.messages}, {self.rcvbuf_bytes}")
        if self.method not in RECEIVE_METHODS:
            raise ConfigError(f"receive method {self.method!r} is not one of {', '.join(RECEIVE_METHODS)}")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> UdpLossRow:
        return cls(**dict(data))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class UdpLossConfig:
    """The udp_msg_loss benchmark: its rows, measured in order, and where they run."""

    rows: tuple[UdpLossRow, ...]
    port: int  # UDPLOSS_PORT: the receiver's UDP port
    idle_ms: int  # UDPLOSS_IDLE_MS: the receiver's end of a row (no message for this long)
    offloads: bool  # BENCH_PORT_OFFLOADS

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> UdpLossConfig:
        return cls(tuple(rows_from_settings(settings)), int(settings["UDPLOSS_PORT"]),
                   int(settings["UDPLOSS_IDLE_MS"]), bool(settings["BENCH_PORT_OFFLOADS"]))


def rows_from_settings(settings: Mapping[str, Any]) -> list[UdpLossRow]:
    """UDPLOSS_ROWS, or one row of the scalar UDPLOSS_* settings when it is empty."""
    rows = list(settings["UDPLOSS_ROWS"])
    if rows:
        return [UdpLossRow.from_mapping(r) for r in rows]
    return [
        UdpLossRow(
            sender_sched=settings["UDPLOSS_SENDER_SCHED"],
            sender_priority=settings["UDPLOSS_SENDER_PRIORITY"],
            receiver_sched=settings["UDPLOSS_RECEIVER_SCHED"],
            receiver_priority=settings["UDPLOSS_RECEIVER_PRIORITY"],
            rcvbuf_bytes=settings["UDPLOSS_RCVBUF_BYTES"],
            payload_bytes=settings["UDPLOSS_PAYLOAD_BYTES"],
            messages=settings["UDPLOSS_MESSAGES"],
            connected=settings["UDPLOSS_CONNECTED"],
            method=settings["UDPLOSS_METHOD"],
        )
    ]


@dataclass(frozen=True)
class UdpLossResult:
    """What one measurement gave: counts from both programs and the receiver's timing."""

    row: UdpLossRow
    sent_messages: int
    received_messages: int
    reordered_messages: int  # arrived after a later one (payloads of >= 8 bytes carry a sequence)
    send_retries: int  # sends refused for lack of socket buffer and retried (not loss)
    sender_elapsed_s: float
    receiver_elapsed_s: float  # first to last message received
    rcvbuf_effective_bytes: int  # SO_RCVBUF as the kernel set it (it doubles the request)
    mtu_bytes: int = 1500

    @property
    def loss_percent(self) -> float:
        """Messages sent but never received, % of those sent (never negative)."""
        lost = max(0, self.sent_messages - self.received_messages)
        return 100.0 * lost / self.sent_messages if self.sent_messages else 0.0

    @property
    def data_mbps(self) -> float:
        """Payload received per second of the receiver's active time, Mbit/s."""
        if self.receiver_elapsed_s <= 0:
            return 0.0
        return self.received_messages * self.row.payload_bytes * 8 / self.receiver_elapsed_s / 1e6

    @property
    def wire_mbps(self) -> float:
        """As data_mbps with UDP, IPv4 and Ethernet headers counted (`wire_bytes`), Mbit/s."""
        if self.receiver_elapsed_s <= 0:
            return 0.0
        per_message = wire_bytes(self.row.payload_bytes, self.mtu_bytes)
        return self.received_messages * per_message * 8 / self.receiver_elapsed_s / 1e6

    @property
    def tx_messages_per_s(self) -> float:
        """Sender's message rate, messages/s."""
        return self.sent_messages / self.sender_elapsed_s if self.sender_elapsed_s > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        """The row's parameters and results, flat (the results file's details.rows entry)."""
        return {
            **self.row.as_dict(),
            "sent_messages": self.sent_messages,
            "received_messages": self.received_messages,
            "reordered_messages": self.reordered_messages,
            "send_retries": self.send_retries,
            "sender_elapsed_s": self.sender_elapsed_s,
            "receiver_elapsed_s": self.receiver_elapsed_s,
            "rcvbuf_effective_bytes": self.rcvbuf_effective_bytes,
            "loss_percent": self.loss_percent,
            "data_mbps": self.data_mbps,
            "wire_mbps": self.wire_mbps,
            "tx_messages_per_s": self.tx_messages_per_s,
        }
