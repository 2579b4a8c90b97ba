"""Deployment names and the forwarding each one asks of the switch (VSPERF's flows).

- p2p: phy0 <-> phy1.
- pvp, pvvpN (pvvp == pvvp2): a chain phy0 -> vnf0 -> vnf1 ... -> phy1, and back.
- pvpvN (pvpv == pvpv2): N VNFs side by side; stream i of each direction goes through VNF
  i mod N (VSPERF splits streams between VMs the same way), so the test needs >= N streams.
- clean: the switch is started and stopped, nothing else.
- op2p, ptunp: VSPERF's overlay deployments (a tunnel between the generator ports; the switch's
  bridges, tunnel ports and flows are vsperf.deploy.overlay's).
- wire: no switch: the two generator ports are joined back to back (`--mode trafficgen`,
  traffic only), like a loopback cable on a hardware generator.

Rules carry per-stream matches when TRAFFIC asks for pre-installed flows (one flow per stream,
as VSPERF's scalability tests do), the source/destination addresses for flow_type IP, a VLAN
push on every egress to a generator port for Frame Modification "vlan", and the actions of the
other frame modifications there (vsperf.traffic.framemod).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from vsperf.errors import ConfigError, UnknownNameError
from vsperf.traffic import Traffic
from vsperf.traffic.framemod import FRAME_MODIFICATIONS, modification
from vsperf.traffic.streams import Direction
from vsperf.vswitch.base import ForwardRule, Match

Layout = Literal["p2p", "series", "parallel", "clean", "wire", "overlay"]
VALID_DEPLOYMENTS = "p2p, pvp, pvvp, pvvpN, pvpv, pvpvN (N >= 1), clean, op2p, ptunp"
OVERLAY_DEPLOYMENTS = ("op2p", "ptunp")
MAX_VNFS = 9  # names of VNF links carry one digit (see vsperf.host.names)

_PATTERN = re.compile(r"^(pvvp|pvpv)(\d*)$")


@dataclass(frozen=True)
class Topology:
    """A parsed deployment name."""

    name: str  # as given, lower case
    layout: Layout
    vnfs: int

    @property
    def has_traffic_ports(self) -> bool:
        return self.layout != "clean"

    @property
    def has_switch(self) -> bool:
        return self.layout != "wire"


def parse_deployment(name: str) -> Topology:
    """The topology of deployment `name`; UnknownNameError lists the valid ones."""
    key = name.strip().lower()
    if key == "p2p":
        return Topology(key, "p2p", 0)
    if key == "clean":
        return Topology(key, "clean", 0)
    if key == "wire":
        return Topology(key, "wire", 0)
    if key in OVERLAY_DEPLOYMENTS:
        return Topology(key, "overlay", 0)
    if key == "pvp":
        return Topology(key, "series", 1)
    match = _PATTERN.match(key)
    if match:
        count = int(match.group(2)) if match.group(2) else 2
        if 1 <= count <= MAX_VNFS:
            return Topology(key, "series" if match.group(1) == "pvvp" else "parallel", count)
        raise UnknownNameError(
            f"deployment {name!r}: the local lab supports 1..{MAX_VNFS} VNFs; valid deployments: "
            f"{VALID_DEPLOYMENTS}"
        )
    raise UnknownNameError(f"unknown deployment {name!r}; valid deployments: {VALID_DEPLOYMENTS}")


def check_frame_modification(frame_modification: str | None) -> str | None:
    """The normalised frame modification, or ConfigError naming the valid ones (whether the
    test's switch can apply it is the switch's FRAME_MODIFICATIONS)."""
    if not frame_modification:
        return None
    key = frame_modification.strip().lower()
    if key not in FRAME_MODIFICATIONS:
        raise ConfigError(
            f"unknown Frame Modification {frame_modification!r} (valid: {', '.join(FRAME_MODIFICATIONS)})"
        )
    return key


def check_streams(topology: Topology, multistream: int) -> None:
    """pvpvN sends stream i through VNF i mod N: it needs at least N streams."""
    if topology.layout == "parallel" and multistream < topology.vnfs:
        raise ConfigError(
            f"deployment {topology.name} splits streams between {topology.vnfs} VNFs: set TRAFFIC "
            f"multistream >= {topology.vnfs} (it is {multistream})"
        )


def vnf_port(vnf: int, side: int) -> str:
    """Plan name of VNF `vnf`'s port `side` (0 faces phy0, 1 faces phy1)."""
    return f"vnf{vnf}.{side}"


def port_names(topology: Topology) -> list[str]:
    """Plan port names in attach order: phy0, phy1, then each VNF's two ports (OpenFlow 1, 2, ...)."""
    if not topology.has_traffic_ports:
        return []
    names = ["phy0", "phy1"]
    for vnf in range(topology.vnfs):
        names += [vnf_port(vnf, 0), vnf_port(vnf, 1)]
    return names


def _hops(topology: Topology) -> list[tuple[str, str]]:
    """Forward hops of a chain (p2p is a chain without VNFs)."""
    points = ["phy0"]
    for vnf in range(topology.vnfs):
        points += [vnf_port(vnf, 0), vnf_port(vnf, 1)]
    points.append("phy1")
    return [(points[i], points[i + 1]) for i in range(0, len(points), 2)]


def _matches(traffic: Traffic, direction: Direction) -> list[Match]:
    """One match per rule on a hop carrying `direction`'s frames."""
    if traffic.pre_installed_flows and traffic.multistream > 0:
        return [direction.match(i) for i in range(direction.streams)]
    if traffic.flow_type == "IP":
        return [direction.ip_match()]
    return [()]


def forwarding_rules(
    topology: Topology,
    traffic: Traffic,
    forward: Direction,
    reverse: Direction,
    *,
    vlan_id: int | None,
    modify: str | None = None,
) -> tuple[ForwardRule, ...]:
    """Every rule of `topology` (both directions are always programmed; VSPERF does the same).

    `forward`/`reverse` describe port 0 -> 1 and 1 -> 0 frames (see vsperf.traffic.streams); the
    reverse one is needed even for unidirectional traffic, to program the way back.
    """
    rules: list[ForwardRule] = []
    if topology.layout in ("clean", "overlay"):
        return ()
    if topology.layout in ("p2p", "series"):
        for a, b in _hops(topology):
            rules += [ForwardRule(a, b, m) for m in _matches(traffic, forward)]
            rules += [ForwardRule(b, a, m) for m in _matches(traffic, reverse)]
    else:
        check_streams(topology, traffic.multistream)
        for direction, ingress, egress in ((forward, "phy0", "phy1"), (reverse, "phy1", "phy0")):
            side_in, side_out = (0, 1) if ingress == "phy0" else (1, 0)
            for stream in range(direction.streams):
                vnf = stream % topology.vnfs
                rules.append(ForwardRule(ingress, vnf_port(vnf, side_in), direction.match(stream)))
            for vnf in range(topology.vnfs):
                rules.append(ForwardRule(vnf_port(vnf, side_out), egress))
    if vlan_id is not None:
        rules = [replace(r, push_vlan_id=vlan_id) if r.out_port.startswith("phy") else r for r in rules]
    if modify is not None and modify != "vlan":
        rules = [_modified(r, modify) if r.out_port.startswith("phy") else r for r in rules]
    return tuple(rules)


def _modified(rule: ForwardRule, name: str) -> ForwardRule:
    """`rule` with frame modification `name` on its way out (and the match its actions need)."""
    mod = modification(name, rule.out_port)
    keys = {key for key, _ in rule.match}
    return replace(rule, match=(*rule.match, *[(k, v) for k, v in mod.match if k not in keys]), modify=mod.actions)
