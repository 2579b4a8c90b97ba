"""Tunnels of the overlay tests: sizes, keys, the addresses a tunnel uses."""

from __future__ import annotations

from vsperf.config import load_settings
from vsperf.deploy.overlay import tunnel_of
from vsperf.traffic.tunnel import overhead_bytes


def test_overheads() -> None:
    assert (overhead_bytes("vxlan"), overhead_bytes("geneve"), overhead_bytes("gre")) == (50, 50, 42)


def test_the_addresses_a_tunnel_uses() -> None:
    settings = load_settings(env={})
    op2p = tunnel_of("op2p", "vxlan", "encapsulation", settings)
    assert op2p is not None and op2p.addresses() == [
        ("VTEP_IP1", "198.18.200.1/24"), ("VTEP_IP2", "198.18.240.10"), ("VTEP_IP2_SUBNET", "198.18.240.0/24"),
        ("TUNNEL_EXTERNAL_BRIDGE_IP", "198.18.240.1/24")]
    ptunp = tunnel_of("ptunp", "vxlan", None, settings)
    assert ptunp is not None and [a for _, a in ptunp.addresses()] == ["198.18.210.1", "198.18.210.2", "198.18.220.1",
                                                                       "198.18.220.2"]
