"""The TRex streams of one trial, built from the test's traffic (vsperf's side: no TRex code).

Each direction of the traffic (vsperf.lab.streams: port 0 -> 1 and, bidirectionally, 1 -> 0)
is one counted stream from its TRex port, with the direction's headers, its VLAN tag and its
multistream field counting through the flows; a rate trial adds a latency stream per direction
(TRAFFICGEN_TREX_LATENCY_PPS, VSPERF's), taken out of the direction's rate so that the offered
load stays the one the search asked for. Every stream is a single burst of an exact number of
frames: what a direction sends is known before it starts.

Packet group ids: direction d's counted stream is 1 + 2d, its latency stream 2 + 2d.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vsperf.traffic import Traffic
from vsperf.traffic.streams import Direction
from vsperf.trafficgen.trex.protocol import StreamSpec

# A latency stream takes at most this share of its direction's rate.
MAX_LATENCY_SHARE = 0.1
# TRex writes 16 bytes of timestamp and sequence number at the end of a latency frame's payload.
LATENCY_PAYLOAD_BYTES = 16
_HEADERS_BYTES = 14 + 20 + 8 + 4  # Ethernet, IPv4, UDP, FCS
_VLAN_BYTES = 4


@dataclass(frozen=True)
class TrialPlan:
    """The streams of one trial and what the result is judged against."""

    streams: tuple[StreamSpec, ...]
    planned_s: float  # how long the slowest direction needs at its rate
    timed: bool = True  # a rate trial (stopped when it overruns); False: a burst (sends all its frames)

    @property
    def tx_ports(self) -> tuple[int, ...]:
        return tuple(sorted({s.port for s in self.streams}))

    @property
    def frames(self) -> int:
        """Frames the trial sends, every stream."""
        return sum(s.frames for s in self.streams)

    @property
    def latency_pg_ids(self) -> tuple[int, ...]:
        return tuple(s.pg_id for s in self.streams if s.latency)


def data_pg_id(direction: int) -> int:
    return 1 + 2 * direction


def latency_pg_id(direction: int) -> int:
    return 2 + 2 * direction


def payload_bytes(traffic: Traffic) -> int:
    """Bytes after the UDP header of the traffic's frames."""
    return traffic.frame_size_bytes - _HEADERS_BYTES - (_VLAN_BYTES if traffic.vlan.enabled else 0)


def latency_fits(traffic: Traffic) -> bool:
    """Whether the traffic's frames leave room for TRex's latency data (64 B frames with a VLAN
    tag do not)."""
    return payload_bytes(traffic) >= LATENCY_PAYLOAD_BYTES


def _spec(traffic: Traffic, d: Direction, index: int, port: int, frames: int, pps: float, *,
          latency: bool = False) -> StreamSpec:
    vlan = traffic.vlan
    return StreamSpec(
        port=port, pg_id=latency_pg_id(index) if latency else data_pg_id(index), frames=frames, pps=pps,
        frame_size_bytes=traffic.frame_size_bytes, src_mac=d.src_mac, dst_mac=d.dst_mac, src_ip=d.src_ip,
        dst_ip=d.dst_ip, src_udp=d.src_udp, dst_udp=d.dst_udp,
        vlan_id=vlan.id if vlan.enabled else None, vlan_priority=vlan.priority if vlan.enabled else 0,
        vlan_cfi=vlan.cfi if vlan.enabled else 0, vary=d.vary, flows=d.streams, latency=latency,
    )


def rate_plan(traffic: Traffic, dirs: Sequence[Direction], ports: Sequence[int], rate_fps: float,
              duration_s: float, latency_pps: int) -> TrialPlan:
    """A rate trial: `rate_fps` (aggregate) for `duration_s`, split evenly over the directions;
    `ports[i]` is the TRex port of generator port i. With `latency_pps` > 0 (and room in the
    frames), each direction's latency stream sends min(latency_pps, a tenth of its rate)."""
    per_direction = rate_fps / len(dirs)
    frames = max(1, round(per_direction * duration_s))
    lat_pps = min(float(latency_pps), per_direction * MAX_LATENCY_SHARE) if latency_fits(traffic) else 0.0
    lat_frames = round(lat_pps * duration_s) if lat_pps > 0 else 0
    if lat_frames >= frames:  # a trial too short or too slow to spare a latency frame
        lat_frames = 0
    streams: list[StreamSpec] = []
    for index, d in enumerate(dirs):
        port = ports[d.tx_port]
        if lat_frames:
            streams.append(_spec(traffic, d, index, port, frames - lat_frames, per_direction - lat_pps))
            streams.append(_spec(traffic, d, index, port, lat_frames, lat_pps, latency=True))
        else:
            streams.append(_spec(traffic, d, index, port, frames, per_direction))
    return TrialPlan(tuple(streams), planned_s=frames / per_direction)


def burst_plan(traffic: Traffic, dirs: Sequence[Direction], ports: Sequence[int], shares: Sequence[int]) -> TrialPlan:
    """A burst: `shares[i]` frames from direction i at the line rate of its port (TRex sends as
    fast as it can below that)."""
    port_line_fps = traffic.line_rate_fps / traffic.tx_ports
    streams = tuple(_spec(traffic, d, index, ports[d.tx_port], count, port_line_fps)
                    for index, (d, count) in enumerate(zip(dirs, shares, strict=True)))
    return TrialPlan(streams, planned_s=max(shares) / port_line_fps, timed=False)
