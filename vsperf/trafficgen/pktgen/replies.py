"""Parsing what Pktgen-DPDK answers through `vsperf_call` (see vsperf.trafficgen.pktgen.lua).

Lua tables arrive as JSON objects whose keys are strings: pktgen's per-port tables are keyed
by port number ("0", "1", ...) next to a count "n". Every parser raises ReplyError, with
what it got, when a reply lacks what it needs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from vsperf.errors import TrafficGenError


class ReplyError(TrafficGenError):
    """pktgen answered something vsperf cannot use (or reported an error in the request)."""


def parse_reply(line: bytes | str) -> Any:
    """The value of one reply line; ReplyError with pktgen's message for a failed request."""
    text = line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReplyError(f"pktgen sent a reply that is not JSON: {text.strip()[:200]!r}") from exc
    if not isinstance(data, dict) or "ok" not in data:
        raise ReplyError(f"pktgen sent an unexpected reply: {text.strip()[:200]!r}")
    if not data["ok"]:
        raise ReplyError(f"pktgen refused the request: {data.get('error')}")
    return data.get("value")


def per_port(value: Any, what: str) -> dict[int, dict[str, Any]]:
    """A per-port table ({"0": {...}, "1": {...}, "n": 2}) as {port: table}."""
    if not isinstance(value, dict):
        raise ReplyError(f"pktgen's {what} is not a table: {value!r}"[:300])
    ports: dict[int, dict[str, Any]] = {}
    for key, entry in value.items():
        if key.isdigit() and isinstance(entry, dict):
            ports[int(key)] = entry
    if not ports:
        raise ReplyError(f"pktgen's {what} names no port: {value!r}"[:300])
    return ports


@dataclass(frozen=True)
class PortCounters:
    """pktgen's counters of one port since the last `pktgen.clr()` (refreshed once a second)."""

    port: int
    rx_frames: int  # every frame the port received (ipackets)
    tx_frames: int  # frames the port sent (opackets)
    rx_bytes: int  # without the FCS, which the veth drivers do not count
    tx_bytes: int
    rx_missed: int  # frames the port dropped because pktgen did not read them in time
    rx_errors: int
    tx_errors: int
    rx_nombuf: int  # receive attempts that found no free mbuf


@dataclass(frozen=True)
class StatsSnapshot:
    """The answer of `lua.port_stats`: counters and their change over pktgen's last refresh."""

    counters: dict[int, PortCounters]
    change: dict[int, PortCounters]

    def settled(self, ports: list[int]) -> bool:
        """True when `ports` neither sent nor received anything in the last refresh: the
        counters then hold every frame up to it."""
        return all(self.change[p].rx_frames == 0 and self.change[p].tx_frames == 0 for p in ports)


def stats_snapshot(value: Any) -> StatsSnapshot:
    """Parse the answer of `lua.port_stats` ({"port": portStats, "rate": portStats})."""
    if not isinstance(value, dict) or "port" not in value or "rate" not in value:
        raise ReplyError(f"unexpected answer to portStats: {value!r}"[:300])
    return StatsSnapshot(port_counters(value["port"]), port_counters(value["rate"]))


def port_counters(value: Any) -> dict[int, PortCounters]:
    """Counters of every port from `pktgen.portStats('all', 'port' or 'rate')`."""
    counters = {}
    for port, s in per_port(value, "portStats").items():
        try:
            counters[port] = PortCounters(
                port,
                rx_frames=int(s["ipackets"]),
                tx_frames=int(s["opackets"]),
                rx_bytes=int(s["ibytes"]),
                tx_bytes=int(s["obytes"]),
                rx_missed=int(s["imissed"]),
                rx_errors=int(s["ierrors"]),
                tx_errors=int(s["oerrors"]),
                rx_nombuf=int(s["rx_nombuf"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ReplyError(f"pktgen's portStats of port {port} lacks {exc}: {s!r}"[:300]) from exc
    return counters


_LINK_RE = re.compile(r"<(UP|Down)-(\d+)-(FD|HD)>", re.IGNORECASE)


@dataclass(frozen=True)
class LinkState:
    """A port's link as pktgen reads it from the driver."""

    up: bool
    speed_mbps: int


def link_states(value: Any) -> dict[int, LinkState]:
    """Link state and speed of every port from `pktgen.portInfo('all')` ("<UP-10000-FD>")."""
    states = {}
    for port, entry in per_port(value, "portInfo").items():
        state = str(entry.get("info", {}).get("VxLAN", {}).get("link_state", ""))
        match = _LINK_RE.search(state)
        if match is None:
            raise ReplyError(f"pktgen's portInfo of port {port} has no link state: {entry!r}"[:300])
        states[port] = LinkState(match.group(1).upper() == "UP", int(match.group(2)))
    return states


def version(value: Any) -> str:
    """pktgen's version ("23.06.1") from `pktgen.info` ("Pktgen 23.06.1"), with DPDK's."""
    if not isinstance(value, dict) or "Pktgen_Version" not in value:
        raise ReplyError(f"pktgen.info has no Pktgen_Version: {value!r}"[:300])
    pktgen = str(value["Pktgen_Version"]).removeprefix("Pktgen").strip()
    dpdk = str(value.get("DPDK_Version", "")).removeprefix("DPDK").strip()
    return f"{pktgen} (DPDK {dpdk})" if dpdk else pktgen


@dataclass(frozen=True)
class WaitResult:
    """The answer of `lua.wait_done`."""

    waited_ms: int  # 1 ms sleeps taken (a lower bound of the time waited)
    cut: bool  # True: the ports were still sending at the limit and were stopped


def wait_result(value: Any) -> WaitResult:
    """Parse the answer of `lua.wait_done`."""
    if not isinstance(value, dict) or "waited_ms" not in value or "cut" not in value:
        raise ReplyError(f"unexpected answer to start: {value!r}"[:300])
    return WaitResult(int(value["waited_ms"]), bool(value["cut"]))


@dataclass(frozen=True)
class LatencyProbe:
    """pktgen's latency probes of one receiving port (one timestamped frame per `rate_us`)."""

    port: int
    samples: int  # probes received
    min_us: float
    avg_us: float
    max_us: float
    rate_us: int  # interval between probes


def foreign_frames(value: Any) -> dict[int, int]:
    """Frames of every port that cannot be test frames (ARP and IPv6: the test sends IPv4), from
    `pktgen.pktStats('all')`; pktgen classifies every frame it receives, since the last clr()."""
    counts = {}
    for port, entry in per_port(value, "pktStats").items():
        try:
            counts[port] = int(entry["arp_pkts"]) + int(entry["ipv6_pkts"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ReplyError(f"pktgen's pktStats of port {port} lacks {exc}: {entry!r}"[:300]) from exc
    return counts


def latency_probes(value: Any) -> dict[int, LatencyProbe]:
    """Latency probes of every port from `pktgen.pktStats('all')`."""
    probes = {}
    for port, entry in per_port(value, "pktStats").items():
        lat = entry.get("latency")
        if not isinstance(lat, dict):
            raise ReplyError(f"pktgen's pktStats of port {port} has no latency table: {entry!r}"[:300])
        try:
            probes[port] = LatencyProbe(
                port, int(lat["num_pkts"]), float(lat["min_us"]), float(lat["avg_us"]), float(lat["max_us"]),
                int(lat["rate_us"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ReplyError(f"pktgen's latency of port {port} lacks {exc}: {lat!r}"[:300]) from exc
    return probes
