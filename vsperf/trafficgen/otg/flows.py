"""One trial as one OTG configuration: a flow per direction, exact frame counts, latency on.

The headers are those every vsperf generator sends (vsperf.traffic.streams): Ethernet, an 802.1Q
tag when the test pushes one, IPv4 and UDP. Multistream varies one destination field per
stream (stream_type L2: MAC, L3: IPv4 address, L4: UDP port) from the direction's base value
upwards, written as an OTG increment with step 1 and count = streams. Rates are `rate.pps`
(whole frames per second) and durations `duration.fixed_packets` (exact frame counts: an
IxNetwork `fixed_seconds` takes whole seconds only). A burst is `rate.percentage` 100. A frame mix
is `size.weight_pairs` custom: its sizes and weights (the controller interleaves them).
A direction whose transmit port sends into a tunnel (op2p decapsulation: the port's `encap`)
puts the tunnel's outer headers first (vsperf.trafficgen.otg.tunnel) and adds their bytes to
every size: the test's frame size is the frame inside the tunnel, as vsgen sends it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vsperf.traffic import Traffic
from vsperf.traffic.streams import Direction
from vsperf.traffic.tunnel import Encapsulation
from vsperf.trafficgen.otg.tunnel import add_outer_headers

PORT_NAMES = ("p0", "p1")


@dataclass(frozen=True)
class FlowPlan:
    """What one flow of a trial sends: `frames` frames at `rate_pps` (0: line rate, a burst)."""

    name: str
    direction: Direction
    rate_pps: int
    frames: int

    def __post_init__(self) -> None:
        if self.frames < 1 or self.rate_pps < 0:
            raise ValueError(f"flow {self.name}: needs >= 1 frame and a rate >= 0, got {self.frames}, "
                             f"{self.rate_pps} pps")


def flow_name(direction: Direction) -> str:
    """The flow of `direction`, named after its ports ("p0>p1")."""
    return f"{PORT_NAMES[direction.tx_port]}>{PORT_NAMES[direction.rx_port]}"


def rate_plans(dirs: Sequence[Direction], rate_fps: float, duration_s: float) -> list[FlowPlan]:
    """Flows of a rate trial: the aggregate rate split evenly, rate x duration frames each.

    OTG rates are whole frames per second: each flow's rate is rounded (at least 1 pps)."""
    per_flow = rate_fps / len(dirs)
    pps = max(1, round(per_flow))
    frames = max(1, round(pps * duration_s))
    return [FlowPlan(flow_name(d), d, pps, frames) for d in dirs]


def burst_plans(dirs: Sequence[Direction], frames: int) -> list[FlowPlan]:
    """Flows of a burst of `frames` frames (aggregate) at line rate; the first flow takes the
    remainder, and flows that would get no frame are left out."""
    used = list(dirs)[:frames]
    share = [frames // len(used)] * len(used)
    share[0] += frames - sum(share)
    return [FlowPlan(flow_name(d), d, 0, n) for d, n in zip(used, share, strict=True)]


def _set_field(field: Any, value: str | int, streams: int, step: str | int) -> None:
    if streams > 1:
        field.increment.start = value
        field.increment.step = step
        field.increment.count = streams
    else:
        field.value = value


def _add_flow(config: Any, traffic: Traffic, plan: FlowPlan, encap: Encapsulation | None) -> None:
    d = plan.direction
    flow = config.flows.flow(name=plan.name)[-1]
    flow.tx_rx.port.tx_name = PORT_NAMES[d.tx_port]
    flow.tx_rx.port.rx_names = [PORT_NAMES[d.rx_port]]
    outer = encap.overhead_bytes if encap is not None else 0
    if traffic.mix is not None:
        pairs = flow.size.weight_pairs
        pairs.choice = "custom"
        for size, weight in zip(traffic.mix.sizes_bytes, traffic.mix.weights, strict=True):
            pairs.custom.add(size=size + outer, weight=weight)
    else:
        flow.size.fixed = traffic.frame_size_bytes + outer
    if plan.rate_pps:
        flow.rate.pps = plan.rate_pps
    else:
        flow.rate.percentage = 100.0
    flow.duration.fixed_packets.packets = plan.frames
    flow.metrics.enable = True
    flow.metrics.loss = True
    flow.metrics.timestamps = True
    flow.metrics.latency.enable = True
    flow.metrics.latency.mode = flow.metrics.latency.STORE_FORWARD
    if encap is not None:
        add_outer_headers(flow.packet, encap)
    eth = flow.packet.ethernet()[-1]
    streams = d.streams
    _set_field(eth.src, d.src_mac, 1, "")
    _set_field(eth.dst, d.dst_mac, streams if d.vary == "dl_dst" else 1, "00:00:00:00:00:01")
    vlan = traffic.vlan
    if vlan.enabled:
        tag = flow.packet.vlan()[-1]
        tag.id.value = vlan.id
        tag.priority.value = vlan.priority
        tag.cfi.value = vlan.cfi
    ip = flow.packet.ipv4()[-1]
    _set_field(ip.src, d.src_ip, 1, "")
    _set_field(ip.dst, d.dst_ip, streams if d.vary == "nw_dst" else 1, "0.0.0.1")
    udp = flow.packet.udp()[-1]
    _set_field(udp.src_port, d.src_udp, 1, 0)
    _set_field(udp.dst_port, d.dst_udp, streams if d.vary == "tp_dst" else 1, 1)


def trial_config(api: Any, traffic: Traffic, locations: Sequence[str], plans: Sequence[FlowPlan],
                 encaps: Sequence[Encapsulation | None] = ()) -> Any:
    """The snappi Config of one trial: both ports at `locations`, one flow per plan; a flow from
    port i sends inside `encaps[i]`'s tunnel when it is given (op2p decapsulation)."""
    if len(locations) < 2:
        raise ValueError(f"an OTG trial needs two port locations, got {len(locations)}")
    config = api.config()
    for name, location in zip(PORT_NAMES, locations, strict=False):
        config.ports.port(name=name, location=location)
    for plan in plans:
        tx = plan.direction.tx_port
        _add_flow(config, traffic, plan, encaps[tx] if tx < len(encaps) else None)
    return config
