"""The worker's side of a trial (vsperf.trafficgen.trex.stl) against a stand-in for TRex's client
(fixtures_trex/client: records what it is given, simulates a server sending at the streams' rates)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from vsperf.trafficgen.trex.protocol import Connect, RunTrial, StreamSpec
from vsperf.trafficgen.trex.stl import Session, TrexRequestError, fit_rate, payload_bytes, precise

FAKE = Path(__file__).parent / "fixtures_trex" / "client" / "trex" / "stl" / "api.py"


@pytest.fixture
def api() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fake_trex_api", FAKE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def spec(**changes: Any) -> StreamSpec:
    base: dict[str, Any] = dict(port=0, pg_id=1, frames=100, pps=1000.0, frame_size_bytes=64,
                                src_mac="02:00:00:00:00:01", dst_mac="02:00:00:00:00:02", src_ip="198.18.0.1",
                                dst_ip="198.18.1.1", src_udp=3000, dst_udp=3001)
    return StreamSpec(**{**base, **changes})


def test_a_frame_is_its_size_without_the_fcs(api: ModuleType) -> None:
    session = Session(api)
    for size, vlan in ((64, None), (128, 7), (1518, None)):
        built = session.packet(spec(frame_size_bytes=size, vlan_id=vlan))
        assert len(built.kwargs["pkt"]) == size - 4
    tagged = session.packet(spec(vlan_id=7, vlan_priority=3)).kwargs["pkt"]
    assert [k for k, _ in tagged.layers] == ["Ether", "Dot1Q", "IP", "UDP"]
    assert tagged.layers[1][1] == {"vlan": 7, "prio": 3, "id": 0}
    assert tagged.layers[3][1] == {"sport": 3000, "dport": 3001, "chksum": 0}


def test_a_frame_smaller_than_its_headers_is_refused() -> None:
    with pytest.raises(TrexRequestError, match="below its headers"):
        payload_bytes(spec(frame_size_bytes=40))


@pytest.mark.parametrize("vary, first, size, offset, fix", [
    ("tp_dst", 3001, 2, "UDP.dport", False),
    ("nw_dst", (198 << 24) | (18 << 16) | (1 << 8) | 1, 4, "IP.dst", True),
    ("dl_dst", 2, 4, 2, False),
])
def test_multistream_counts_the_varied_field_through_the_flows(api: ModuleType, vary: str, first: int, size: int,
                                                               offset: object, fix: bool) -> None:
    vm = Session(api).field_engine(spec(vary=vary, flows=16))
    var, write, *rest = vm.args[0]
    assert var.kwargs == {"name": "flow", "min_value": first, "max_value": first + 15, "size": size, "op": "inc"}
    assert write.kwargs == {"fv_name": "flow", "pkt_offset": offset}
    assert (len(rest) == 1) == fix


def test_one_flow_varies_nothing(api: ModuleType) -> None:
    assert Session(api).field_engine(spec(vary="tp_dst", flows=1)) is None


def test_connect_resets_the_ports_and_describes_them(api: ModuleType) -> None:
    session = Session(api)
    connected = session.connect(Connect(server="127.0.0.1", sync_port=41001, async_port=41000, promiscuous=True))
    client = api.CREATED[-1]
    assert (client.sync_port, client.async_port, client.promiscuous) == (41001, 41000, True)
    assert ("reset", (0, 1)) in client.calls
    assert connected.server_version == "v3.07" and connected.client_version == "STL 5.1"
    assert [(p.index, p.hw_mac, p.link_up) for p in connected.ports] == [(0, "02:00:00:00:00:0a", True),
                                                                           (1, "02:00:00:00:00:0b", True)]


@pytest.mark.parametrize("server, kind", [("version-mismatch", "version"), ("unreachable", "connect")])
def test_a_refused_connection_says_why(api: ModuleType, server: str, kind: str) -> None:
    with pytest.raises(TrexRequestError) as caught:
        Session(api).connect(Connect(server=server))
    assert caught.value.kind == kind


def test_a_trial_counts_each_stream_and_fits_the_ports_rates(api: ModuleType) -> None:
    session = Session(api)
    session.connect(Connect())
    api.LOSS[3] = 5
    streams = (spec(pg_id=1, frames=300, pps=1500.0), spec(pg_id=2, frames=20, pps=100.0, latency=True),
               spec(port=1, pg_id=3, frames=300, pps=1500.0, src_mac="02:00:00:00:00:02",
                    dst_mac="02:00:00:00:00:01"))
    counts = session.run_trial(RunTrial(streams=streams, residual_s=0.25, sample_interval_s=0.01))
    assert [(s.pg_id, s.tx_frames, s.rx_frames) for s in counts.streams] == [(1, 300, 300), (2, 20, 20),
                                                                              (3, 300, 295)]
    assert [(p.port, p.tx_frames, p.rx_frames) for p in counts.ports] == [(0, 320, 295), (1, 300, 320)]
    assert counts.latency[0].pg_id == 2 and counts.latency[0].histogram == {"0": 2, "10": 16, "90": 2}
    assert [f.port for f in counts.fits] == [0, 1]
    assert counts.fits[1].rate_fps == pytest.approx(1500.0, rel=0.05) and counts.fits[1].samples >= 3
    assert 0.18 <= counts.wall_s < 1.0
    client = api.CREATED[-1]
    assert ("wait", 250) in client.calls  # TRex keeps counting the streams for the residual wait
    api.LOSS.clear()


def test_a_trial_that_overruns_is_stopped_and_counted_as_it_is(api: ModuleType) -> None:
    session = Session(api)
    session.connect(Connect())
    counts = session.run_trial(RunTrial(streams=(spec(frames=2000, pps=1000.0),), residual_s=0.1, stop_after_s=0.3,
                                        sample_interval_s=0.01))
    assert counts.stopped and 200 <= counts.streams[0].tx_frames < 600
    assert ("stop", 100) in api.CREATED[-1].calls  # stopped, counting the frames in flight for the residual wait
    assert not any(c[0] == "wait" for c in api.CREATED[-1].calls if isinstance(c, tuple))


def test_a_trial_before_connect_is_a_protocol_failure(api: ModuleType) -> None:
    with pytest.raises(TrexRequestError) as caught:
        Session(api).run_trial(RunTrial(streams=(spec(),)))
    assert caught.value.kind == "protocol"


def test_the_rate_fit_uses_the_samples_inside_the_transmission() -> None:
    samples = [(0.0, 0), (0.1, 100), (0.2, 200), (0.3, 300), (0.4, 400), (0.5, 450), (0.6, 450)]
    fit = fit_rate(0, samples, 450)
    assert fit.rate_fps == pytest.approx(1000.0) and fit.samples == 4 and fit.sending_s == 0.4
    assert fit_rate(1, [(0.1, 0), (0.2, 450)], 450).rate_fps == 0.0


def test_slow_answers_do_not_date_a_sample() -> None:
    assert precise([(0.1, 1), (0.2, 2), (0.3, 3)], [0.001, 0.010, 0.001]) == [(0.1, 1), (0.3, 3)]
