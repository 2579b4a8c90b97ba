"""A tunnel's outer headers in an OTG flow (op2p decapsulation): what the otg backend writes in
front of a test frame, and what vsgen's OTG server reads back as the port's `Encapsulation`.

The bytes are vsgen's own (vsperf.trafficgen.vsgen.encap.outer_headers), so a decapsulation test
sends the same frames through either generator:

    vxlan   ethernet | ipv4 (DF, TTL 64) | udp 49152 > 4789 (checksum 0) | vxlan (flags 0x08, VNI)
    geneve  ethernet | ipv4 (DF, TTL 64) | udp 49152 > 6081 (checksum 0) | custom: the GENEVE header
    gre     ethernet | ipv4 (DF, TTL 64, protocol 47) | custom: the GRE header with its key

then the test frame's own headers. OTG has no GENEVE header, and its GRE header has no key (only
the checksum's optional field): both go as `custom` bytes. A flow's size is the whole frame on
the wire: the test's frame size plus the tunnel's overhead (vsgen's into_tunnel does the same).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Any

from vsperf.traffic.streams import BENCHMARK_NET
from vsperf.traffic.tunnel import SOURCE_UDP_PORT, UDP_PORTS, Encapsulation, TunnelKind
from vsperf.trafficgen.otg.errors import Unsupported
from vsperf.trafficgen.vsgen.encap import IPPROTO_GRE, VXLAN_VNI_VALID, outer_headers
from vsperf.trafficgen.vsgen.frames import DEFAULT_TTL, IPPROTO_UDP

_L3_BYTES = 14 + 20  # outer Ethernet + IPv4: where the tunnel's own header starts
_UDP_BYTES = 8
VXLAN_FLAGS = VXLAN_VNI_VALID >> 24  # the VXLAN header's flags byte: the VNI is valid
_LAYOUTS: dict[tuple[str, ...], TunnelKind] = {
    ("FlowEthernet", "FlowIpv4", "FlowUdp", "FlowVxlan"): "vxlan",
    ("FlowEthernet", "FlowIpv4", "FlowUdp", "FlowCustom"): "geneve",
    ("FlowEthernet", "FlowIpv4", "FlowCustom"): "gre",
}


def custom_bytes(encap: Encapsulation) -> bytes:
    """The tunnel header OTG carries as custom bytes: GRE's with its key, or GENEVE's after UDP
    (neither depends on the inner frame's length)."""
    if encap.kind == "vxlan":
        raise ValueError("OTG has a VXLAN header: vxlan needs no custom bytes")
    start = _L3_BYTES + (_UDP_BYTES if encap.kind == "geneve" else 0)
    return outer_headers(encap, 0)[start:]


def add_outer_headers(packet: Any, encap: Encapsulation) -> None:
    """Append `encap`'s outer headers to a snappi flow's `packet` (its inner headers follow)."""
    eth = packet.ethernet()[-1]
    eth.src.value = encap.src_mac
    eth.dst.value = encap.dst_mac
    ip = packet.ipv4()[-1]
    ip.src.value = encap.src_ip
    ip.dst.value = encap.dst_ip
    ip.dont_fragment.value = 1
    ip.time_to_live.value = DEFAULT_TTL
    ip.protocol.value = IPPROTO_GRE if encap.kind == "gre" else IPPROTO_UDP
    if encap.kind == "gre":
        packet.custom()[-1].bytes = custom_bytes(encap).hex()
        return
    udp = packet.udp()[-1]
    udp.src_port.value = SOURCE_UDP_PORT
    udp.dst_port.value = UDP_PORTS[encap.kind]
    udp.checksum.custom = 0  # vsgen's: a UDP tunnel's checksum may be 0 (RFC 7348, 8926)
    if encap.kind == "vxlan":
        vxlan = packet.vxlan()[-1]
        vxlan.flags.value = VXLAN_FLAGS
        vxlan.vni.value = encap.key
    else:
        packet.custom()[-1].bytes = custom_bytes(encap).hex()


def split_outer(flow: str, headers: Sequence[Any]) -> tuple[Encapsulation | None, list[Any]]:
    """A flow's tunnel (None without one) and its inner headers: the outer ones are those before a
    second Ethernet header. Unsupported: outer headers or fields vsgen does not write."""
    inner_at = next((i for i, h in enumerate(headers) if i and type(h).__name__ == "FlowEthernet"), 0)
    if not inner_at:
        return None, list(headers)
    outer = headers[:inner_at]
    layout = tuple(type(h).__name__ for h in outer)
    kind = _LAYOUTS.get(layout)
    if kind is None:
        names = "/".join(n.removeprefix("Flow").lower() for n in layout)
        raise Unsupported(f"flow {flow}: vsgen sends tunnel frames inside ethernet/ipv4/udp/vxlan, "
                          f"ethernet/ipv4/udp/custom (GENEVE) or ethernet/ipv4/custom (GRE with a key), not {names}")
    eth, ip = (_fields(h) for h in outer[:2])
    _only(flow, "ethernet", eth, {"src", "dst", "ether_type"})
    _auto_or(flow, "ethernet", eth, "ether_type", 0x0800)
    _only(flow, "ipv4", ip, {"src", "dst", "version", "header_length", "time_to_live", "protocol", "dont_fragment",
                             "identification", "total_length", "header_checksum"})
    for field, default, wanted in (("version", 4, 4), ("time_to_live", 64, DEFAULT_TTL), ("dont_fragment", 0, 1),
                                   ("identification", 0, 0)):
        if _value(flow, "ipv4", ip, field, default) != wanted:
            raise Unsupported(f"flow {flow}: vsgen's outer ipv4 {field} is {wanted}, not "
                              f"{_value(flow, 'ipv4', ip, field, default)}")
    _auto_or(flow, "ipv4", ip, "header_length", 5)
    _auto_or(flow, "ipv4", ip, "protocol", IPPROTO_GRE if kind == "gre" else IPPROTO_UDP)
    _auto_or(flow, "ipv4", ip, "total_length", None)
    _auto_or(flow, "ipv4", ip, "header_checksum", None)
    key = _tunnel_key(flow, kind, outer[2:])
    try:
        encap = Encapsulation(kind, key, str(_value(flow, "ethernet", eth, "src")),
                              str(_value(flow, "ethernet", eth, "dst")), str(_value(flow, "ipv4", ip, "src")),
                              str(_value(flow, "ipv4", ip, "dst")))
    except ValueError as exc:
        raise Unsupported(f"flow {flow}: {exc}") from None
    for address in (encap.src_ip, encap.dst_ip):
        if ipaddress.IPv4Address(address) not in BENCHMARK_NET:
            raise Unsupported(f"flow {flow}: outer address {address} is outside {BENCHMARK_NET}; "
                              "vsgen sends only there")
    if kind != "vxlan":
        given = bytes.fromhex(str(outer[-1].bytes or ""))
        if given != custom_bytes(encap):
            raise Unsupported(f"flow {flow}: custom bytes {given.hex() or 'none'} are not the {kind} header vsgen "
                              f"writes ({custom_bytes(encap).hex()}, key {key})")
    return encap, list(headers[inner_at:])


def _tunnel_key(flow: str, kind: TunnelKind, headers: Sequence[Any]) -> int:
    """The VNI or GRE key of the tunnel headers after the outer IPv4 one (checked against vsgen's)."""
    if kind != "gre":
        udp = _fields(headers[0])
        _only(flow, "udp", udp, {"src_port", "dst_port", "length", "checksum"})
        for field, wanted in (("src_port", SOURCE_UDP_PORT), ("dst_port", UDP_PORTS[kind])):
            got = _value(flow, "udp", udp, field)
            if got != wanted:
                raise Unsupported(f"flow {flow}: vsgen's {kind} frames go from UDP port {SOURCE_UDP_PORT} to "
                                  f"{UDP_PORTS[kind]}, not {field} {got}")
        _auto_or(flow, "udp", udp, "length", None)
        if udp.get("checksum") != {"choice": "custom", "custom": 0}:
            raise Unsupported(f"flow {flow}: vsgen's outer UDP checksum is 0 (checksum custom 0), not "
                              f"{udp.get('checksum', 'generated good')}")
    if kind == "vxlan":
        vxlan = _fields(headers[1])
        _only(flow, "vxlan", vxlan, {"flags", "reserved0", "vni", "reserved1"})
        for field, wanted in (("flags", VXLAN_FLAGS), ("reserved0", 0), ("reserved1", 0)):
            got = _value(flow, "vxlan", vxlan, field, wanted)  # OTG's defaults are vsgen's values
            if got != wanted:
                raise Unsupported(f"flow {flow}: vsgen's vxlan {field} is {wanted:#04x}, not {got}")
        return int(_value(flow, "vxlan", vxlan, "vni"))
    custom = _fields(headers[-1])
    _only(flow, "custom", custom, {"bytes"})
    data = bytes.fromhex(str(custom.get("bytes", "")))
    if len(data) != 8:
        raise Unsupported(f"flow {flow}: the {kind} header vsgen writes is 8 custom bytes, not {len(data)}")
    word = int.from_bytes(data[4:], "big")  # GRE's key, or GENEVE's VNI << 8
    return word if kind == "gre" else word >> 8


def _fields(header: Any) -> dict[str, Any]:
    given: dict[str, Any] = header.serialize(encoding="dict")
    return given


def _only(flow: str, name: str, given: dict[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(given) - allowed)
    if extra:
        raise Unsupported(f"flow {flow}: outer {name} field {extra[0]!r} cannot be set on vsgen")


def _value(flow: str, name: str, given: dict[str, Any], field: str, default: Any = None) -> Any:
    """A field's one value (`default`, OTG's, when it is not given; none: it must be)."""
    spec = given.get(field)
    if spec is None:
        if default is None:
            raise Unsupported(f"flow {flow}: outer {name} {field} must be given (vsgen has no default for it)")
        return default
    if spec.get("choice") != "value":
        raise Unsupported(f"flow {flow}: outer {name} {field} takes one value on vsgen, not {spec.get('choice')!r}")
    return spec["value"]


def _auto_or(flow: str, name: str, given: dict[str, Any], field: str, wanted: int | None) -> None:
    """A field vsgen computes: absent, auto, a good checksum, or (`wanted` not None) that value."""
    spec = given.get(field)
    if spec is None or spec.get("choice") == "auto" or spec == {"choice": "generated", "generated": "good"}:
        return
    if wanted is not None and spec.get("choice") == "value" and spec.get("value") == wanted:
        return
    raise Unsupported(f"flow {flow}: vsgen computes the outer {name} {field} itself"
                      f"{f' ({wanted:#x})' if wanted is not None else ''}, not {spec}")
