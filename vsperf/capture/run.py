"""Packet captures on the generator ports: `tcpdump -w` in a port's namespace, on the generator's
host, into the run's results directory.

The generator's receive path takes its test frames before the kernel sees them (vsgen's XDP
program drops them once counted), so a capture needs the generator to hand some over: a
generator with `pass_count` (vsgen) passes that many test frames per receive queue and trial to
the kernel, where tcpdump sees them. TRAFFIC capture (VSPERF's: enabled, rx_ports, count, filter)
captures `count` frames on each rx port during each frame size's traffic; vsperf cannot capture
what its ports send (`tx_ports`: their frames leave through XDP, which a capture on the port does
not see).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from vsperf.capture.pcap import CaptureError
from vsperf.errors import ConfigError
from vsperf.host.host import Host
from vsperf.host.process import HostProcess
from vsperf.results.sizes import PacketSize, size_slug
from vsperf.search.outcome import SearchOutcome
from vsperf.traffic.ports import GenPort

log = logging.getLogger(__name__)

READY_TIMEOUT_S = 10.0  # tcpdump says "listening on" once its socket is bound
DRAIN_TIMEOUT_S = 5.0  # after the traffic, the frames still on their way to the file


@dataclass(frozen=True)
class CaptureConfig:
    """VSPERF's TRAFFIC capture."""

    rx_ports: tuple[int, ...]
    count: int
    filter: str = ""

    @classmethod
    def from_traffic(cls, traffic: Mapping[str, Any], where: str) -> CaptureConfig | None:
        """The capture TRAFFIC asks for (None: none); ConfigError for what vsperf cannot capture."""
        section = traffic.get("capture") or {}
        if not section.get("enabled"):
            return None
        if section.get("tx_ports"):
            raise ConfigError(f"TRAFFIC capture tx_ports {section['tx_ports']} ({where}): vsperf captures what a port "
                              f"receives only (sent frames leave through XDP); set tx_ports to []")
        ports = tuple(int(p) for p in section.get("rx_ports") or ())
        if not ports:
            raise ConfigError(f"TRAFFIC capture ({where}): enabled without rx_ports; name the ports, e.g. [1]")
        return cls(ports, int(section.get("count") or 1), str(section.get("filter") or ""))


class PortCapture:
    """tcpdump capturing up to `count` frames that generator port `port` receives into `path`."""

    def __init__(self, host: Host, port: GenPort, path: PurePosixPath, count: int, bpf_filter: str = "") -> None:
        self.host = host
        self.port = port
        self.path = path
        self.count = count
        self.filter = bpf_filter
        self._proc: HostProcess | None = None

    def start(self) -> None:
        argv = ["tcpdump", "-i", self.port.ifname, "-Q", "in", "-c", str(self.count), "-w", str(self.path), "-U",
                "-n", "-s", "0", *self.filter.split()]
        self._proc = self.host.spawn(f"tcpdump {self.port.ifname}", argv, netns=self.port.netns,
                                     log_path=self.host.log_path(f"tcpdump-{self.port.ifname}.log"))
        deadline = time.monotonic() + READY_TIMEOUT_S
        while "listening on" not in (self._proc.read_log() or ""):
            if not self._proc.alive():
                raise CaptureError(f"tcpdump on {self.port.ifname} ended: {self._proc.log_tail(2)}")
            if time.monotonic() > deadline:
                raise CaptureError(f"tcpdump on {self.port.ifname} did not start listening")
            time.sleep(0.05)

    def stop(self) -> None:
        """Wait a moment for the last frames (tcpdump ends by itself at `count`), then stop it."""
        proc = self._proc
        if proc is None:
            return
        proc.wait(DRAIN_TIMEOUT_S)
        self.host.stop_process(proc)
        self._proc = None


def capture_path(results_dir: Path, test_index: int, size: PacketSize, port: int, what: str = "capture") -> Path:
    """Where a capture goes: <results>/<what>_<test index>_<frame size or mix>_rx<port>.pcap."""
    return results_dir / f"{what}_{test_index}_{size_slug(size)}_rx{port}.pcap"


@contextmanager
def capturing(generator: Any, host: Host, ports: Sequence[GenPort], paths: Mapping[int, Path], count: int,
              bpf_filter: str = "") -> Iterator[None]:
    """Capture up to `count` frames on each port index of `paths` while the block runs, the
    generator handing `count` test frames per receive queue and trial to the kernel."""
    if not hasattr(generator, "pass_count"):
        raise CaptureError(f"traffic generator {getattr(generator, 'NAME', '?')} cannot hand frames to a capture "
                           f"(use --trafficgen vsgen)")
    captures = [PortCapture(host, ports[i], PurePosixPath(path), count, bpf_filter) for i, path in paths.items()]
    generator.pass_count = count
    try:
        for capture in captures:
            capture.start()
        yield
    finally:
        generator.pass_count = 0
        for capture in captures:
            try:
                capture.stop()
            except Exception as exc:  # the others still stop; the release stops what remains
                log.warning("stopping a capture failed: %s", exc)


def capture_paths(config: CaptureConfig | None, results_dir: Path, test_index: int,
                  size: PacketSize) -> dict[int, Path]:
    """Where TRAFFIC capture puts each rx port's frames at one frame size ({} without a capture)."""
    if config is None:
        return {}
    return {port: capture_path(results_dir, test_index, size, port) for port in config.rx_ports}


def with_captures(outcome: SearchOutcome, paths: Mapping[int, Path]) -> SearchOutcome:
    """`outcome` with VSPERF's result key capture_rx: the capture files, in the results directory."""
    names = ",".join(path.name for path in paths.values())
    return replace(outcome, metrics={**outcome.metrics, "capture_rx": names})
