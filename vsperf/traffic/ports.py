"""The generator ports a test's traffic leaves and enters by, as a deployment hands them to the
traffic generator and the collectors."""

from __future__ import annotations

from dataclasses import dataclass

from vsperf.traffic.tunnel import Encapsulation


@dataclass(frozen=True)
class GenPort:
    """A traffic generator port: an interface inside a network namespace of the run."""

    netns: str | None  # None: the interface lives in the root namespace
    ifname: str
    mac: str
    ipv4: str  # in 198.18.0.0/15
    peer_mac: str = "ff:ff:ff:ff:ff:ff"  # destination MAC frames from this port should carry
    peer_ipv4: str = ""  # destination IPv4 frames from this port should carry
    rx_vlan_id: int | None = None  # VLAN id the switch pushes on frames to this port (None: none)
    # A hardware generator's port location (a testbed cable's `location`, e.g. OTG's "chassis;card;port"):
    # the port has no interface here (`ifname` is ""), only a generator that takes locations drives it.
    location: str | None = None
    # op2p decapsulation: the tunnel headers the frames this port sends carry (None: plain frames)
    encap: Encapsulation | None = None
