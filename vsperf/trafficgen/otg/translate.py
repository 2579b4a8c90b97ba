"""vsgen's OTG server: a validated OTG Config as vsgen engine directions, or why it cannot be.

vsgen sends Ethernet [802.1Q] IPv4 UDP frames with its 14-byte signature after the UDP header
and the engine session's tag in the IPv4 identification (vsperf.trafficgen.vsgen.frames); per
stream it varies one field by +1 (destination MAC, IPv4 or UDP port, or source MAC). A flow is
one engine direction; a size of custom weight pairs is a frame mix (whole weights, sizes
64..9000), sent in its pattern. A flow whose headers start with a tunnel's outer ones (VXLAN,
GENEVE, GRE with a key: vsperf.trafficgen.otg.tunnel) is sent inside them, as vsgen sends op2p
decapsulation frames (vsperf.trafficgen.vsgen.encap.into_tunnel); its size is the whole frame's.
What vsgen cannot send exactly as asked is refused with the reason, never approximated: other
headers or fields, other patterns, decrements, random values, devices.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vsperf.traffic.mix import FrameMix, MixError
from vsperf.traffic.streams import BENCHMARK_NET, mac_to_int
from vsperf.traffic.tunnel import Encapsulation
from vsperf.trafficgen.otg.errors import Unsupported
from vsperf.trafficgen.otg.tunnel import split_outer
from vsperf.trafficgen.vsgen.encap import into_tunnel
from vsperf.trafficgen.vsgen.frames import (
    DEFAULT_TTL,
    MAX_DIRECTIONS,
    MAX_FRAME_BYTES,
    MIN_FRAME_BYTES,
    FrameSpec,
    Vary,
    build_frame,
)
from vsperf.trafficgen.vsgen.protocol import MAX_PORTS, Mode

_PORT_RE = re.compile(r"^([A-Za-z0-9_.:-]{1,15})(?:@([A-Za-z0-9_.:-]{1,63}))?$")
_VARY_OF = {("FlowEthernet", "dst"): "mac", ("FlowEthernet", "src"): "smac", ("FlowIpv4", "dst"): "ip",
            ("FlowUdp", "dst_port"): "udp"}
_STEP_ONE = {"FlowEthernet": "00:00:00:00:00:01", "FlowIpv4": "0.0.0.1", "FlowUdp": 1}
# Fields vsgen writes itself, with the values it writes: a flow may name them only with these.
_FIXED: dict[str, dict[str, tuple[Any, ...]]] = {
    "FlowEthernet": {"ether_type": (0x0800, 0x8100)},
    "FlowVlan": {"tpid": (0x8100,)},
    "FlowIpv4": {"version": (4,), "header_length": (5,), "time_to_live": (DEFAULT_TTL,), "protocol": (17,),
                 "priority": (), "total_length": (), "header_checksum": ()},
    "FlowUdp": {"length": (), "checksum": ()},
}
_SET = {"FlowEthernet": ("src", "dst"), "FlowVlan": ("id", "priority", "cfi"), "FlowIpv4": ("src", "dst"),
        "FlowUdp": ("src_port", "dst_port")}
_LAYOUTS = (("FlowEthernet", "FlowIpv4", "FlowUdp"), ("FlowEthernet", "FlowVlan", "FlowIpv4", "FlowUdp"))


@dataclass(frozen=True)
class PortLocation:
    """Where an OTG port's frames go in and out: an interface, in a namespace or not."""

    ifname: str
    netns: str | None


@dataclass(frozen=True)
class FlowDef:
    """One OTG flow as one vsgen engine direction."""

    name: str
    tx_port: str
    rx_port: str
    frame: bytes  # template frame without FCS (stream 0), inside its tunnel's headers when it has one
    frame_size_bytes: int  # the flow's size: the whole frame, with FCS (a mix: their mean, rounded)
    l3_offset: int
    vary: Vary
    base: int
    streams: int
    mode: Mode
    rate_pps: float  # 0 for a burst (rate.percentage 100: as fast as the port goes)
    frames: int  # 0 when continuous
    latency: bool
    timestamps: bool
    mix: tuple[int, ...] = ()  # a frame mix: each frame's length without FCS, in sending order
    encap: Encapsulation | None = None  # the tunnel the frames go into (op2p decapsulation)


def resolve_location(location: str, declared: Mapping[str, PortLocation], netns_prefixes: tuple[str, ...]
                     ) -> PortLocation:
    """The interface behind an OTG port location: a name given with --port, or IFNAME@NETNS in a
    namespace whose name starts with one of `netns_prefixes` (the local lab's ports)."""
    if location in declared:
        return declared[location]
    match = _PORT_RE.match(location)
    if match and match.group(2) and any(match.group(2).startswith(p) for p in netns_prefixes if p):
        return PortLocation(match.group(1), match.group(2))
    served = ", ".join(sorted(declared)) or "none"
    prefixes = ", ".join(p + "*" for p in netns_prefixes if p) or "none"
    raise Unsupported(f"port location {location!r} is not served here (ports: {served}; IFNAME@NETNS with NETNS "
                      f"{prefixes})")


def _pattern(header: Any, field: str) -> tuple[Any, int]:
    """(first value, count) of a header field; count > 1 only for a +1 increment or list."""
    pattern = getattr(header, field)
    kind = type(header).__name__
    choice = pattern.choice
    if choice == "value":
        return pattern.value, 1
    if choice == "values":
        values = list(pattern.values)
        if not values:
            raise Unsupported(f"{kind} {field}: an empty list of values")
        step = _numeric(kind, values[1]) - _numeric(kind, values[0]) if len(values) > 1 else 1
        if any(_numeric(kind, v) - _numeric(kind, values[0]) != i * step for i, v in enumerate(values)) or step != 1:
            raise Unsupported(f"{kind} {field}: vsgen varies a field by +1 per stream; the values "
                              f"{values[:4]}... are not consecutive")
        return values[0], len(values)
    if choice == "increment":
        inc = pattern.increment
        if _numeric(kind, inc.step) != _numeric(kind, _STEP_ONE.get(kind, 1)):
            raise Unsupported(f"{kind} {field}: vsgen increments by 1 per stream, not by {inc.step}")
        return inc.start, int(inc.count)
    raise Unsupported(f"{kind} {field}: pattern {choice!r} is not supported by vsgen (value, values, increment)")


def _numeric(kind: str, value: Any) -> int:
    if kind == "FlowEthernet":
        return mac_to_int(str(value))
    if kind == "FlowIpv4":
        return int(ipaddress.IPv4Address(str(value)))
    return int(value)


def _check_fields(header: Any) -> None:
    kind = type(header).__name__
    given = header.serialize(encoding="dict")
    for field, spec in given.items():
        if field in _SET[kind]:
            continue
        allowed = _FIXED[kind].get(field)
        if allowed is None:
            raise Unsupported(f"{kind} field {field!r} cannot be set on vsgen")
        if isinstance(spec, dict) and spec.get("choice") == "auto":
            continue
        if isinstance(spec, dict) and spec.get("choice") == "value" and spec.get("value") in allowed:
            continue
        raise Unsupported(f"{kind} {field} {spec}: vsgen sends "
                          f"{'/'.join(hex(a) if a > 255 else str(a) for a in allowed) or 'its own value'}")


def _headers(flow: Any, headers: list[Any]) -> tuple[dict[str, Any], Vary, int, int]:
    """Header values, varied field, its base and the number of streams of `flow`'s test frame."""
    layout = tuple(type(h).__name__ for h in headers)
    if layout not in _LAYOUTS:
        raise Unsupported(f"flow {flow.name}: vsgen sends ethernet[/vlan]/ipv4/udp, not "
                          f"{'/'.join(n.removeprefix('Flow').lower() for n in layout) or 'no headers'}")
    values: dict[str, Any] = {}
    vary: Vary = "none"
    base, streams = 0, 1
    for header in headers:
        kind = type(header).__name__
        _check_fields(header)
        for field in _SET[kind]:
            first, count = _pattern(header, field)
            values[f"{kind}.{field}"] = first
            if count > 1:
                if (kind, field) not in _VARY_OF:
                    raise Unsupported(f"flow {flow.name}: vsgen varies dst MAC, src MAC, dst IPv4 or dst UDP port, "
                                      f"not {kind.removeprefix('Flow').lower()} {field}")
                if vary != "none":
                    raise Unsupported(f"flow {flow.name}: vsgen varies one field per flow")
                vary, streams = _VARY_OF[(kind, field)], count  # type: ignore[assignment]
                number = _numeric(kind, first)
                base = number & 0xFFFFFFFF if kind == "FlowEthernet" else number
    return values, vary, base, streams


def _check_range(name: str, vary: Vary, base: int, streams: int, values: Mapping[str, Any]) -> None:
    last = base + streams - 1
    if vary in ("mac", "smac") and last > 0xFFFFFFFF:
        raise Unsupported(f"flow {name}: the MAC increment wraps its low 32 bits")
    if vary == "udp" and last > 0xFFFF:
        raise Unsupported(f"flow {name}: the UDP port increment passes 65535")
    addresses = [values["FlowIpv4.src"], values["FlowIpv4.dst"]]
    if vary == "ip":
        addresses.append(str(ipaddress.IPv4Address(last & 0xFFFFFFFF)))
    for address in addresses:
        if ipaddress.IPv4Address(str(address)) not in BENCHMARK_NET:
            raise Unsupported(f"flow {name}: address {address} is outside {BENCHMARK_NET}; vsgen sends only there")


def _schedule(flow: Any) -> tuple[Mode, float, int]:
    """(mode, rate pps, frames) of a flow."""
    rate = flow.rate
    if rate.choice == "pps":
        pps = float(rate.pps)
    elif rate.choice == "percentage" and float(rate.percentage) == 100.0:
        pps = 0.0  # line rate: vsgen sends back to back
    else:
        raise Unsupported(f"flow {flow.name}: vsgen takes rate.pps or rate.percentage 100 (line rate), "
                          f"not {rate.choice} {getattr(rate, rate.choice)}")
    duration = flow.duration
    if duration.choice == "fixed_packets":
        fixed = duration.fixed_packets
        delay = fixed.delay
        if float(getattr(delay, delay.choice) or 0) != 0:
            raise Unsupported(f"flow {flow.name}: vsgen starts every flow at once (no delay)")
        return ("burst" if pps == 0 else "rate"), pps, int(fixed.packets)
    if duration.choice == "fixed_seconds" and pps > 0:
        return "rate", pps, max(1, round(pps * float(duration.fixed_seconds.seconds)))
    if duration.choice == "continuous" and pps > 0:
        return "cont", pps, 0
    raise Unsupported(f"flow {flow.name}: vsgen takes duration fixed_packets, or fixed_seconds/continuous with "
                      f"rate.pps, not {duration.choice} at {rate.choice}")


def flow_defs(config: Any, run_tag: int) -> list[FlowDef]:
    """The engine directions of a validated snappi Config (Unsupported: why vsgen cannot)."""
    raw = config.serialize(encoding="dict")
    extra = sorted(k for k, v in raw.items() if k not in ("ports", "flows", "options") and v)
    if extra:
        raise Unsupported(f"vsgen's OTG server runs ports and flows only, not {', '.join(extra)}")
    ports = [p.name for p in config.ports]
    if len(ports) > MAX_PORTS:
        raise Unsupported(f"vsgen serves at most {MAX_PORTS} ports, the config has {len(ports)}")
    flows = list(config.flows)
    if len(flows) > MAX_DIRECTIONS:
        raise Unsupported(f"vsgen runs at most {MAX_DIRECTIONS} flows at once, the config has {len(flows)}")
    defs: list[FlowDef] = []
    receivers: dict[str, str] = {}
    for flow in flows:
        if flow.tx_rx.choice != "port":
            raise Unsupported(f"flow {flow.name}: vsgen sends port flows (tx_rx.port), not {flow.tx_rx.choice}")
        tx, rx_names = flow.tx_rx.port.tx_name, list(flow.tx_rx.port.rx_names or ())
        if len(rx_names) != 1 or rx_names[0] == tx or {tx, rx_names[0]} - set(ports):
            raise Unsupported(f"flow {flow.name}: needs one rx port of the config other than its tx port")
        if rx_names[0] in receivers:
            raise Unsupported(f"flows {receivers[rx_names[0]]} and {flow.name} both go to {rx_names[0]}: vsgen "
                              "measures latency per receiving port, so each flow needs its own")
        receivers[rx_names[0]] = flow.name
        encap, inner = split_outer(flow.name, list(flow.packet))
        overhead = encap.overhead_bytes if encap is not None else 0
        size, mix = _size(flow, overhead)
        values, vary, base, streams = _headers(flow, inner)
        _check_range(flow.name, vary, base, streams, values)
        mode, pps, frames = _schedule(flow)
        has_vlan = "FlowVlan.id" in values
        spec = FrameSpec(
            src_mac=str(values["FlowEthernet.src"]), dst_mac=str(values["FlowEthernet.dst"]),
            src_ip=str(values["FlowIpv4.src"]), dst_ip=str(values["FlowIpv4.dst"]),
            src_udp=int(values["FlowUdp.src_port"]), dst_udp=int(values["FlowUdp.dst_port"]),
            frame_size_bytes=mix.largest_bytes if mix else size, run_tag=run_tag,
            vlan_id=int(values["FlowVlan.id"]) if has_vlan else None,
            vlan_priority=int(values.get("FlowVlan.priority", 0)), vlan_cfi=int(values.get("FlowVlan.cfi", 0)),
        )
        frame, l3, lengths = build_frame(spec), spec.l3_offset, tuple(s - 4 for s in mix.pattern) if mix else ()
        if encap is not None:
            try:
                frame, l3, lengths = into_tunnel(frame, l3, lengths, encap, vary)
            except ValueError as exc:
                raise Unsupported(f"flow {flow.name}: {exc}") from None
        metrics = flow.metrics
        defs.append(FlowDef(
            name=flow.name, tx_port=tx, rx_port=rx_names[0], frame=frame, frame_size_bytes=size + overhead,
            l3_offset=l3, vary=vary, base=base, streams=streams, mode=mode, rate_pps=pps,
            frames=frames, latency=bool(metrics.enable and metrics.latency.enable),
            timestamps=bool(metrics.enable and metrics.timestamps), mix=lengths, encap=encap,
        ))
    return defs


def _size(flow: Any, overhead: int) -> tuple[int, FrameMix | None]:
    """A flow's test frame size (a mix: its mean, rounded) and its mix (None: one size): the
    flow's sizes less a tunnel's `overhead` (the outer headers around the test frame)."""
    size = flow.size
    if size.choice == "weight_pairs" and size.weight_pairs.choice == "custom":
        pairs = [(int(p.size) - overhead, float(p.weight)) for p in size.weight_pairs.custom]
        if not pairs or any(w != int(w) for _, w in pairs):
            raise Unsupported(f"flow {flow.name}: vsgen sends a size mix of whole weights")
        by_size: dict[int, int] = {}
        for s, w in pairs:
            by_size[s] = by_size.get(s, 0) + int(w)
        try:
            mix = FrameMix(flow.name, tuple(sorted(by_size)), tuple(by_size[s] for s in sorted(by_size)))
        except MixError as exc:
            raise Unsupported(f"flow {flow.name}: {exc}") from None
        return round(mix.mean_bytes), mix
    if size.choice != "fixed" or not MIN_FRAME_BYTES <= int(size.fixed) - overhead <= MAX_FRAME_BYTES:
        around = f" plus the tunnel's {overhead}" if overhead else ""
        raise Unsupported(f"flow {flow.name}: vsgen sends a fixed size of {MIN_FRAME_BYTES}..{MAX_FRAME_BYTES} "
                          f"bytes{around}, or custom weight pairs")
    return int(size.fixed) - overhead, None
