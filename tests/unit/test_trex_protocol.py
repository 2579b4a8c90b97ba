"""The worker protocol's lines: every request and answer back from its JSON line, malformed lines refused."""

from __future__ import annotations

import json

import pytest

from vsperf.trafficgen.trex.protocol import (
    Close,
    Closed,
    Connect,
    Connected,
    Failure,
    LatencyCounts,
    PortCounts,
    PortInfo,
    ProtocolError,
    RateFit,
    Ready,
    RunTrial,
    StreamCounts,
    StreamSpec,
    TrialCounts,
    decode_answer,
    decode_request,
    encode,
)

STREAM = StreamSpec(port=0, pg_id=1, frames=1000, pps=500.0, frame_size_bytes=64, src_mac="02:00:00:00:00:01",
                    dst_mac="02:00:00:00:00:02", src_ip="198.18.0.1", dst_ip="198.18.1.1", src_udp=3000,
                    dst_udp=3001, vlan_id=10, vary="nw_dst", flows=8)


@pytest.mark.parametrize("request_", [
    Connect(server="127.0.0.1", sync_port=40001, async_port=40000, ports=(0, 1), promiscuous=True, timeout_s=3.0),
    RunTrial(streams=(STREAM, StreamSpec(**{**STREAM.__dict__, "pg_id": 2, "latency": True})), residual_s=0.5),
    Close(),
])
def test_requests_round_trip(request_: object) -> None:
    line = encode(request_)  # type: ignore[arg-type]
    assert "\n" not in line
    assert decode_request(line) == request_


@pytest.mark.parametrize("answer", [
    Ready(python="3.11.7"),
    Connected(server_version="v3.07", client_version="STL 5.1",
              ports=(PortInfo(0, "02:00:00:00:00:0a", "net_af_packet", 10.0, True),)),
    TrialCounts(streams=(StreamCounts(1, 1000, 998),), ports=(PortCounts(0, 1000, 1000),),
                latency=(LatencyCounts(2, 8.0, 95.0, 30.0, {"0": 2, "10": 96}, dropped=1),),
                fits=(RateFit(0, 499.8, 40, 1.98),), wall_s=2.05, rx_errors=3),
    Closed(),
    Failure(kind="version", message="RPC version mismatch"),
])
def test_answers_round_trip(answer: object) -> None:
    assert decode_answer(encode(answer)) == answer  # type: ignore[arg-type]


def test_a_connect_keeps_its_port_numbers() -> None:
    decoded = decode_request(json.dumps({"op": "connect", "ports": [0, 1]}))
    assert isinstance(decoded, Connect) and decoded.ports == (0, 1)


@pytest.mark.parametrize("line, message", [
    ("not json", "not JSON"),
    ('{"op": "dance"}', "no valid 'op'"),
    ('{"op": "close", "extra": 1}', "unknown field(s) extra"),
    ('{"op": "trial", "streams": []}', "at least one stream"),
    ('{"op": "trial", "streams": [5]}', "expected an object"),
])
def test_malformed_requests_are_protocol_errors(line: str, message: str) -> None:
    with pytest.raises(ProtocolError, match=message.replace("(", r"\(").replace(")", r"\)")):
        decode_request(line)


def test_a_trial_needs_distinct_packet_groups_and_frames() -> None:
    with pytest.raises(ProtocolError, match="distinct"):
        RunTrial(streams=(STREAM, STREAM))
    with pytest.raises(ProtocolError, match=">= 1 frame"):
        StreamSpec(**{**STREAM.__dict__, "frames": 0})


def test_an_answer_is_never_read_as_a_request() -> None:
    with pytest.raises(ProtocolError):
        decode_request(encode(Closed()))
    with pytest.raises(ProtocolError):
        decode_answer(encode(Close()))
