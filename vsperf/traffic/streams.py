"""The streams a test sends, per direction: the one definition the generator and the flows share.

VSPERF's multistream varies one destination field per stream (`stream_type`): L2 the
destination MAC, L3 the destination IPv4 address, L4 the destination UDP port, each starting
at the direction's base value and incremented by the stream index. The reverse direction
(port 1 -> port 0) mirrors the forward one: its base destination is the forward source. The
switch's pre-installed flows (one per stream) and the parallel VNF split (pvpv) match exactly
the values the generator sends.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from vsperf.errors import ConfigError
from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort

VaryField = Literal["none", "dl_dst", "nw_dst", "tp_dst"]
BENCHMARK_NET = ipaddress.IPv4Network("198.18.0.0/15")
UNSET_MAC = "00:00:00:00:00:00"
_VARY_BY_STREAM_TYPE: dict[str, VaryField] = {"L2": "dl_dst", "L3": "nw_dst", "L4": "tp_dst"}
UDP_PROTO = 17


def mac_to_int(mac: str) -> int:
    """A MAC address as a 48-bit integer."""
    return int(mac.replace(":", ""), 16)


def int_to_mac(value: int) -> str:
    """A 48-bit integer as a MAC address."""
    raw = f"{value & 0xFFFFFFFFFFFF:012x}"
    return ":".join(raw[i : i + 2] for i in range(0, 12, 2))


@dataclass(frozen=True)
class Headers:
    """Header values of one direction's frames (stream 0): what every generator puts in them."""

    src_mac: str
    dst_mac: str
    src_ip: str
    dst_ip: str
    src_udp: int
    dst_udp: int


@dataclass(frozen=True)
class Direction(Headers):
    """The frames one generator port sends to the other, and how they vary per stream."""

    tx_port: int
    rx_port: int
    vary: VaryField
    streams: int  # 1 when nothing varies

    def value(self, stream: int) -> str:
        """The varied field's value in stream `stream`, in ovs-ofctl syntax."""
        if not 0 <= stream < self.streams:
            raise IndexError(f"stream {stream} outside 0..{self.streams - 1}")
        if self.vary == "dl_dst":
            return int_to_mac(mac_to_int(self.dst_mac) + stream)
        if self.vary == "nw_dst":
            return str(ipaddress.IPv4Address(self.dst_ip) + stream)
        if self.vary == "tp_dst":
            return str(self.dst_udp + stream)
        return ""

    def match(self, stream: int) -> tuple[tuple[str, str], ...]:
        """OpenFlow match fields selecting stream `stream` of this direction (VSPERF's)."""
        if self.vary == "dl_dst":
            return (("dl_dst", self.value(stream)),)
        if self.vary == "nw_dst":
            return (("dl_type", "0x0800"), ("nw_dst", self.value(stream)))
        if self.vary == "tp_dst":
            return (("dl_type", "0x0800"), ("nw_proto", str(UDP_PROTO)), ("tp_dst", self.value(stream)))
        return ()

    def ip_match(self) -> tuple[tuple[str, str], ...]:
        """VSPERF's flow_type 'IP': the direction's source and destination addresses."""
        return (("dl_type", "0x0800"), ("nw_src", self.src_ip), ("nw_dst", self.dst_ip))


def _check_range(traffic: Traffic, direction: Direction) -> None:
    last = direction.streams - 1
    if direction.vary == "tp_dst" and direction.dst_udp + last > 65535:
        raise ConfigError(
            f"TRAFFIC multistream {traffic.multistream} with stream_type L4 needs UDP ports up to "
            f"{direction.dst_udp + last}; lower multistream or l4 ports (max 65535)"
        )
    if direction.vary == "nw_dst":
        top = ipaddress.IPv4Address(direction.dst_ip) + last
        if top not in BENCHMARK_NET:
            raise ConfigError(
                f"TRAFFIC multistream {traffic.multistream} with stream_type L3 reaches {top}, outside "
                f"{BENCHMARK_NET}; lower multistream or the l3 addresses"
            )
    if direction.vary == "dl_dst" and (mac_to_int(direction.dst_mac) & 0xFFFFFFFF) + last > 0xFFFFFFFF:
        raise ConfigError(f"TRAFFIC multistream {traffic.multistream} overflows the destination MACs")


def directions(traffic: Traffic, ports: Sequence[GenPort]) -> list[Direction]:
    """The forward direction (port 0 -> 1) and, when `traffic.bidir`, the reverse one.

    Unset l2 MACs (00:00:00:00:00:00) mean the ports' own MACs; the addresses and UDP ports
    are TRAFFIC's l3/l4 values (the reverse direction swaps them).
    """
    if len(ports) < 2:
        raise ConfigError(f"traffic needs two generator ports, the deployment gave {len(ports)}")
    src_mac = traffic.l2.srcmac if traffic.l2.srcmac != UNSET_MAC else ports[0].mac
    dst_mac = traffic.l2.dstmac if traffic.l2.dstmac != UNSET_MAC else ports[1].mac
    vary: VaryField = _VARY_BY_STREAM_TYPE[traffic.stream_type] if traffic.multistream > 0 else "none"
    streams = max(1, traffic.multistream)
    forward = Direction(
        src_mac, dst_mac, traffic.l3.srcip, traffic.l3.dstip, traffic.l4.srcport, traffic.l4.dstport,
        tx_port=0, rx_port=1, vary=vary, streams=streams,
    )
    result = [forward]
    if traffic.bidir:
        result.append(
            Direction(
                dst_mac, src_mac, traffic.l3.dstip, traffic.l3.srcip, traffic.l4.dstport, traffic.l4.srcport,
                tx_port=1, rx_port=0, vary=vary, streams=streams,
            )
        )
    for direction in result:
        for address in (direction.src_ip, direction.dst_ip):
            if ipaddress.IPv4Address(address) not in BENCHMARK_NET:
                raise ConfigError(f"address {address} is outside {BENCHMARK_NET}; vsperf sends only there")
        _check_range(traffic, direction)
    return result
