"""RFC 2889 address trials on two ports: the three phases' frames (vsperf.trafficgen.vsgen.addresses)."""

from __future__ import annotations

import pytest

from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort
from vsperf.trafficgen.vsgen.addresses import (
    FLOOD_DIR,
    LEARN_DIR,
    TEST_DIR,
    address_mac,
    address_phases,
    range_base,
)
from vsperf.trafficgen.vsgen.frames import mac_bytes, stamp

PORTS = (GenPort("ns0", "g0", "0a:00:00:00:00:01", "198.18.0.1", "0a:00:00:00:00:02", "198.18.1.1"),
         GenPort("ns1", "g1", "0a:00:00:00:00:02", "198.18.1.1", "0a:00:00:00:00:01", "198.18.0.1"))


def parse(command: str) -> dict[str, str]:
    words = command.split()
    return {"id": words[1], **dict(w.split("=", 1) for w in words[2:])}


def test_addresses_are_local_unicast_and_fresh_per_trial() -> None:
    assert address_mac(0x01000005) == "02:76:01:00:00:05"
    assert mac_bytes(address_mac(range_base(3)))[0] & 0x03 == 0x02  # locally administered, unicast
    assert range_base(1) != range_base(2) and range_base(256) == range_base(0)


def test_three_phases() -> None:
    base = range_base(1)
    phases = address_phases(Traffic(), PORTS, 0x1234, 100, base)
    learn, flood, test = parse(phases.learning), parse(phases.flood_check), parse(phases.test)
    assert [learn["id"], flood["id"], test["id"]] == [str(LEARN_DIR), str(FLOOD_DIR), str(TEST_DIR)]
    # Learning: port 1 sends from 100 source MACs to port 0's MAC.
    assert (learn["tx"], learn["rx"], learn["vary"], learn["streams"], learn["base"]) == ("1", "0", "smac", "100",
                                                                                         str(base))
    frame = bytes.fromhex(learn["frame"])
    assert frame[0:6] == mac_bytes(PORTS[0].mac)
    assert stamp(frame, 14, "smac", base, LEARN_DIR, 7, 1, 0, 0)[6:12] == mac_bytes(address_mac(base + 7))
    # Flood check: port 1 to each address, from the last one learned: a learned one is filtered.
    assert (flood["tx"], flood["rx"], flood["vary"]) == ("1", "0", "mac")
    frame = bytes.fromhex(flood["frame"])
    assert frame[6:12] == mac_bytes(address_mac(base + 99))
    assert stamp(frame, 14, "mac", base, FLOOD_DIR, 42, 1, 0, 0)[0:6] == mac_bytes(address_mac(base + 42))
    # Test: port 0 to each address, from its own MAC.
    assert (test["tx"], test["rx"], test["vary"]) == ("0", "1", "mac")
    assert bytes.fromhex(test["frame"])[6:12] == mac_bytes(PORTS[0].mac)


@pytest.mark.parametrize(("addresses", "base"), [(0, 0), (1 << 24 | 1, 0), (10, 0xFFFFFFFA)])
def test_impossible_ranges_are_refused(addresses: int, base: int) -> None:
    with pytest.raises(ValueError):
        address_phases(Traffic(), PORTS, 1, addresses, base)
