"""Interface counters of the traffic generator's ports over the traffic phase.

Each port lives in a network namespace of the run, so its counters are read there:
`ip -s -j link show dev IF` (through the executor, with `ip netns exec NS`, logged like every
command; on a testbed through the generator host's executor, where its ports are) at the start
and at the end of the phase. The statistics are the differences: frames
and bytes sent and received, drops and errors, as the kernel counted them on that interface.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Mapping
from typing import Any

from vsperf.collectors.base import Collector, CollectorTarget, Statistics
from vsperf.errors import CommandError, PrerequisiteError
from vsperf.executor import Executor
from vsperf.host.workdir import RunContext
from vsperf.traffic.ports import GenPort

log = logging.getLogger(__name__)

GROUP = "Interface counters"
# Column -> (direction, kernel counter) in stats64 of `ip -j -s link`.
COUNTERS: dict[str, tuple[str, str]] = {
    "rx_packets": ("rx", "packets"),
    "rx_bytes": ("rx", "bytes"),
    "rx_dropped": ("rx", "dropped"),
    "rx_errors": ("rx", "errors"),
    "tx_packets": ("tx", "packets"),
    "tx_bytes": ("tx", "bytes"),
    "tx_dropped": ("tx", "dropped"),
    "tx_errors": ("tx", "errors"),
}


def parse_ip_link_stats(text: str) -> dict[str, int]:
    """The counters of COUNTERS from `ip -s -j link show dev IF` output."""
    data = json.loads(text)
    if not isinstance(data, list) or not data or not isinstance(data[0], Mapping):
        raise ValueError("ip -j -s link printed no interface")
    stats = data[0].get("stats64") or data[0].get("stats")
    if not isinstance(stats, Mapping):
        raise ValueError("ip -j -s link printed no statistics")
    out: dict[str, int] = {}
    for column, (direction, counter) in COUNTERS.items():
        value = (stats.get(direction) or {}).get(counter)
        if isinstance(value, int):
            out[column] = value
    return out


def port_label(index: int, port: GenPort) -> str:
    """How the report names a port: "port 0 (ifname in netns)"."""
    where = f" in {port.netns}" if port.netns else ""
    return f"port {index} ({port.ifname}{where})"


def counter_deltas(
    first: Mapping[str, int], last: Mapping[str, int], seconds: float
) -> dict[str, int | float | None]:
    """Counters' increase over the phase, plus received and sent frames per second."""
    row: dict[str, int | float | None] = {k: last[k] - first[k] for k in COUNTERS if k in first and k in last}
    for direction in ("rx", "tx"):
        packets = row.get(f"{direction}_packets")
        rate = packets / seconds if isinstance(packets, int) and seconds > 0 else None
        row[f"{direction}_fps"] = round(rate, 1) if rate is not None else None
    return row


class IfStatsCollector(Collector):
    """Counters of the generator's ports (frames, bytes, drops, errors) inside their namespaces."""

    NAME = "ifstats"
    ALIASES = ("interfaces",)
    REMOTE = True

    def __init__(self, settings: Mapping[str, Any], ctx: RunContext, target: CollectorTarget) -> None:
        super().__init__(settings, ctx, target)
        self._first: dict[int, dict[str, int]] = {}
        self._last: dict[int, dict[str, int]] = {}
        self._started_s = self._stopped_s = 0.0

    def check_prerequisites(self) -> None:
        if shutil.which("ip") is None:
            raise PrerequisiteError("the ifstats collector needs ip: apt-get install iproute2")

    def version(self) -> str:
        return "ip -s link (iproute2)"

    def reads_host(self) -> Executor | None:
        """The generator's host: its ports are there."""
        return self.target.gen_host

    def _read(self, port: GenPort) -> dict[str, int]:
        argv = ["ip", "-s", "-j", "link", "show", "dev", port.ifname]
        proc = (self.reads_host() or self.ctx.executor).run(argv, netns=port.netns, timeout_s=10)
        try:
            return parse_ip_link_stats(proc.stdout)
        except (ValueError, json.JSONDecodeError) as exc:
            raise CommandError(argv, 0, f"unexpected output: {exc}") from exc

    def start(self) -> None:
        self._first, self._last = {}, {}
        self._started_s = time.monotonic()
        for index, port in enumerate(self.target.ports):
            if port.location:  # a hardware generator's port: its counters are the generator's own
                log.info("ifstats: port %d is generator port %s, no interface to read", index, port.location)
                continue
            self._first[index] = self._read(port)

    def stop(self) -> None:
        if not self._first or self._last:
            return
        self._stopped_s = time.monotonic()
        for index, port in enumerate(self.target.ports):
            if index in self._first:
                self._last[index] = self._read(port)

    def statistics(self) -> Statistics:
        first, last = self._first, self._last
        seconds = self._stopped_s - self._started_s
        table: dict[str, Any] = {
            port_label(i, port): counter_deltas(first[i], last[i], seconds)
            for i, port in enumerate(self.target.ports)
            if i in first and i in last
        }
        return {GROUP: table} if table else {}
