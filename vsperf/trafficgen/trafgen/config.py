"""netsniff-ng trafgen: packet configurations from a Traffic direction, and its exit report.

One configuration per transmitting port: Ethernet, an optional 802.1Q tag (TRAFFIC vlan),
IPv4 and UDP, padded so that the frame is `frame_size_bytes` long with its FCS (trafgen
sends the frame without FCS: 4 bytes less). A frame mix is one packet per frame of the mix's
sending pattern, each padded to its size: trafgen sends a configuration's packets in turn, so
the sizes interleave as the pattern does. Multistream varies the direction's destination
field with trafgen's run-time counter `dinc(min, max)`, so stream i of the generator is
exactly stream i of vsperf.traffic.streams, which the switch's per-stream flows match.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from vsperf.errors import TrafficGenError
from vsperf.traffic import Traffic
from vsperf.traffic.streams import Direction, mac_to_int

FCS_BYTES = 4
ETH_HEADER_BYTES = 14
VLAN_TAG_BYTES = 4
IPV4_HEADER_BYTES = 20
UDP_HEADER_BYTES = 8


def payload_bytes(traffic: Traffic, frame_size_bytes: int | None = None) -> int:
    """UDP payload that makes the frame `frame_size_bytes` (default: the traffic's) long
    including the FCS."""
    size = traffic.frame_size_bytes if frame_size_bytes is None else frame_size_bytes
    headers = ETH_HEADER_BYTES + IPV4_HEADER_BYTES + UDP_HEADER_BYTES
    if traffic.vlan.enabled:
        headers += VLAN_TAG_BYTES
    payload = size - FCS_BYTES - headers
    if payload < 0:
        raise TrafficGenError(
            f"frame size {size} B is too small for Ethernet/IPv4/UDP headers ({headers + FCS_BYTES} B)"
        )
    return payload


def packet_config(traffic: Traffic, direction: Direction) -> str:
    """The trafgen configuration of `direction`'s frames (all its streams, round robin)."""
    if not (traffic.l3.enabled and traffic.l4.enabled and traffic.l3.proto.lower() == "udp"):
        raise TrafficGenError(
            "the trafgen backend sends IPv4/UDP frames only (TRAFFIC l3/l4 enabled, proto udp): "
            "frames are counted at the receiver by those headers"
        )
    last = direction.streams - 1
    eth = [f"da={direction.dst_mac}", f"sa={direction.src_mac}"]
    ipv4 = [f"sa={direction.src_ip}", f"da={direction.dst_ip}", "ttl=64"]
    udp = [f"sp={direction.src_udp}", f"dp={direction.dst_udp}"]
    if direction.vary == "dl_dst":
        low = mac_to_int(direction.dst_mac) & 0xFFFFFFFF  # dinc counts the last 4 bytes of a MAC
        eth.append(f"da=dinc({low}, {low + last})")
    elif direction.vary == "nw_dst":
        low = int(ipaddress.IPv4Address(direction.dst_ip))
        ipv4.append(f"da=dinc({low}, {low + last})")
    elif direction.vary == "tp_dst":
        udp.append(f"dp=dinc({direction.dst_udp}, {direction.dst_udp + last})")
    lines = [f"  eth({', '.join(eth)}),"]
    if traffic.vlan.enabled:
        v = traffic.vlan
        lines.append(f"  vlan(id={v.id}, pcp={v.priority}, dei={v.cfi}),")
    lines += [
        f"  ipv4({', '.join(ipv4)}),",
        f"  udp({', '.join(udp)}),",
    ]
    sizes = traffic.mix.pattern if traffic.mix is not None else (traffic.frame_size_bytes,)
    return "".join("{\n" + "\n".join([*lines, f"  fill(0x00, {payload_bytes(traffic, size)})"]) + "\n}\n"
                   for size in sizes)


@dataclass(frozen=True)
class TrafgenReport:
    """What trafgen printed when it exited."""

    packets: int  # frames handed to the interface
    seconds: float  # time spent sending (the longest of its worker CPUs)

    @property
    def rate_fps(self) -> float:
        """Achieved transmit rate, frames/s."""
        return self.packets / self.seconds if self.seconds > 0 else 0.0


_OUTGOING_RE = re.compile(r"^\s*(\d+)\s+packets outgoing", re.MULTILINE)
_CPU_RE = re.compile(r"^\s*(\d+)\s+sec,\s+(\d+)\s+usec on CPU\d+\s+\((\d+) packets\)", re.MULTILINE)


def parse_report(text: str) -> TrafgenReport:
    """Parse trafgen's exit statistics; TrafficGenError when they are missing."""
    outgoing = [int(n) for n in _OUTGOING_RE.findall(text)]
    cpus = [(int(s) + int(us) / 1e6, int(n)) for s, us, n in _CPU_RE.findall(text)]
    if not outgoing:
        tail = " | ".join(text.strip().splitlines()[-3:])
        raise TrafficGenError(f"trafgen printed no statistics: {tail or 'no output'}")
    seconds = max((t for t, _ in cpus), default=0.0)
    return TrafgenReport(packets=sum(outgoing), seconds=seconds)


def parse_version(text: str) -> str:
    """'trafgen 0.6.8 (Flutternozzle), Git id: (none)' -> '0.6.8'."""
    match = re.search(r"trafgen\s+(\S+)", text)
    return match.group(1).rstrip(",") if match else (text.strip().splitlines() or ["unknown"])[0]
