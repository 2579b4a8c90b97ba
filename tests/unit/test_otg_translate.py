"""What vsgen's OTG server refuses, with the reason (vsperf.trafficgen.otg.translate)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("snappi", reason="pip install 'vsperf[otg]'")

from vsperf.trafficgen.otg.client import new_api
from vsperf.trafficgen.otg.errors import Unsupported
from vsperf.trafficgen.otg.translate import PortLocation, flow_defs, resolve_location

BASE: dict[str, Any] = {
    "ports": [{"name": "p0", "location": "a"}, {"name": "p1", "location": "b"}],
    "flows": [{
        "name": "f",
        "tx_rx": {"choice": "port", "port": {"tx_name": "p0", "rx_names": ["p1"]}},
        "packet": [
            {"choice": "ethernet", "ethernet": {"src": {"choice": "value", "value": "02:00:00:00:00:01"},
                                                "dst": {"choice": "value", "value": "02:00:00:00:00:02"}}},
            {"choice": "ipv4", "ipv4": {"src": {"choice": "value", "value": "198.18.0.1"},
                                        "dst": {"choice": "value", "value": "198.18.1.1"}}},
            {"choice": "udp", "udp": {"src_port": {"choice": "value", "value": 3000},
                                      "dst_port": {"choice": "value", "value": 3001}}},
        ],
        "size": {"choice": "fixed", "fixed": 64},
        "rate": {"choice": "pps", "pps": "1000"},
        "duration": {"choice": "fixed_packets", "fixed_packets": {"packets": 500}},
        "metrics": {"enable": True, "latency": {"enable": True, "mode": "store_forward"}},
    }],
}


def defs(change: Callable[[dict[str, Any]], None] | None = None) -> list[Any]:
    data = copy.deepcopy(BASE)
    if change:
        change(data)
    config = new_api().config()
    config.deserialize(json.dumps(data))
    return flow_defs(config, 1)


def header(data: dict[str, Any], index: int) -> dict[str, Any]:
    packet: dict[str, Any] = data["flows"][0]["packet"][index]
    result: dict[str, Any] = packet[packet["choice"]]
    return result


def test_a_plain_flow_is_one_direction() -> None:
    (flow,) = defs()
    assert (flow.tx_port, flow.rx_port, flow.mode, flow.rate_pps, flow.frames) == ("p0", "p1", "rate", 1000.0, 500)
    assert (flow.vary, flow.streams, flow.latency) == ("none", 1, True)
    assert len(flow.frame) == 60  # 64 bytes less the FCS


def test_consecutive_values_and_increments_are_streams() -> None:
    def values(data: dict[str, Any]) -> None:
        header(data, 2)["dst_port"] = {"choice": "values", "values": [5000, 5001, 5002]}

    (flow,) = defs(values)
    assert (flow.vary, flow.base, flow.streams) == ("udp", 5000, 3)

    def smac(data: dict[str, Any]) -> None:
        header(data, 0)["src"] = {"choice": "increment",
                                  "increment": {"start": "02:00:00:00:01:00", "step": "00:00:00:00:00:01",
                                                "count": 16}}

    (flow,) = defs(smac)
    assert (flow.vary, flow.base, flow.streams) == ("smac", 0x00000100, 16)


def test_continuous_and_fixed_seconds() -> None:
    def seconds(data: dict[str, Any]) -> None:
        data["flows"][0]["duration"] = {"choice": "fixed_seconds", "fixed_seconds": {"seconds": 2.5}}

    assert defs(seconds)[0].frames == 2500

    def continuous(data: dict[str, Any]) -> None:
        data["flows"][0]["duration"] = {"choice": "continuous", "continuous": {}}

    assert defs(continuous)[0].mode == "cont"


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        node: Any = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


def _packet(index: int, field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        header(data, index)[field] = value

    return change


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_packet(2, "dst_port", {"choice": "decrement", "decrement": {"start": 9, "step": 1, "count": 3}}),
         "pattern 'decrement' is not supported"),
        (_packet(2, "dst_port", {"choice": "values", "values": [1, 3, 5]}), "not consecutive"),
        (_packet(1, "dst", {"choice": "increment", "increment": {"start": "198.18.1.1", "step": "0.0.0.2",
                                                                "count": 4}}), "increments by 1"),
        (_packet(1, "src", {"choice": "increment", "increment": {"start": "198.18.0.1", "step": "0.0.0.1",
                                                                "count": 4}}), "vsgen varies dst MAC"),
        (_packet(1, "dst", {"choice": "value", "value": "10.0.0.1"}), "outside 198.18.0.0/15"),
        (_packet(1, "time_to_live", {"choice": "value", "value": 5}), "time_to_live"),
        (_packet(1, "identification", {"choice": "value", "value": 5}), "cannot be set on vsgen"),
        (_packet(0, "dst", {"choice": "auto", "auto": "00:00:00:00:00:00"}), "pattern 'auto'"),
        (_set(("flows", 0, "packet"), [{"choice": "ethernet", "ethernet": {}}]), "ethernet[/vlan]/ipv4/udp"),
        (_set(("flows", 0, "rate"), {"choice": "mbps", "mbps": 100}), "rate.pps or rate.percentage 100"),
        (_set(("flows", 0, "rate"), {"choice": "percentage", "percentage": 50}), "rate.percentage 100"),
        (_set(("flows", 0, "size"), {"choice": "fixed", "fixed": 60}), "fixed size of 64"),
        (_set(("flows", 0, "tx_rx", "port", "rx_names"), ["p0"]), "one rx port of the config other than"),
        (_set(("layer1",), [{"name": "l1", "port_names": ["p0"], "speed": "speed_10_gbps"}]), "not layer1"),
    ],
)
def test_what_vsgen_cannot_send_is_refused_with_the_reason(change: Callable[[dict[str, Any]], None],
                                                           message: str) -> None:
    with pytest.raises(Unsupported, match=message.replace("[", r"\[").replace(".", r"\.")):
        defs(change)


def test_two_flows_to_one_port_are_refused() -> None:
    def twice(data: dict[str, Any]) -> None:
        second = copy.deepcopy(data["flows"][0])
        second["name"] = "g"
        data["flows"].append(second)

    with pytest.raises(Unsupported, match="both go to p1"):
        defs(twice)


def test_port_locations_are_declared_names_or_lab_namespaces() -> None:
    declared = {"a": PortLocation("eth1", None)}
    assert resolve_location("a", declared, ()) == PortLocation("eth1", None)
    assert resolve_location("vsp1g0@vsp1g0", declared, ("vsp",)) == PortLocation("vsp1g0", "vsp1g0")
    for refused in ("vsp1g0@other", "eth0", "x@y@z", "a;b"):
        with pytest.raises(Unsupported, match="is not served here"):
            resolve_location(refused, declared, ("vsp",))


def test_custom_weight_pairs_are_a_frame_mix() -> None:
    mix = {"choice": "weight_pairs", "weight_pairs": {"choice": "custom", "custom": [
        {"size": 64, "weight": 7}, {"size": 570, "weight": 4}, {"size": 1518, "weight": 1}]}}
    (flow,) = defs(_set(("flows", 0, "size"), mix))
    assert len(flow.frame) == 1514 and flow.frame_size_bytes == 354  # the largest frame; the mean, rounded
    assert sorted(flow.mix) == sorted([60] * 7 + [566] * 4 + [1514]) and flow.mix[:3] == (60, 566, 60)
    bad = {"choice": "weight_pairs", "weight_pairs": {"choice": "custom", "custom": [{"size": 64, "weight": 1.5}]}}
    with pytest.raises(Unsupported, match="whole weights"):
        defs(_set(("flows", 0, "size"), bad))
    with pytest.raises(Unsupported, match=r"fixed size of 64\.\.9018 bytes, or custom weight pairs"):
        defs(_set(("flows", 0, "size"), {"choice": "weight_pairs", "weight_pairs": {"choice": "predefined"}}))
