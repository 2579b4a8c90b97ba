"""trafgen packet configurations and exit reports."""

import pytest

from vsperf.errors import TrafficGenError
from vsperf.traffic import L4, Traffic, Vlan
from vsperf.traffic.ports import GenPort
from vsperf.traffic.streams import directions
from vsperf.trafficgen.trafgen.config import packet_config, parse_report, parse_version, payload_bytes

PORTS = (
    GenPort("ns0", "g0", "02:00:00:00:00:0a", "198.18.0.1"),
    GenPort("ns1", "g1", "02:00:00:00:00:0b", "198.18.1.1"),
)


@pytest.mark.parametrize(("size", "vlan", "payload"), [(64, False, 18), (64, True, 14), (1518, False, 1472)])
def test_payload_makes_the_frame_size_with_fcs(size: int, vlan: bool, payload: int) -> None:
    assert payload_bytes(Traffic(frame_size_bytes=size, vlan=Vlan(enabled=vlan, id=5))) == payload


def test_single_stream_config() -> None:
    traffic = Traffic()
    conf = packet_config(traffic, directions(traffic, PORTS)[0])
    assert conf == (
        "{\n"
        "  eth(da=02:00:00:00:00:0b, sa=02:00:00:00:00:0a),\n"
        "  ipv4(sa=198.18.0.1, da=198.18.1.1, ttl=64),\n"
        "  udp(sp=3000, dp=3001),\n"
        "  fill(0x00, 18)\n"
        "}\n"
    )


def test_multistream_uses_runtime_counters_over_exactly_the_flow_values() -> None:
    l3 = Traffic(multistream=256, stream_type="L3")
    assert "da=dinc(3323068673, 3323068928)" in packet_config(l3, directions(l3, PORTS)[0])  # .1.1 .. .2.0
    l4 = Traffic(multistream=10, stream_type="L4")
    assert "dp=dinc(3001, 3010)" in packet_config(l4, directions(l4, PORTS)[0])
    l2 = Traffic(multistream=4, stream_type="L2")
    assert "da=dinc(11, 14)" in packet_config(l2, directions(l2, PORTS)[0])


def test_generator_vlan_tag() -> None:
    traffic = Traffic(vlan=Vlan(enabled=True, id=42, priority=3, cfi=0))
    assert "  vlan(id=42, pcp=3, dei=0),\n" in packet_config(traffic, directions(traffic, PORTS)[0])


def test_frames_without_udp_cannot_be_counted() -> None:
    traffic = Traffic(l4=L4(enabled=False))
    with pytest.raises(TrafficGenError, match="IPv4/UDP"):
        packet_config(traffic, directions(traffic, PORTS)[0])


def test_exit_report() -> None:
    text = (
        "     1 packets to schedule\n    60 bytes in total\nRunning! Hang up with ^C!\n\n"
        "       50000 packets outgoing\n     3000000 bytes outgoing\n"
        "           1 sec, 38 usec on CPU0 (50000 packets)\n"
    )
    report = parse_report(text)
    assert report.packets == 50000
    assert report.seconds == pytest.approx(1.000038)
    assert report.rate_fps == pytest.approx(49998.1, rel=1e-4)


def test_missing_report_is_an_error() -> None:
    with pytest.raises(TrafficGenError, match="no statistics"):
        parse_report("Cannot open device\n")


def test_version() -> None:
    assert parse_version("trafgen 0.6.8 (Flutternozzle), Git id: (none)\n") == "0.6.8"
