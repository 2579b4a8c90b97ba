"""Parsing Pktgen-DPDK's replies, on replies captured from a real Pktgen 23.06.1 (DPDK 22.11.11).

The capture (fixtures_pktgen/replies_23.06.1.json) was made through vsperf's own client on two
pktgen processes joined by a veth pair (net_af_packet): a 1 s trial at 2000 frames/s with
latency probes, the information tables, failing requests, and counters read while sending.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vsperf.errors import TrafficGenError
from vsperf.trafficgen.pktgen import lua, replies

FIXTURE = Path(__file__).parent / "fixtures_pktgen" / "replies_23.06.1.json"


def exchanges() -> list[dict[str, Any]]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text())
    result: list[dict[str, Any]] = data["exchanges"]
    return result


def reply_to(request: str, client: int = 0, nth: int = 0) -> str:
    found = [str(x["reply"]) for x in exchanges() if x["request"] == request and x["client"] == client]
    return found[nth]


def test_every_captured_reply_is_one_json_line() -> None:
    for x in exchanges():
        assert "\n" not in x["reply"]
        json.loads(x["reply"])


def test_failed_requests_raise_with_pktgens_message() -> None:
    with pytest.raises(replies.ReplyError, match=r"attempt to call a nil value .global 'nosuch'"):
        replies.parse_reply(reply_to("return nosuch()"))
    with pytest.raises(TrafficGenError, match="unexpected symbol near <eof>"):
        replies.parse_reply(reply_to("return ("))


def test_version_from_info() -> None:
    assert replies.version(replies.parse_reply(reply_to(lua.info()))) == "23.06.1 (DPDK 22.11.11)"
    with pytest.raises(replies.ReplyError):
        replies.version({"Lua_Version": "Lua 5.3"})


def test_link_state_from_port_info() -> None:
    states = replies.link_states(replies.parse_reply(reply_to(lua.port_info())))
    assert states == {0: replies.LinkState(up=True, speed_mbps=10_000)}


def test_counters_of_the_trial() -> None:
    """The receiving pktgen's counters after the 1 s trial (2000 frames + 50 latency probes)."""
    snaps = [replies.stats_snapshot(replies.parse_reply(x["reply"]))
             for x in exchanges() if x["request"] == lua.port_stats() and x["client"] == 1]
    first, last = snaps[0], snaps[-1]
    assert not first.settled([0])  # read before pktgen's once-a-second refresh saw the end
    assert first.change[0].rx_frames > 0
    assert last.settled([0])
    # 2050 test frames + 7 ICMP errors the receiving namespace's own stack sent out of that
    # port (a packet socket sees them too; the backend subtracts them using the kernel counter)
    assert last.counters[0].rx_frames == 2057
    assert last.counters[0].tx_frames == 0
    sender = replies.stats_snapshot(replies.parse_reply(reply_to(lua.port_stats(), client=0, nth=4)))
    assert sender.counters[0].tx_frames == 2050
    assert sender.settled([0])


def test_counters_while_sending_are_not_settled() -> None:
    value = replies.parse_reply(reply_to(lua.port_stats(), client=0, nth=5))
    snap = replies.stats_snapshot(value)
    assert snap.change[0].tx_frames > 0 and not snap.settled([0])


def test_wait_result() -> None:
    done = replies.wait_result(replies.parse_reply(reply_to(lua.wait_done([0], 10))))
    assert done.cut is False and done.waited_ms > 0
    with pytest.raises(replies.ReplyError):
        replies.wait_result({"waited_ms": 1})


def test_latency_probes() -> None:
    probes = replies.latency_probes(replies.parse_reply(reply_to(lua.pkt_stats(), client=1)))
    probe = probes[0]
    assert probe.samples == 50
    assert probe.rate_us == 10_000
    assert 0 < probe.min_us <= probe.avg_us <= probe.max_us


def test_foreign_frames_are_arp_and_ipv6() -> None:
    captured = replies.parse_reply(reply_to(lua.pkt_stats(), client=1))
    assert replies.foreign_frames(captured) == {0: 0}  # the capture's namespaces carried test frames only
    captured["0"].update(arp_pkts=2, ipv6_pkts=5)  # a testbed host's stack: neighbour and router frames
    assert replies.foreign_frames(captured) == {0: 7}
    del captured["0"]["ipv6_pkts"]
    with pytest.raises(replies.ReplyError, match="lacks 'ipv6_pkts'"):
        replies.foreign_frames(captured)


@pytest.mark.parametrize("line", [b"", b"not json", b"[1, 2]", b'{"value": 1}'])
def test_malformed_replies(line: bytes) -> None:
    with pytest.raises(replies.ReplyError):
        replies.parse_reply(line)


def test_tables_without_ports_or_fields() -> None:
    with pytest.raises(replies.ReplyError, match="names no port"):
        replies.port_counters({"n": 0})
    with pytest.raises(replies.ReplyError, match="lacks"):
        replies.port_counters({"0": {"ipackets": 1}, "n": 1})
    with pytest.raises(replies.ReplyError, match="no link state"):
        replies.link_states({"0": {"info": {}}, "n": 1})
    with pytest.raises(replies.ReplyError):
        replies.stats_snapshot({"port": {}})
