"""Deployment names and the rules each one programs (VSPERF's flows)."""

from dataclasses import replace

import pytest

from vsperf.deploy.topology import (
    check_frame_modification,
    forwarding_rules,
    parse_deployment,
    port_names,
)
from vsperf.errors import ConfigError, UnknownNameError
from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort
from vsperf.traffic.streams import directions
from vsperf.vswitch.base import ForwardRule

PORTS = (
    GenPort("ns0", "g0", "02:00:00:00:00:0a", "198.18.0.1"),
    GenPort("ns1", "g1", "02:00:00:00:00:0b", "198.18.1.1"),
)


def _rules(name: str, traffic: Traffic, vlan_id: int | None = None) -> tuple[ForwardRule, ...]:
    fwd, rev = directions(replace(traffic, bidir=True), PORTS)
    return forwarding_rules(parse_deployment(name), traffic, fwd, rev, vlan_id=vlan_id)


def _pairs(rules: tuple[ForwardRule, ...]) -> list[tuple[str, str]]:
    return [(r.in_port, r.out_port) for r in rules]


@pytest.mark.parametrize(
    ("name", "layout", "vnfs"),
    [("p2p", "p2p", 0), ("clean", "clean", 0), ("pvp", "series", 1), ("pvvp", "series", 2),
     ("pvvp4", "series", 4), ("PVPV", "parallel", 2), ("pvpv3", "parallel", 3)],
)
def test_deployment_names(name: str, layout: str, vnfs: int) -> None:
    topology = parse_deployment(name)
    assert (topology.layout, topology.vnfs) == (layout, vnfs)


@pytest.mark.parametrize("name", ["p2v", "pvvp0", "pvvp10", "op3p", ""])
def test_unknown_deployments_list_the_valid_ones(name: str) -> None:
    with pytest.raises(UnknownNameError, match="p2p"):
        parse_deployment(name)


def test_ports_are_numbered_as_vsperf_numbers_them() -> None:
    assert port_names(parse_deployment("pvvp")) == ["phy0", "phy1", "vnf0.0", "vnf0.1", "vnf1.0", "vnf1.1"]
    assert port_names(parse_deployment("clean")) == []


def test_p2p_is_in_port_1_to_2_and_back() -> None:
    assert _pairs(_rules("p2p", Traffic())) == [("phy0", "phy1"), ("phy1", "phy0")]


def test_pvvp_is_a_chain_both_ways() -> None:
    assert _pairs(_rules("pvvp", Traffic())) == [
        ("phy0", "vnf0.0"), ("vnf0.0", "phy0"),
        ("vnf0.1", "vnf1.0"), ("vnf1.0", "vnf0.1"),
        ("vnf1.1", "phy1"), ("phy1", "vnf1.1"),
    ]


def test_pvpv_splits_streams_round_robin_between_vnfs() -> None:
    rules = _rules("pvpv", Traffic(multistream=4, stream_type="L3"))
    split = [(r.out_port, dict(r.match).get("nw_dst")) for r in rules if r.in_port == "phy0"]
    assert split == [("vnf0.0", "198.18.1.1"), ("vnf1.0", "198.18.1.2"),
                     ("vnf0.0", "198.18.1.3"), ("vnf1.0", "198.18.1.4")]
    assert ("vnf1.1", "phy1") in _pairs(rules) and ("vnf0.0", "phy0") in _pairs(rules)
    back = [(r.out_port, dict(r.match).get("nw_dst")) for r in rules if r.in_port == "phy1"]
    assert back[1] == ("vnf1.1", "198.18.0.2")


def test_pvpv_needs_a_stream_per_vnf() -> None:
    with pytest.raises(ConfigError, match="multistream >= 3"):
        _rules("pvpv3", Traffic(multistream=2, stream_type="L3"))


def test_pre_installed_flows_give_one_rule_per_stream_and_direction() -> None:
    rules = _rules("p2p", Traffic(multistream=1000, stream_type="L4", pre_installed_flows=True))
    assert len(rules) == 2000
    assert rules[999].match[-1] == ("tp_dst", "4000")
    assert all(r.match for r in rules)


def test_flow_type_ip_matches_the_addresses() -> None:
    rules = _rules("p2p", Traffic(flow_type="IP"))
    assert dict(rules[0].match) == {"dl_type": "0x0800", "nw_src": "198.18.0.1", "nw_dst": "198.18.1.1"}
    assert dict(rules[1].match)["nw_src"] == "198.18.1.1"


def test_vlan_is_pushed_only_towards_generator_ports() -> None:
    rules = _rules("pvp", Traffic(), vlan_id=100)
    pushed = {(r.in_port, r.out_port): r.push_vlan_id for r in rules}
    assert pushed == {("phy0", "vnf0.0"): None, ("vnf0.0", "phy0"): 100,
                      ("vnf0.1", "phy1"): 100, ("phy1", "vnf0.1"): None}


def test_clean_has_no_rules() -> None:
    assert _rules("clean", Traffic()) == ()


def test_frame_modifications() -> None:
    assert check_frame_modification(None) is None
    assert check_frame_modification("VLAN") == "vlan"
    assert check_frame_modification("MPLS") == "mpls"  # whether the switch applies it: its FRAME_MODIFICATIONS
    with pytest.raises(ConfigError, match="unknown Frame Modification 'nat' \\(valid: vlan, mpls, mac, dscp, ttl, "
                                          "ip_addr, ip_port\\)"):
        check_frame_modification("nat")


def test_frame_modifications_act_only_towards_generator_ports() -> None:
    fwd, rev = directions(replace(Traffic(), bidir=True), PORTS)
    rules = forwarding_rules(parse_deployment("pvp"), Traffic(), fwd, rev, vlan_id=None, modify="ttl")
    to_phy = {r.out_port: r for r in rules if r.out_port.startswith("phy")}
    assert to_phy["phy1"].modify == ("mod_nw_ttl:251",) and to_phy["phy0"].modify == ("mod_nw_ttl:241",)
    assert to_phy["phy1"].match == (("dl_type", "0x0800"),)  # what the action needs
    assert all(r.modify == () for r in rules if not r.out_port.startswith("phy"))
    # a match that has dl_type already keeps one
    multi = forwarding_rules(parse_deployment("p2p"), Traffic(multistream=2, stream_type="L3",
                                                                pre_installed_flows=True),
                             fwd, rev, vlan_id=None, modify="dscp")
    assert [k for k, _ in multi[0].match].count("dl_type") == 1
    assert forwarding_rules(parse_deployment("op2p"), Traffic(), fwd, rev, vlan_id=None) == ()
