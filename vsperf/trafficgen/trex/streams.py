"""The TRex streams of one trial, built from the test's traffic (vsperf's side: no TRex code).

Each direction of the traffic (vsperf.lab.streams: port 0 -> 1 and, bidirectionally, 1 -> 0)
is one counted stream from its TRex port, with the direction's headers, its VLAN tag and its
multistream field counting through the flows; a rate trial adds a latency stream per direction
(TRAFFICGEN_TREX_LATENCY_PPS, VSPERF's), taken out of the direction's rate so that the offered
load stays the one the search asked for. Every stream is a single burst of an exact number of
frames: what a direction sends is known before it starts.

A frame mix (IMIX) is one such stream per size of the mix and direction, each with its size's
frames of the direction's count (`FrameMix.frames_of_size`) at its share of the direction's rate:
the streams of a direction start together and end together, and TRex's scheduler interleaves the
sizes by their rates (not in the mix's fixed pattern). Each size's latency stream, when there is
room in its frames, takes its share of the direction's latency rate.

Packet group ids: part k (the k-th size of a mix; 0 otherwise) of direction d of D is stream
s = d + D * k; its counted stream is 1 + 2s, its latency stream 2 + 2s.
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


@dataclass(frozen=True)
class Part:
    """The frames of one size in a direction's share of a trial."""

    index: int  # k: the size's place in the mix (0 for one size)
    size_bytes: int
    frames: int
    pps: float
    share: float  # of the direction's frames (1.0 for one size)


def data_pg_id(stream: int) -> int:
    return 1 + 2 * stream


def latency_pg_id(stream: int) -> int:
    return 2 + 2 * stream


def parts(traffic: Traffic, frames: int, pps: float) -> list[Part]:
    """A direction's `frames` at `pps`: one part, or one per size of the traffic's mix (its
    frames of that size, at its share of the rate; a size with no frame in a short trial is left out)."""
    mix = traffic.mix
    if mix is None:
        return [Part(0, traffic.frame_size_bytes, frames, pps, 1.0)]
    counts, shares = mix.frames_of_size(frames), mix.shares
    return [Part(k, size, counts[size], pps * shares[size], shares[size])
            for k, size in enumerate(mix.sizes_bytes) if counts[size] > 0]


def payload_bytes(traffic: Traffic, size_bytes: int | None = None) -> int:
    """Bytes after the UDP header of the traffic's frames (of `size_bytes`, a size of its mix)."""
    size = traffic.frame_size_bytes if size_bytes is None else size_bytes
    return size - _HEADERS_BYTES - (_VLAN_BYTES if traffic.vlan.enabled else 0)


def latency_fits(traffic: Traffic, size_bytes: int | None = None) -> bool:
    """Whether the traffic's frames (of `size_bytes`) leave room for TRex's latency data (64 B
    frames with a VLAN tag do not)."""
    return payload_bytes(traffic, size_bytes) >= LATENCY_PAYLOAD_BYTES


def _stream_index(direction: int, directions: int, part: Part) -> int:
    return direction + directions * part.index


def _spec(traffic: Traffic, d: Direction, index: int, port: int, frames: int, pps: float, *,
          latency: bool = False, size_bytes: int | None = None) -> StreamSpec:
    vlan = traffic.vlan
    return StreamSpec(
        port=port, pg_id=latency_pg_id(index) if latency else data_pg_id(index), frames=frames, pps=pps,
        frame_size_bytes=traffic.frame_size_bytes if size_bytes is None else size_bytes,
        src_mac=d.src_mac, dst_mac=d.dst_mac, src_ip=d.src_ip,
        dst_ip=d.dst_ip, src_udp=d.src_udp, dst_udp=d.dst_udp,
        vlan_id=vlan.id if vlan.enabled else None, vlan_priority=vlan.priority if vlan.enabled else 0,
        vlan_cfi=vlan.cfi if vlan.enabled else 0, vary=d.vary, flows=d.streams, latency=latency,
    )


def rate_plan(traffic: Traffic, dirs: Sequence[Direction], ports: Sequence[int], rate_fps: float,
              duration_s: float, latency_pps: int) -> TrialPlan:
    """A rate trial: `rate_fps` (aggregate) for `duration_s`, split evenly over the directions;
    `ports[i]` is the TRex port of generator port i. With `latency_pps` > 0 (and room in the
    frames), each direction's latency stream sends min(latency_pps, a tenth of its rate); a
    mix's sizes share it as they share the frames."""
    per_direction = rate_fps / len(dirs)
    frames = max(1, round(per_direction * duration_s))
    lat_pps = min(float(latency_pps), per_direction * MAX_LATENCY_SHARE)
    streams: list[StreamSpec] = []
    for index, d in enumerate(dirs):
        port = ports[d.tx_port]
        for part in parts(traffic, frames, per_direction):
            stream = _stream_index(index, len(dirs), part)
            part_lat_pps = lat_pps * part.share if latency_fits(traffic, part.size_bytes) else 0.0
            lat_frames = round(part_lat_pps * duration_s) if part_lat_pps > 0 else 0
            if lat_frames >= part.frames:  # a trial too short or too slow to spare a latency frame
                lat_frames = 0
            if lat_frames:
                streams.append(_spec(traffic, d, stream, port, part.frames - lat_frames, part.pps - part_lat_pps,
                                     size_bytes=part.size_bytes))
                streams.append(_spec(traffic, d, stream, port, lat_frames, part_lat_pps, latency=True,
                                     size_bytes=part.size_bytes))
            else:
                streams.append(_spec(traffic, d, stream, port, part.frames, part.pps, size_bytes=part.size_bytes))
    return TrialPlan(tuple(streams), planned_s=frames / per_direction)


def burst_plan(traffic: Traffic, dirs: Sequence[Direction], ports: Sequence[int], shares: Sequence[int]) -> TrialPlan:
    """A burst: `shares[i]` frames from direction i at the line rate of its port (TRex sends as
    fast as it can below that); a mix's sizes at their shares of it."""
    port_line_fps = traffic.line_rate_fps / traffic.tx_ports
    streams = tuple(_spec(traffic, d, _stream_index(index, len(dirs), part), ports[d.tx_port], part.frames, part.pps,
                          size_bytes=part.size_bytes)
                    for index, (d, count) in enumerate(zip(dirs, shares, strict=True))
                    for part in parts(traffic, count, port_line_fps))
    return TrialPlan(streams, planned_s=max(shares) / port_line_fps, timed=False)
