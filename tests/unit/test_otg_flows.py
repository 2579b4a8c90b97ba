"""A trial as an OTG config (vsperf.trafficgen.otg.flows), and the same config as vsgen's OTG server
reads it (vsperf.trafficgen.otg.translate): the frames must be those vsgen sends directly."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

pytest.importorskip("snappi", reason="pip install 'vsperf[otg]'")

from vsperf.traffic import Traffic, Vlan
from vsperf.traffic.ports import GenPort
from vsperf.traffic.streams import directions
from vsperf.trafficgen.otg.client import new_api
from vsperf.trafficgen.otg.flows import burst_plans, rate_plans, trial_config
from vsperf.trafficgen.otg.translate import flow_defs
from vsperf.trafficgen.vsgen.frames import build_frame, frame_spec, vary_of

PORTS = (
    GenPort("ns0", "g0", "02:00:00:00:00:01", "198.18.0.1", peer_mac="02:00:00:00:00:02"),
    GenPort("ns1", "g1", "02:00:00:00:00:02", "198.18.1.1", peer_mac="02:00:00:00:00:01"),
)
RUN_TAG = 0x1234


def config_dict(traffic: Traffic, rate_fps: float = 1000.0, duration_s: float = 2.0) -> dict[str, Any]:
    api = new_api()
    plans = rate_plans(directions(traffic, PORTS), rate_fps, duration_s)
    data: dict[str, Any] = json.loads(trial_config(api, traffic, ["a", "b"], plans).serialize())
    return data


def validated(data: dict[str, Any]) -> Any:
    config = new_api().config()
    config.deserialize(json.dumps(data))  # snappi's own schema classes
    return config


def test_rate_plans_split_the_aggregate_rate_in_whole_pps() -> None:
    dirs = directions(Traffic(), PORTS)
    plans = rate_plans(dirs, 1001.0, 2.0)
    assert [p.rate_pps for p in plans] == [500, 500]  # 500.5 rounds to even
    assert [p.frames for p in plans] == [1000, 1000]
    assert [p.name for p in plans] == ["p0>p1", "p1>p0"]
    assert rate_plans(dirs[:1], 0.2, 1.0)[0].rate_pps == 1  # never 0 pps


def test_burst_plans_share_the_frames_and_skip_empty_flows() -> None:
    dirs = directions(Traffic(), PORTS)
    assert [(p.frames, p.rate_pps) for p in burst_plans(dirs, 7)] == [(4, 0), (3, 0)]
    assert [p.name for p in burst_plans(dirs, 1)] == ["p0>p1"]


def test_a_trial_config_has_ports_flows_exact_counts_and_latency() -> None:
    data = config_dict(Traffic(frame_size_bytes=128), rate_fps=2000.0, duration_s=1.5)
    assert [(p["name"], p["location"]) for p in data["ports"]] == [("p0", "a"), ("p1", "b")]
    flow = data["flows"][0]
    assert flow["tx_rx"]["port"] == {"tx_name": "p0", "rx_names": ["p1"]}
    assert flow["size"] == {"choice": "fixed", "fixed": 128}
    assert flow["rate"] == {"choice": "pps", "pps": "1000"}
    assert flow["duration"]["fixed_packets"]["packets"] == 1500
    assert flow["metrics"]["latency"] == {"enable": True, "mode": "store_forward"}
    assert [h["choice"] for h in flow["packet"]] == ["ethernet", "ipv4", "udp"]
    validated(data)


def test_a_burst_is_line_rate() -> None:
    traffic = Traffic()
    plans = burst_plans(directions(traffic, PORTS), 10)
    data = json.loads(trial_config(new_api(), traffic, ["a", "b"], plans).serialize())
    assert data["flows"][0]["rate"] == {"choice": "percentage", "percentage": 100.0}


@pytest.mark.parametrize(
    "traffic",
    [
        Traffic(),
        Traffic(bidir=False, frame_size_bytes=1518),
        Traffic(multistream=8, stream_type="L2"),
        Traffic(multistream=100, stream_type="L3"),
        Traffic(multistream=1000, stream_type="L4"),
        Traffic(vlan=Vlan(enabled=True, id=100, priority=5, cfi=1)),
    ],
    ids=["single", "unidir-1518", "L2x8", "L3x100", "L4x1000", "vlan"],
)
def test_the_server_sends_exactly_the_frames_vsgen_sends(traffic: Traffic) -> None:
    """Backend config -> snappi validation -> server translation == vsgen's own direction."""
    defs = flow_defs(validated(config_dict(traffic)), RUN_TAG)
    dirs = directions(traffic, PORTS)
    assert len(defs) == len(dirs)
    for flow, direction in zip(defs, dirs, strict=True):
        spec = frame_spec(traffic, direction, RUN_TAG)
        assert flow.frame == build_frame(spec)
        assert (flow.vary, flow.base) == vary_of(direction)
        assert flow.streams == direction.streams
        assert flow.l3_offset == spec.l3_offset
        per_flow = 1000.0 / traffic.tx_ports  # config_dict: 1000 fps aggregate for 2 s
        assert (flow.mode, flow.rate_pps, flow.frames) == ("rate", per_flow, round(per_flow * 2))
        assert flow.latency


def test_vlan_header_only_when_the_test_pushes_one() -> None:
    untagged = config_dict(Traffic())["flows"][0]["packet"]
    tagged = config_dict(replace(Traffic(), vlan=Vlan(enabled=True, id=7)))["flows"][0]["packet"]
    assert "vlan" not in [h["choice"] for h in untagged]
    assert tagged[1]["vlan"]["id"] == {"choice": "value", "value": 7}


def test_a_frame_mix_is_custom_weight_pairs() -> None:
    from vsperf.traffic.mix import parse_mix

    data = config_dict(Traffic(bidir=False).with_frame_size(parse_mix("aaaaaaaddddg")))
    size = data["flows"][0]["size"]
    assert size == {"choice": "weight_pairs", "weight_pairs": {"choice": "custom", "custom": [
        {"size": 64, "weight": 7}, {"size": 512, "weight": 4}, {"size": 1518, "weight": 1}]}}
