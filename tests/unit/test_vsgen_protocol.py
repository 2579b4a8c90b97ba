"""The engine's line protocol: commands written, events parsed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from vsperf.trafficgen.vsgen.protocol import (
    EngineProtocolError,
    RunRequest,
    dir_command,
    parse_event,
    parse_result,
    parse_tick,
    port_command,
)


def result_event(**dir_overrides: Any) -> dict[str, Any]:
    direction = {
        "dir": 0, "tx_port": 0, "rx_port": 1, "path": "xdp-live", "path_note": "", "ring_drops": 0,
        "streams": 2, "requested_fps": 1000.0, "frames_requested": 10, "tx": 10, "tx_time_s": 0.01,
        "achieved_fps": 1000.0, "cpu_s": 0.001, "detail": [[0, 5, 5, 0, 0], [1, 5, 6, 1, 2]],
        "rx": 11, "dup": 1, "reorder": 2, "lost": 0, "excess": 0, "streams_with_loss": 0, "max_stream_loss": 0,
    }
    direction.update(dir_overrides)
    return {
        "ev": "result", "mode": "rate", "trial_tag": 3, "elapsed_s": 0.3, "cpu_s": 0.002, "residual_s": 0.2,
        "stopped_by": "done", "dirs": [direction],
        "ports": [{"port": 1, "rx_mode": "native", "frames": 11, "dup": 1, "reorder": 2, "late": 0, "stale": 4,
                   "foreign": 0, "other": 3, "tagged": 0, "lat_sum_ns": 110_000, "lat_min_ns": 8000,
                   "lat_max_ns": 12000, "hist": [[500, 10], [700, 1]]}],
    }


def test_port_command() -> None:
    assert port_command(0, "vsg1a", "veth0") == "port 0 netns=vsg1a ifname=veth0"
    assert port_command(3, None, "eth1") == "port 3 netns=- ifname=eth1"


@pytest.mark.parametrize(("netns", "ifname"), [("a b", "x"), ("ns", "x;y"), ("ns", "a" * 16), ("../x", "x")])
def test_port_command_refuses_names_that_are_not_plain(netns: str, ifname: str) -> None:
    with pytest.raises(ValueError):
        port_command(0, netns, ifname)


def test_dir_command_carries_the_frame_in_hex() -> None:
    line = dir_command(1, 1, 0, 100, "udp", 3001, 14, b"\x01\x02")
    assert line == "dir 1 tx=1 rx=0 streams=100 vary=udp base=3001 l3=14 frame=0102"
    with pytest.raises(ValueError):
        dir_command(8, 0, 1, 1, "none", 0, 14, b"")
    with pytest.raises(ValueError):
        dir_command(0, 0, 1, 0, "none", 0, 14, b"")
    with pytest.raises(ValueError):
        dir_command(0, 0, 1, 1, "none", 0, 16, b"")
    # behind a tunnel's headers (op2p decapsulation: vsperf.trafficgen.vsgen.encap)
    assert " l3=64 " in dir_command(0, 0, 1, 1, "none", 0, 64, b"") and " l3=56 " in dir_command(0, 0, 1, 1, "ip", 0,
                                                                                                 56, b"")


def test_run_commands() -> None:
    rate = RunRequest("rate", (0, 1), rate_fps=500.5, frames=(1000,), residual_s=2.0, cpus=(0, 1))
    assert rate.command() == ("run mode=rate dirs=0,1 rate=500.500000 frames=1000 path=auto residual=2 "
                              "detail=64 tick=1 cpus=0,1")
    burst = RunRequest("burst", (0,), frames=(7,), path="xdp", residual_s=0.5)
    assert burst.command() == "run mode=burst dirs=0 frames=7 path=xdp residual=0.5 detail=64 tick=1"
    cont = RunRequest("cont", (0,), rate_fps=10.0)
    assert "frames=" not in cont.command() and "rate=10.000000" in cont.command() and "pass=" not in cont.command()
    # test frames handed to the kernel for a capture (vsperf.capture)
    assert RunRequest("cont", (0,), rate_fps=10.0, pass_frames=8).command().endswith(" pass=8")


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(mode="rate", dirs=(0,), rate_fps=0.0, frames=(1,)),
        dict(mode="rate", dirs=(0,), rate_fps=-5.0, frames=(1,)),
        dict(mode="burst", dirs=(0,), frames=(0,)),
        dict(mode="burst", dirs=(0, 1), frames=(1, 2, 3)),
        dict(mode="burst", dirs=(), frames=(1,)),
        dict(mode="burst", dirs=(0,), frames=(1,), path="dpdk"),
        dict(mode="burst", dirs=(0,), frames=(1,), residual_s=61.0),
        dict(mode="cont", dirs=(0,), rate_fps=1.0, tick_s=0.01),
        dict(mode="cont", dirs=(0,), rate_fps=1.0, pass_frames=-1),
    ],
)
def test_bad_runs_are_refused_before_the_engine_sees_them(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        RunRequest(**kwargs)


def test_parse_result() -> None:
    result = parse_result(parse_event(json.dumps(result_event())))
    assert result.trial_tag == 3 and result.stopped_by == "done"
    (d,) = result.dirs
    assert (d.tx_frames, d.rx_frames, d.dup, d.unique_rx_frames, d.reorder) == (10, 11, 1, 10, 2)
    assert d.detail[1].rx == 6 and d.detail[1].dup == 1
    assert d.ring_drops == 0
    (p,) = result.ports
    assert p.latency.samples == 11 and p.latency.hist == ((500, 10), (700, 1))
    assert (p.stale, p.other) == (4, 3)


def test_unknown_ring_drops_are_none() -> None:
    assert parse_result(result_event(ring_drops=-1)).dirs[0].ring_drops is None


def test_parse_tick() -> None:
    tick = parse_tick(parse_event('{"ev":"tick","t":2.0,"tx":{"0":10,"1":9},"rx":{"0":9,"1":10}}'))
    assert tick.t_s == 2.0 and tick.tx == {0: 10, 1: 9} and tick.rx == {0: 9, 1: 10}


@pytest.mark.parametrize("line", ["not json", "[1, 2]", '{"no": "ev"}'])
def test_garbage_is_a_protocol_error(line: str) -> None:
    with pytest.raises(EngineProtocolError):
        parse_event(line)


def test_malformed_events_are_protocol_errors() -> None:
    with pytest.raises(EngineProtocolError):
        parse_tick({"ev": "tick", "t": 1.0})
    broken = result_event()
    del broken["dirs"][0]["tx"]
    with pytest.raises(EngineProtocolError, match="malformed result"):
        parse_result(broken)


def test_mixes_warm_starts_and_what_a_run_counts() -> None:
    assert port_command(1, "ns", "v1", raw=1000) == "port 1 netns=ns ifname=v1 raw=1000"
    frame = bytes(100)
    assert dir_command(0, 0, 1, 1, "none", 0, 14, frame, (60, 96, 60)).endswith(" sizes=60,96,60")
    with pytest.raises(ValueError):
        dir_command(0, 0, 1, 1, "none", 0, 14, frame, (60, 101))
    run = RunRequest("rate", (0,), rate_fps=100.0, frames=(10,), warm_frames=5, warm_rate_fps=10.0,
                     warm_rate2_fps=100.0, histogram=False, count_sizes=True, raw=True)
    assert run.command().endswith(
        " warm=5 warm_rate=10.000000 warm_rate2=100.000000 hist=0 sizes=1 raw=1")
    with pytest.raises(ValueError):
        RunRequest("rate", (0,), rate_fps=100.0, frames=(10,), warm_frames=5)


def test_parse_what_a_mix_and_a_warm_start_bring() -> None:
    event = result_event()
    event["dirs"][0]["warm_tx"] = 40
    event["ports"][0].update(warm=39, sizes=[[60, 7], [566, 4]], raw=[100, 200], raw_seen=2)
    result = parse_result(parse_event(json.dumps(event)))
    assert result.dirs[0].warm_tx == 40
    (p,) = result.ports
    assert (p.warm, p.sizes, p.raw, p.raw_seen) == (39, ((60, 7), (566, 4)), (100, 200), 2)
