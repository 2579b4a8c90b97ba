"""The traffic a test sends: VSPERF's TRAFFIC setting as a typed, frozen object."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from vsperf.traffic.mix import FrameMix
from vsperf.traffic.warmup import WarmStart
from vsperf.units import line_rate_fps

# A frame size as results name it: bytes (FCS included), or a frame mix's name (its genome or
# size list, see vsperf.traffic.mix).
PacketSize = int | str

TrafficType = Literal[
    "rfc2544_throughput",
    "rfc2544_back2back",
    "rfc2544_continuous",
    "burst",
    "rfc2544_latency",
    "rfc2544_frame_loss",
    "rfc2544_recovery",
    "rfc2544_reset",
    "rfc9004_back2back",
    "rfc2889_forwarding",
    "rfc2889_caching",
    "rfc2889_learning",
    # the seeds' other benchmarks (vsperf.benchmarks): their own programs, not the generator
    "udp_msg_loss",
    "iperf3_tcp",
    "iperf3_udp",
    "sweep_bw",
    "sweep_latency",
]
StreamType = Literal["L2", "L3", "L4"]


@dataclass(frozen=True)
class L2:
    """Ethernet header of generated frames (per-port values are derived by the generator)."""

    srcmac: str = "00:00:00:00:00:00"
    dstmac: str = "00:00:00:00:00:00"


@dataclass(frozen=True)
class L3:
    """IPv4 header of generated frames; addresses must be in 198.18.0.0/15."""

    proto: str = "udp"
    srcip: str = "198.18.0.1"
    dstip: str = "198.18.1.1"
    enabled: bool = True


@dataclass(frozen=True)
class L4:
    """UDP header of generated frames."""

    srcport: int = 3000
    dstport: int = 3001
    enabled: bool = True


@dataclass(frozen=True)
class Vlan:
    """802.1Q tag added by the generator when enabled."""

    enabled: bool = False
    id: int = 0
    priority: int = 0
    cfi: int = 0


@dataclass(frozen=True)
class Traffic:
    """What to send in one test at one frame size.

    Rates handed to a measurer are aggregate over every transmitting port (both directions
    when `bidir`), the same aggregate as VSPERF's throughput_rx_fps.
    """

    traffic_type: TrafficType = "rfc2544_throughput"
    frame_size_bytes: int = 64
    bidir: bool = True
    frame_rate_percent: float = 100.0  # offered load of continuous/burst traffic, % of line rate
    multistream: int = 0  # number of flows; 0 means a single stream
    stream_type: StreamType = "L4"
    pre_installed_flows: bool = False  # VSPERF's 'Yes'/'No', as a bool
    flow_type: Literal["port", "IP"] = "port"
    l2: L2 = field(default_factory=L2)
    l3: L3 = field(default_factory=L3)
    l4: L4 = field(default_factory=L4)
    vlan: Vlan = field(default_factory=Vlan)
    link_speed_bps: float = 10e9  # speed of one generator port
    burst_frames: int = 100  # frames of a 'burst' traffic type, per test
    learning_frames: bool = True  # send learning frames before a search (learning switches)
    # A frame mix (IMIX) instead of one size; frame_size_bytes is then its mean size, rounded
    # (what integer arithmetic on one size approximates); use mean_frame_bytes for rates.
    mix: FrameMix | None = None
    latency_histogram: bool = False  # TRAFFIC latency_histogram: keep each trial's whole latency distribution
    warm_start: WarmStart | None = None  # sent before each trial, not counted (TRAFFICGEN_WARM_START)

    @property
    def tx_ports(self) -> int:
        """Number of transmitting ports (2 for bidirectional traffic)."""
        return 2 if self.bidir else 1

    @property
    def streams(self) -> int:
        """Number of flows per direction (at least 1)."""
        return max(1, self.multistream)

    @property
    def mean_frame_bytes(self) -> float:
        """Mean frame size, bytes with FCS: the one size, or the mix's mean."""
        return self.mix.mean_bytes if self.mix is not None else float(self.frame_size_bytes)

    @property
    def largest_frame_bytes(self) -> int:
        """The largest frame sent: what every port and the path's MTU must carry."""
        return self.mix.largest_bytes if self.mix is not None else self.frame_size_bytes

    @property
    def frame_sizes(self) -> tuple[int, ...]:
        """Every frame size sent, increasing."""
        return self.mix.sizes_bytes if self.mix is not None else (self.frame_size_bytes,)

    @property
    def packet_size(self) -> PacketSize:
        """The frame size as results name it: bytes, or the mix's name."""
        return self.mix.name if self.mix is not None else self.frame_size_bytes

    @property
    def line_rate_fps(self) -> float:
        """Aggregate line rate over every transmitting port, frames/s (a mix: at its mean size)."""
        return line_rate_fps(self.mean_frame_bytes, self.link_speed_bps) * self.tx_ports

    def with_frame_size(self, size: int | FrameMix) -> Traffic:
        """The same traffic at one frame size, or with a frame mix."""
        if isinstance(size, FrameMix):
            return replace(self, frame_size_bytes=round(size.mean_bytes), mix=size)
        return replace(self, frame_size_bytes=size, mix=None)

    def as_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)
