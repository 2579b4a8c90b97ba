"""The check that frames arrive modified (a test's Frame Modification), on the receiving side.

Before the test's traffic, the generator sends a short burst while each receiving port captures
what it gets (vsperf.capture.run); every captured test frame must show the modification the
switch applies towards that port (vsperf.traffic.framemod). The answer is a component of the
test in results.json and the report ("frame check": frames captured and modified per port); a
port where a frame arrives unmodified, or none arrives, fails the test.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vsperf.capture.dissect import Frame, dissect
from vsperf.capture.pcap import read_pcap
from vsperf.capture.run import capture_path, capturing
from vsperf.errors import TrafficGenError
from vsperf.host.host import Host
from vsperf.results.model import ComponentInfo
from vsperf.traffic import Traffic, framemod
from vsperf.traffic.ports import GenPort

CHECK_FRAMES = 64  # the burst, per direction
CAPTURED_FRAMES = 8  # frames captured per receiving port


def is_modified(frame: Frame, modification: str, egress: str, vlan_id: int | None) -> bool:
    """Whether `frame` (received from switch port `egress`: phy0 or phy1) shows `modification`."""
    if modification == "vlan":
        return frame.vlan_id == vlan_id
    if modification == "mpls":
        return bool(frame.mpls_labels) and frame.src_ip is not None
    if modification == "mac":
        return frame.src_mac == framemod.MAC_TO[egress]
    if modification == "dscp":
        return frame.dscp == framemod.DSCP
    if modification == "ttl":
        return frame.ttl == framemod.TTL_TO[egress]
    if modification == "ip_addr":
        return (frame.src_ip, frame.dst_ip) == framemod.IP_TO[egress]
    if modification == "ip_port":
        return frame.src_port == framemod.UDP_PORT and frame.dst_port == framemod.UDP_PORT
    raise ValueError(f"no frame modification {modification!r}")


def expected(modification: str, egress: str, vlan_id: int | None) -> str:
    """What the frames of port `egress` should show, in words."""
    if modification == "vlan":
        return f"VLAN {vlan_id}"
    return framemod.modification(modification, egress).expected


@dataclass(frozen=True)
class PortCheck:
    """What one receiving port captured."""

    port: int
    egress: str  # the switch port it receives from (phy0, phy1)
    captured: int
    modified: int
    expected: str

    @property
    def passed(self) -> bool:
        return self.captured > 0 and self.modified == self.captured

    def describe(self) -> str:
        return f"{self.modified} of {self.captured} frames captured show {self.expected}"


def check_capture(path: Path, port: int, modification: str, vlan_id: int | None) -> PortCheck:
    """Check the frames in capture `path` of generator port `port` (it receives from phy<port>)."""
    egress = f"phy{port}"
    frames = [f for f in (dissect(raw) for raw in read_pcap(path).frames) if f is not None and f.src_ip is not None]
    return PortCheck(port, egress, len(frames),
                     sum(is_modified(f, modification, egress, vlan_id) for f in frames),
                     expected(modification, egress, vlan_id))


def summary(checks: Sequence[PortCheck]) -> dict[str, str]:
    """The checks for the report: 'port N' -> what it saw."""
    return {f"port {c.port}": c.describe() for c in checks}


NOT_OURS_FILTER = "not icmp"  # tcpdump's filter: untagged IPv4 ICMP only; tagged and MPLS frames stay


def run_frame_check(generator: Any, host: Host, ports: Sequence[GenPort], traffic: Traffic, modification: str,
                    vlan_id: int | None, results_dir: Path, test_index: int) -> ComponentInfo:
    """Send a short burst, capture it where it arrives, check every frame shows `modification`:
    the test's "frame check" component (TrafficGenError naming the port where it does not)."""
    receivers = {1: 1, **({0: 0} if traffic.bidir else {})}
    paths = {port: capture_path(results_dir, test_index, traffic.frame_size_bytes, port, "framecheck")
             for port in receivers}
    # The generator hands its first frames to the port's kernel for the capture; that kernel answers
    # them (ICMP port unreachable, the test frame quoted inside), and the switch carries the answers
    # to the other port: not the generator's frames, so not captured.
    with capturing(generator, host, ports, paths, CAPTURED_FRAMES, NOT_OURS_FILTER):
        generator.burst(traffic, CHECK_FRAMES)
    checks = [check_capture(path, port, modification, vlan_id) for port, path in paths.items()]
    details = {**summary(checks), "captures": ", ".join(p.name for p in paths.values())}
    failed = [c for c in checks if not c.passed]
    if failed:
        raise TrafficGenError(f"Frame Modification {modification}: generator port {failed[0].port} received frames "
                              f"that do not show it: {failed[0].describe()}")
    return ComponentInfo("check", "frame modification", modification, details)
