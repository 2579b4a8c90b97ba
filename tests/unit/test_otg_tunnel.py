"""Tunnel frames through OTG (vsperf.trafficgen.otg.tunnel): the outer headers a decapsulation
trial's config puts before the test frame, vsgen's OTG server reading them back as the port's
Encapsulation and sending exactly the frames vsgen sends itself, and what the server refuses."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

pytest.importorskip("snappi", reason="pip install 'vsperf[otg]'")

from vsperf.config import load_settings
from vsperf.deploy.overlay import tunnel_of, tunnel_problem
from vsperf.traffic import Traffic
from vsperf.traffic.mix import parse_mix
from vsperf.traffic.ports import GenPort
from vsperf.traffic.streams import directions
from vsperf.traffic.tunnel import Encapsulation
from vsperf.trafficgen.otg.backend import OtgTrafficGenerator, port_locations
from vsperf.trafficgen.otg.client import new_api
from vsperf.trafficgen.otg.errors import Unsupported
from vsperf.trafficgen.otg.flows import rate_plans, trial_config
from vsperf.trafficgen.otg.translate import flow_defs
from vsperf.trafficgen.otg.tunnel import custom_bytes
from vsperf.trafficgen.vsgen.encap import into_tunnel
from vsperf.trafficgen.vsgen.frames import build_frame, frame_spec, mix_lengths, vary_of
from vsperf.vswitch.ovs import OvsVSwitch

GEN, SWITCH = "02:00:00:00:00:02", "02:00:00:00:00:99"
RUN_TAG = 0x4321
KEYS = {"vxlan": 99, "geneve": 0xABCDEF, "gre": 0xDEADBEEF}


def ports(kind: str) -> tuple[GenPort, GenPort]:
    """An op2p decapsulation's ports: port 0 sends into the switch's tunnel (as overlay.py sets it)."""
    encap = Encapsulation(kind, KEYS[kind], GEN, SWITCH, "198.18.240.10", "198.18.240.1")  # type: ignore[arg-type]
    return (GenPort("ns1", "g1", GEN, "198.18.1.1", peer_mac="02:00:00:00:00:01", encap=encap),
            GenPort("ns0", "g0", "02:00:00:00:00:01", "198.18.0.1", peer_mac=GEN))


def config_dict(kind: str, traffic: Traffic) -> dict[str, Any]:
    gen = ports(kind)
    plans = rate_plans(directions(traffic, gen), 1000.0, 2.0)
    data: dict[str, Any] = json.loads(trial_config(new_api(), traffic, ["a", "b"], plans,
                                                   [p.encap for p in gen]).serialize())
    return data


def defs(data: dict[str, Any]) -> list[Any]:
    config = new_api().config()
    config.deserialize(json.dumps(data))  # snappi's own schema classes
    return flow_defs(config, RUN_TAG)


def packet(data: dict[str, Any]) -> list[dict[str, Any]]:
    headers: list[dict[str, Any]] = data["flows"][0]["packet"]
    return headers


def value(header: dict[str, Any], field: str) -> Any:
    return header[header["choice"]][field]["value"]


ONE_WAY = Traffic(bidir=False, frame_size_bytes=128)


def test_a_vxlan_decapsulation_trial_puts_the_outer_headers_first() -> None:
    data = config_dict("vxlan", ONE_WAY)
    (flow,) = data["flows"]
    assert flow["tx_rx"]["port"] == {"tx_name": "p0", "rx_names": ["p1"]}
    assert flow["size"] == {"choice": "fixed", "fixed": 128 + 50}  # the test's frame inside the tunnel's 50
    headers = packet(data)
    assert [h["choice"] for h in headers] == ["ethernet", "ipv4", "udp", "vxlan", "ethernet", "ipv4", "udp"]
    outer_eth, outer_ip, udp, vxlan, inner_eth, inner_ip, _ = headers
    assert (value(outer_eth, "src"), value(outer_eth, "dst")) == (GEN, SWITCH)
    assert (value(outer_ip, "src"), value(outer_ip, "dst")) == ("198.18.240.10", "198.18.240.1")
    assert (value(outer_ip, "dont_fragment"), value(outer_ip, "time_to_live"), value(outer_ip, "protocol")) == (
        1, 64, 17)
    assert (value(udp, "src_port"), value(udp, "dst_port")) == (49152, 4789)
    assert udp["udp"]["checksum"] == {"choice": "custom", "custom": 0}
    assert (value(vxlan, "flags"), value(vxlan, "vni")) == (0x08, 99)
    assert value(inner_eth, "src") == GEN and value(inner_ip, "dst") == "198.18.1.1"  # TRAFFIC l3 dstip


@pytest.mark.parametrize(("kind", "layout", "custom"), [
    ("gre", ["ethernet", "ipv4", "custom"], "20006558deadbeef"),  # key present, TEB, the key
    ("geneve", ["ethernet", "ipv4", "udp", "custom"], "00006558abcdef00"),  # no options, TEB, VNI
])
def test_gre_and_geneve_go_as_custom_bytes(kind: str, layout: list[str], custom: str) -> None:
    data = config_dict(kind, ONE_WAY)
    headers = packet(data)
    assert [h["choice"] for h in headers] == [*layout, "ethernet", "ipv4", "udp"]
    assert headers[len(layout) - 1]["custom"] == {"bytes": custom}
    assert value(headers[1], "protocol") == {"gre": 47, "geneve": 17}[kind]
    if kind == "geneve":
        assert (value(headers[2], "src_port"), value(headers[2], "dst_port")) == (49152, 6081)
    assert data["flows"][0]["size"]["fixed"] == 128 + {"gre": 42, "geneve": 50}[kind]


@pytest.mark.parametrize("kind", ["vxlan", "gre", "geneve"])
@pytest.mark.parametrize("traffic", [
    ONE_WAY,
    Traffic(bidir=False, multistream=100, stream_type="L3"),
    Traffic(bidir=False, multistream=1000, stream_type="L4"),
    Traffic(bidir=False).with_frame_size(parse_mix("64:7,570:4,1024:1")),
], ids=["128", "L3x100", "L4x1000", "mix"])
def test_the_server_sends_exactly_the_tunnel_frames_vsgen_sends(kind: str, traffic: Traffic) -> None:
    """Backend config -> snappi -> server translation == vsgen's own direction through into_tunnel."""
    gen = ports(kind)
    (flow,) = defs(config_dict(kind, traffic))
    (direction,) = directions(traffic, gen)
    assert flow.encap == gen[0].encap
    spec = frame_spec(traffic, direction, RUN_TAG)
    vary, base = vary_of(direction)
    assert gen[0].encap is not None
    frame, l3, sizes = into_tunnel(build_frame(spec), spec.l3_offset, mix_lengths(traffic), gen[0].encap, vary)
    assert (flow.frame, flow.l3_offset, flow.mix) == (frame, l3, sizes)
    assert (flow.vary, flow.base, flow.streams) == (vary, base, direction.streams)
    assert flow.frame_size_bytes == (
        round(traffic.mix.mean_bytes) if traffic.mix else traffic.frame_size_bytes) + gen[0].encap.overhead_bytes


def test_custom_bytes_are_vsgens_tunnel_header() -> None:
    encap = ports("gre")[0].encap
    assert encap is not None and custom_bytes(encap) == bytes.fromhex("20006558deadbeef")
    with pytest.raises(ValueError, match="OTG has a VXLAN header"):
        custom_bytes(replace(encap, kind="vxlan", key=1))


def _outer(index: int, field: str, spec: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        header = packet(data)[index]
        if spec is None:
            header[header["choice"]].pop(field)
        else:
            header[header["choice"]][field] = spec
    return change


def _headers(change: Callable[[list[dict[str, Any]]], None]) -> Callable[[dict[str, Any]], None]:
    def apply(data: dict[str, Any]) -> None:
        change(packet(data))
    return apply


@pytest.mark.parametrize(("kind", "change", "message"), [
    ("vxlan", _outer(1, "time_to_live", {"choice": "value", "value": 5}), "outer ipv4 time_to_live is 64, not 5"),
    ("vxlan", _outer(1, "dont_fragment", None), "outer ipv4 dont_fragment is 1, not 0"),
    ("vxlan", _outer(1, "priority", {"choice": "raw", "raw": {"choice": "value", "value": 4}}),
     "outer ipv4 field 'priority' cannot be set"),
    ("vxlan", _outer(1, "dst", {"choice": "value", "value": "10.0.0.1"}), "outer address 10.0.0.1 is outside"),
    ("vxlan", _outer(1, "src", {"choice": "increment", "increment": {"start": "198.18.240.10", "step": "0.0.0.1",
                                                                     "count": 4}}), "takes one value"),
    ("vxlan", _outer(2, "checksum", None), "outer UDP checksum is 0"),
    ("vxlan", _outer(2, "dst_port", {"choice": "value", "value": 4790}), "not dst_port 4790"),
    ("vxlan", _outer(3, "flags", {"choice": "value", "value": 0}), "vxlan flags is 0x08, not 0"),
    ("vxlan", _outer(3, "vni", None), "outer vxlan vni must be given"),
    ("vxlan", _outer(0, "pfc_queue", {"choice": "value", "value": 1}), "outer ethernet field 'pfc_queue'"),
    ("gre", _outer(2, "bytes", "30006558deadbeef"), "custom bytes 30006558deadbeef are not the gre header"),
    ("gre", _outer(1, "protocol", {"choice": "value", "value": 17}), "computes the outer ipv4 protocol"),
    ("geneve", _outer(3, "bytes", "00006558abcdef"), "8 custom bytes, not 7"),
    ("geneve", _headers(lambda h: h.insert(3, copy.deepcopy(h[2]))), "ethernet/ipv4/udp/udp/custom"),
    ("vxlan", _headers(lambda h: h.pop(3)), "not ethernet/ipv4/udp"),
])
def test_outer_fields_vsgen_does_not_write_are_refused(kind: str, change: Callable[[dict[str, Any]], None],
                                                        message: str) -> None:
    data = copy.deepcopy(config_dict(kind, ONE_WAY))
    change(data)
    with pytest.raises(Unsupported, match=re.escape(message)):
        defs(data)


def test_frames_into_a_tunnel_vary_no_mac_and_keep_vsgens_sizes() -> None:
    with pytest.raises(Unsupported, match="flow p0>p1: frames sent into a tunnel vary their IPv4 or UDP"):
        defs(config_dict("vxlan", Traffic(bidir=False, multistream=8, stream_type="L2")))
    data = config_dict("gre", ONE_WAY)
    data["flows"][0]["size"]["fixed"] = 63 + 42
    with pytest.raises(Unsupported, match=r"fixed size of 64\.\.9018 bytes plus the tunnel's 42"):
        defs(data)


def test_otg_may_run_decapsulation_of_every_tunnel_kind() -> None:
    settings = load_settings(env={})
    for kind in ("vxlan", "gre", "geneve"):
        tunnel = tunnel_of("op2p", kind, "decapsulation", settings)
        assert tunnel is not None
        assert tunnel_problem(tunnel, Traffic(bidir=False), lab=True, switch=OvsVSwitch,
                              tunnel_frames=OtgTrafficGenerator.TUNNEL_FRAMES) == ""


def test_configured_locations_follow_the_tunnel_side_sending_first() -> None:
    """op2p decapsulation hands generator port 2 (the tunnel side) first: TRAFFICGEN_OTG_PORTS,
    in cabling order, are taken in that order too; the lab's own ports go as they come."""
    settings = load_settings(env={}, test_params="TRAFFICGEN_OTG_PORTS=['c;1;1','c;1;2']")
    gen = ports("vxlan")
    assert port_locations(settings, gen) == ["c;1;2", "c;1;1"]
    assert port_locations(settings, (replace(gen[1]), replace(gen[0], encap=None))) == ["c;1;1", "c;1;2"]
    assert port_locations(load_settings(env={}), gen) == ["g1@ns1", "g0@ns0"]
    cabled = (replace(gen[0], location="c;1;2"), replace(gen[1], location="c;1;1"))
    assert port_locations(settings, cabled) == ["c;1;2", "c;1;1"]  # the same cabling: no conflict
