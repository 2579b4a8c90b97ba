"""Streams per direction: the values the generator sends and the flows match."""

from dataclasses import replace

import pytest

from vsperf.errors import ConfigError
from vsperf.traffic import L2, L3, Traffic
from vsperf.traffic.ports import GenPort
from vsperf.traffic.streams import directions, int_to_mac, mac_to_int

PORTS = (
    GenPort("ns0", "g0", "02:00:00:00:00:0a", "198.18.0.1"),
    GenPort("ns1", "g1", "02:00:00:00:00:0b", "198.18.1.1"),
)


def test_single_stream_uses_port_macs_and_mirrors_the_reverse() -> None:
    fwd, rev = directions(Traffic(), PORTS)
    assert (fwd.tx_port, fwd.rx_port) == (0, 1)
    assert (fwd.src_mac, fwd.dst_mac) == ("02:00:00:00:00:0a", "02:00:00:00:00:0b")
    assert (fwd.src_ip, fwd.dst_ip, fwd.src_udp, fwd.dst_udp) == ("198.18.0.1", "198.18.1.1", 3000, 3001)
    assert (rev.src_ip, rev.dst_ip, rev.src_udp, rev.dst_udp) == ("198.18.1.1", "198.18.0.1", 3001, 3000)
    assert fwd.vary == "none" and fwd.streams == 1 and fwd.match(0) == ()


def test_unidirectional_traffic_has_one_direction() -> None:
    assert len(directions(Traffic(bidir=False), PORTS)) == 1


def test_configured_macs_win_over_port_macs() -> None:
    traffic = Traffic(l2=L2(srcmac="02:11:11:11:11:11", dstmac="02:22:22:22:22:22"))
    fwd, rev = directions(traffic, PORTS)
    assert fwd.dst_mac == "02:22:22:22:22:22" and rev.dst_mac == "02:11:11:11:11:11"


@pytest.mark.parametrize(
    ("stream_type", "stream", "value", "match"),
    [
        ("L2", 3, "02:00:00:00:00:0e", (("dl_dst", "02:00:00:00:00:0e"),)),
        ("L3", 300, "198.18.2.45", (("dl_type", "0x0800"), ("nw_dst", "198.18.2.45"))),
        ("L4", 999, "4000", (("dl_type", "0x0800"), ("nw_proto", "17"), ("tp_dst", "4000"))),
    ],
)
def test_stream_values_as_vsperf_varies_them(stream_type: str, stream: int, value: str,
                                             match: tuple[tuple[str, str], ...]) -> None:
    fwd = directions(Traffic(multistream=1000, stream_type=stream_type), PORTS)[0]  # type: ignore[arg-type]
    assert fwd.streams == 1000
    assert fwd.value(stream) == value
    assert fwd.match(stream) == match
    with pytest.raises(IndexError):
        fwd.value(1000)


def test_reverse_streams_vary_the_reverse_destination() -> None:
    rev = directions(Traffic(multistream=10, stream_type="L4"), PORTS)[1]
    assert rev.value(2) == "3002"  # base 3000: the forward source port


def test_ranges_that_leave_the_benchmark_network_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"outside 198\.18\.0\.0/15"):
        directions(Traffic(multistream=200_000, stream_type="L3"), PORTS)
    with pytest.raises(ConfigError, match="UDP ports"):
        directions(Traffic(multistream=70_000, stream_type="L4"), PORTS)
    with pytest.raises(ConfigError, match="outside"):
        directions(replace(Traffic(), l3=L3(srcip="10.0.0.1")), PORTS)


def test_needs_two_ports() -> None:
    with pytest.raises(ConfigError, match="two generator ports"):
        directions(Traffic(), PORTS[:1])


def test_mac_arithmetic() -> None:
    assert int_to_mac(mac_to_int("02:00:00:00:00:ff") + 1) == "02:00:00:00:01:00"
