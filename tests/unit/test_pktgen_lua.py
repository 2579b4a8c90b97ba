"""The Lua vsperf sends to Pktgen-DPDK: request framing, quoting, rate arithmetic, port setup.

The requests recorded in fixtures_pktgen/replies_23.06.1.json were sent to a real Pktgen
23.06.1 and accepted; the tests check that vsperf still generates exactly those.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from vsperf.trafficgen.pktgen import lua

FIXTURE = Path(__file__).parent / "fixtures_pktgen" / "replies_23.06.1.json"


def exchanges() -> list[dict[str, Any]]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text())
    result: list[dict[str, Any]] = data["exchanges"]
    return result


def test_request_wraps_one_line_chunk() -> None:
    assert lua.request("return 1") == b"vsperf_call([==[return 1]==])\n"


@pytest.mark.parametrize("code", ["a\nb", "x]==]y", "a\rb"])
def test_request_refuses_what_would_break_the_frame(code: str) -> None:
    with pytest.raises(ValueError):
        lua.request(code)


def test_helper_is_one_line_and_writes_json_lines() -> None:
    assert "\n" not in lua.HELPER
    assert "io.write('{\"ok\":true,\"value\":'" in lua.HELPER
    assert "io.flush()" in lua.HELPER


def test_lua_str_escapes_quotes_backslashes_and_non_ascii() -> None:
    assert lua.lua_str("198.18.0.1") == '"198.18.0.1"'
    assert lua.lua_str('a"b\\c]') == '"a\\034b\\092c\\093"'
    assert lua.lua_str("é") == '"\\195\\169"'


@pytest.mark.parametrize("size", [64, 128, 512, 1518])
@pytest.mark.parametrize("fps", [1, 999, 1000, 14_000, 148_809, 812_743])
def test_rate_percent_makes_pktgen_send_the_requested_frames(size: int, fps: int) -> None:
    full = lua.link_full_fps(size, 10_000)
    if fps > full:
        pytest.skip("above line rate")
    rate = float(lua.format_rate(lua.rate_percent(fps, size, 10_000)))  # as pktgen parses it
    assert lua.pktgen_pps(rate, size, 10_000) == fps


def test_rate_percent_rounds_fractional_rates_and_caps_at_line_rate() -> None:
    assert lua.pktgen_pps(lua.rate_percent(148_809.52, 64, 10_000), 64, 10_000) == 148_810
    assert lua.rate_percent(2e7, 64, 10_000) == 100.0
    assert lua.pktgen_pps(lua.rate_percent(0.2, 64, 10_000), 64, 10_000) == 1


def test_line_rate_as_pktgen_computes_it() -> None:
    assert lua.link_full_fps(64, 10_000) == 14_880_952
    assert lua.link_full_fps(1518, 10_000) == 812_743
    assert lua.pktgen_pps(100.0, 64, 10_000) == 14_880_952
    assert lua.pktgen_pps(250.0, 64, 10_000) == 14_880_952  # pktgen caps at 100 %


def test_rate_percent_refuses_nonsense() -> None:
    with pytest.raises(ValueError):
        lua.rate_percent(0, 64, 10_000)
    with pytest.raises(ValueError):
        lua.rate_percent(100, 64, 0)


@pytest.mark.parametrize(("pps", "burst"), [(1, 1), (999, 1), (5_000, 5), (64_000, 64), (14_880_952, 64)])
def test_tx_burst_gives_millisecond_slots(pps: int, burst: int) -> None:
    assert lua.tx_burst_for(pps) == burst


def test_prime_rate_is_one_burst_per_half_second() -> None:
    rate = lua.prime_rate(64, 10_000, 4)
    assert lua.pktgen_pps(rate, 64, 10_000) == pytest.approx(8, abs=1)


def _setup(**kw: Any) -> lua.PortSetup:
    base: dict[str, Any] = dict(
        port=0, frame_size_bytes=64, rate=1.5, count=1000, src_mac="02:00:00:00:00:01",
        dst_mac="02:00:00:00:00:02", src_ip="198.18.0.1", dst_ip="198.18.0.2", src_udp=3000, dst_udp=3001,
        vary="none", streams=1,
    )
    base.update(kw)
    return lua.PortSetup(**base)


def test_single_stream_setup() -> None:
    code = lua.setup_port(_setup())
    assert "pktgen.set(\"0\", 'size', 64)" in code
    assert "pktgen.set(\"0\", 'count', 1000)" in code
    assert "pktgen.set(\"0\", 'rate', \"1.5\")" in code
    assert "pktgen.set_ipaddr(\"0\", 'dst', \"198.18.0.2\")" in code
    assert "pktgen.set_mac(\"0\", 'dst', \"02:00:00:00:00:02\")" in code
    assert "pktgen.set_proto(\"0\", 'udp')" in code
    assert code.endswith("pktgen.set_range(\"0\", 'off')")
    assert "pktgen.vlan(\"0\", 'off')" in code
    # burst before rate: pktgen's period is burst / pps
    assert code.index("'burst'") < code.index("'rate'")


def test_multistream_l4_steps_the_destination_port_only() -> None:
    code = lua.setup_port(_setup(vary="tp_dst", streams=16))
    assert "pktgen.range.dst_port(\"0\", 'max', 3016)" in code
    assert "pktgen.range.dst_port(\"0\", 'inc', 1)" in code
    assert "pktgen.range.dst_ip(\"0\", 'max', \"198.18.0.2\")" in code
    assert "pktgen.range.dst_ip(\"0\", 'inc', \"0.0.0.0\")" in code
    assert "pktgen.range.pkt_size(\"0\", 'start', 64)" in code
    assert code.endswith("pktgen.set_range(\"0\", 'on')")


def test_multistream_l3_and_l2() -> None:
    l3 = lua.setup_port(_setup(vary="nw_dst", streams=256))
    assert "pktgen.range.dst_ip(\"0\", 'max', \"198.18.1.1\")" in l3
    assert "pktgen.range.dst_ip(\"0\", 'inc', \"0.0.0.1\")" in l3
    l2 = lua.setup_port(_setup(vary="dl_dst", streams=3))
    assert "pktgen.range.dst_mac(\"0\", 'max', \"02:00:00:00:00:04\")" in l2
    assert "pktgen.range.dst_mac(\"0\", 'inc', \"00:00:00:00:00:01\")" in l2


def test_vlan_tag() -> None:
    code = lua.setup_port(_setup(vlan_id=100))
    assert "pktgen.vlanid(\"0\", 100)" in code
    assert "pktgen.vlan(\"0\", 'on')" in code


@pytest.mark.parametrize("bad", [dict(count=0), dict(streams=0), dict(tx_burst=0), dict(tx_burst=129),
                                 dict(src_ip="nope"), dict(vary="tos")])
def test_port_setup_validates(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        _setup(**bad)


def test_set_rate_restarts_the_pacing_clock() -> None:
    assert lua.set_rate(1, 2.5) == "pktgen.set(\"1\", 'rate', \"2.5\"); pktgen.set(\"1\", 'cycles', 0)"


def test_wait_done_bounds_and_optionally_starts() -> None:
    code = lua.wait_done([1, 0], 2.2)
    assert code.startswith('local ports = "0,1"; local n = 0;')
    assert "os.time() - t0 < 3" in code
    assert "pktgen.stop(ports)" in code
    assert "pktgen.start(ports)" in lua.wait_done([0], 1, start_first=True)
    with pytest.raises(ValueError):
        lua.portlist([])


def test_requests_match_those_pktgen_accepted() -> None:
    """Every request recorded against the real pktgen is one vsperf still sends, byte for byte."""
    sent = {x["request"] for x in exchanges()}
    assert lua.info() in sent
    assert lua.port_info() in sent
    assert lua.pkt_stats() in sent
    assert lua.port_stats() in sent
    assert lua.clear_stats() in sent
    assert lua.start([0]) in sent
    assert lua.latency([0], True) in sent
    assert lua.wait_done([0], 10) in sent
    rates = [x["request"] for x in exchanges() if "'cycles', 0" in x["request"]]
    assert rates and all(math.isfinite(float(r.split('"')[3])) for r in rates)
    setups = [x["request"] for x in exchanges() if x["request"].startswith('pktgen.stop("0"); pktgen.set_proto')]
    assert setups, "the fixture holds a port setup"
    assert all(json.loads(x["reply"]) == {"ok": True, "value": None} for x in exchanges() if x["request"] in setups)


def test_a_frame_mix_is_sent_as_sequence_packets_in_turn() -> None:
    code = lua.setup_port(_setup(mix_sizes=(64, 570, 64)))
    assert code.count("pktgen.seqTable(") == 3 and code.endswith("pktgen.set(\"0\", 'seq_cnt', 3)")
    assert "pktgen.seqTable(1, \"0\", {" in code and "[\"pktSize\"] = 570" in code
    assert "seq_cnt" not in lua.setup_port(_setup())  # one size: sequences untouched
    assert lua.setup_port(_setup(sequences_off=True)).endswith("pktgen.set(\"0\", 'seq_cnt', 0)")
    with pytest.raises(ValueError, match="at most 16 sequence packets"):
        _setup(mix_sizes=(64,) * 17)


def test_which_mixes_pktgen_can_send() -> None:
    from dataclasses import replace

    from vsperf.traffic import Traffic, Vlan
    from vsperf.traffic.mix import parse_mix
    from vsperf.trafficgen.pktgen.backend import PktgenTrafficGenerator

    imix = Traffic(bidir=True).with_frame_size(parse_mix("IMIX"))
    assert PktgenTrafficGenerator.frame_mix_problem(imix) == ""
    assert "has 20 frames in a group" in PktgenTrafficGenerator.frame_mix_problem(
        imix.with_frame_size(parse_mix("64:19,1518:1")))
    assert PktgenTrafficGenerator.frame_mix_problem(replace(imix, multistream=4)).endswith("12 frames in a group, "
                                                                                         "4 streams")
    assert PktgenTrafficGenerator.frame_mix_problem(replace(imix, vlan=Vlan(enabled=True))).endswith("a VLAN tag")
