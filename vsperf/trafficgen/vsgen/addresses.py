"""RFC 2889 address trials (5.7 caching capacity, 5.8 learning rate) with two generator ports.

RFC 2889 watches a third, monitoring port for flooded frames. The local lab's switch has two
generator ports, so vsgen tells a learned address from an unknown one by the switch's
filtering instead: a learning switch never sends a frame back out of the port its destination
was learned on, and floods a frame to an unknown destination to every other port. Three phases,
each an ordinary engine run (its own trial tag, so nothing of one phase counts in the next):

1. learning: port 1 sends one frame from each of N source MACs (vary=smac) to port 0's MAC;
   the switch learns the N addresses on its port towards port 1. Received at port 0: `learning.rx`.
2. flood check: port 1 sends one frame to each of the N addresses (vary=mac), from the last of
   them (learned last behind that port, so a full table that evicts the oldest entries still
   holds it: the check takes no slot of the switch's table).
   A learned address lives behind the ingress port: the switch filters (drops) the frame. An
   address it did not learn (table full, or not learned fast enough) is flooded, and the only
   other port is port 0: every frame received there is one flooded frame (`flooded_frames`).
3. test: port 0 sends one frame to each of the N addresses; learned or flooded, each reaches
   port 1 (`test.rx`): frames lost here are forwarding loss at the test rate.

The addresses are 02:76:xx:xx:xx:xx (locally administered unicast); every trial takes a fresh
range of them (the low 32 bits start at a new multiple of 2^24), so even without the DUT's
`forget` no address of an earlier trial is reused for 256 trials.
"""

from __future__ import annotations

from dataclasses import dataclass

from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort
from vsperf.trafficgen.vsgen.frames import MAX_STREAMS, FrameSpec, Vary, build_frame
from vsperf.trafficgen.vsgen.protocol import dir_command

ADDRESS_PREFIX = 0x0276  # high 16 bits of every learned address: 02:76 (local, unicast)
RANGE_STRIDE = 1 << 24  # addresses of one trial: low 32 bits from k * 2^24 (at most 2^24 of them)
LEARN_DIR, FLOOD_DIR, TEST_DIR = 5, 6, 7  # engine direction ids (regular trials use the lowest ones)


def address_mac(low32: int) -> str:
    """The learned address whose low 32 bits are `low32`."""
    value = (ADDRESS_PREFIX << 32) | (low32 & 0xFFFFFFFF)
    return ":".join(f"{b:02x}" for b in value.to_bytes(6, "big"))


def range_base(trial: int) -> int:
    """Low 32 bits of the first address of the `trial`-th address trial of a session."""
    return (trial * RANGE_STRIDE) & 0xFFFFFFFF


@dataclass(frozen=True)
class AddressPhases:
    """The three direction commands of one address trial (see the module docstring)."""

    learning: str
    flood_check: str
    test: str


def address_phases(traffic: Traffic, ports: tuple[GenPort, GenPort], run_tag: int, addresses: int,
                   base: int) -> AddressPhases:
    """Direction commands for `addresses` addresses from `base` (low 32 bits), learned behind port 1."""
    if not 1 <= addresses <= MAX_STREAMS:
        raise ValueError(f"an address trial takes 1..{MAX_STREAMS} addresses, got {addresses}")
    if base + addresses - 1 > 0xFFFFFFFF:
        raise ValueError("the address range does not fit 32 bits")
    first = address_mac(base)
    vlan = traffic.vlan

    def command(direction: int, tx: int, rx: int, src_mac: str, dst_mac: str, vary: Vary) -> str:
        src, dst = ports[tx], ports[rx]
        spec = FrameSpec(
            src_mac=src_mac, dst_mac=dst_mac, src_ip=src.ipv4, dst_ip=dst.ipv4, src_udp=traffic.l4.srcport,
            dst_udp=traffic.l4.dstport, frame_size_bytes=traffic.frame_size_bytes, run_tag=run_tag,
            vlan_id=vlan.id if vlan.enabled else None, vlan_priority=vlan.priority, vlan_cfi=vlan.cfi,
        )
        return dir_command(direction, tx, rx, addresses, vary, base, spec.l3_offset, build_frame(spec))

    return AddressPhases(
        learning=command(LEARN_DIR, 1, 0, first, ports[0].mac, "smac"),
        flood_check=command(FLOOD_DIR, 1, 0, address_mac(base + addresses - 1), first, "mac"),
        test=command(TEST_DIR, 0, 1, ports[0].mac, first, "mac"),
    )
