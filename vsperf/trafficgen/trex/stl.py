"""The worker's side of the protocol: requests carried out with TRex's stateless (STL) client.

Runs only inside the worker process (vsperf.trafficgen.trex.worker), which hands it the
client's `trex.stl.api` module: nothing here imports TRex's client, so vsperf's process can
import this module's pure parts (frame layout, the rate fit) and the unit tests can drive a
`Session` with a fake API.

A trial: every stream a single burst of its exact frame count at its rate, flow statistics per
stream (packet group), latency streams timestamped by TRex; the ports start together; while
they send, each port's transmit counter is sampled (its rate is fitted to those samples: TRex
stretches a burst it cannot send in time, and the fit shows the rate it really reached); once
every port has stopped, TRex keeps counting frames per stream for the residual wait
(`rx_delay_ms`), then the counters are read.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from vsperf.trafficgen.trex.protocol import (
    Closed,
    Connect,
    Connected,
    Failure,
    LatencyCounts,
    PortCounts,
    PortInfo,
    RateFit,
    RunTrial,
    RxSamples,
    StreamCounts,
    StreamSpec,
    TrialCounts,
)

FCS_BYTES = 4  # TRex appends the FCS: a packet is the frame size minus 4
ETH_DST_LOW32_OFFSET = 2  # the low 32 bits of the destination MAC start at byte 2
ETH_SRC_LOW32_OFFSET = 8  # ... and those of the source MAC at byte 8
_VERSION_WORDS = ("api version", "version mismatch", "incompatible")


class TrexRequestError(Exception):
    """A request the server refused or could not carry out (`kind` as in protocol.Failure)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def payload_bytes(spec: StreamSpec) -> int:
    """Padding after the UDP header so that the frame is `frame_size_bytes` with its FCS."""
    headers = 14 + (4 if spec.vlan_id is not None else 0) + 20 + 8
    pad = spec.frame_size_bytes - FCS_BYTES - headers
    if pad < 0:
        raise TrexRequestError("trex", f"frame size {spec.frame_size_bytes} is below its headers ({headers + 4} B)")
    return pad


def fit_rate(port: int, samples: Sequence[tuple[float, int]], total: int) -> RateFit:
    """Port `port`'s rate: the least-squares slope of (time, frames sent) over the samples taken
    while it sent (0 < count < `total`; 0.0 with fewer than three), and the last of them."""
    inside = [(t, n) for t, n in samples if 0 < n < total]
    sending_s = max((t for t, n in samples if n < total), default=0.0)
    mean_t = sum(t for t, _ in inside) / len(inside) if inside else 0.0
    mean_n = sum(n for _, n in inside) / len(inside) if inside else 0.0
    spread = sum((t - mean_t) ** 2 for t, _ in inside)
    if len(inside) < 3 or spread <= 0:
        return RateFit(port, 0.0, len(inside), sending_s)
    slope = sum((t - mean_t) * (n - mean_n) for t, n in inside) / spread
    return RateFit(port, max(0.0, slope), len(inside), sending_s)


def precise(samples: Sequence[tuple[float, int]], round_trips: Sequence[float]) -> list[tuple[float, int]]:
    """The samples whose request took at most three times the median round trip (a slow answer
    dates its counter poorly)."""
    if not round_trips:
        return list(samples)
    limit = 3 * sorted(round_trips)[len(round_trips) // 2]
    return [s for s, rtt in zip(samples, round_trips, strict=True) if rtt <= limit]


def _total(counter: Any) -> int:
    """A flow-stats counter: TRex gives {port: n, ..., 'total': n}."""
    if isinstance(counter, dict):
        return int(counter.get("total", sum(v for k, v in counter.items() if k != "total")))
    return int(counter or 0)


class Session:
    """One connection to a TRex server, through the client module `api` (trex.stl.api)."""

    def __init__(self, api: Any, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.api = api
        self.clock = clock
        self.sleep = sleep
        self.client: Any = None
        self.ports: tuple[int, ...] = ()
        self.rx_samples: dict[int, list[tuple[float, int]]] = {}  # a trial's receive counters (sample_rx)
        self.stopped = False  # the last trial was stopped at its stop_after_s

    # --- requests ----------------------------------------------------------------------------

    def connect(self, req: Connect) -> Connected:
        client = self.api.STLClient(server=req.server, sync_port=req.sync_port, async_port=req.async_port,
                                    verbose_level="error", sync_timeout=req.timeout_s, async_timeout=req.timeout_s)
        try:
            client.connect()
        except self.api.TRexError as exc:
            text = str(exc)
            kind = "version" if any(w in text.lower() for w in _VERSION_WORDS) else "connect"
            raise TrexRequestError(kind, _one_line(text)) from exc
        self.client = client
        try:
            missing = [p for p in req.ports if p not in client.get_all_ports()]
            if missing:
                raise TrexRequestError("trex", f"the server has no port {missing[0]} (it has "
                                               f"{list(client.get_all_ports())})")
            client.reset(ports=list(req.ports))
            if req.promiscuous:
                client.set_port_attr(ports=list(req.ports), promiscuous=True)
            self.ports = req.ports
            infos = client.get_port_info(ports=list(req.ports))
            version = client.get_server_version()
        except self.api.TRexError as exc:
            raise TrexRequestError("trex", _one_line(str(exc))) from exc
        api_ver = getattr(getattr(client, "ctx", None), "api_ver", None) or {}
        return Connected(
            server_version=str(version.get("version", "unknown")),
            client_version=f"{api_ver.get('name', 'STL')} {api_ver.get('major', '?')}.{api_ver.get('minor', '?')}",
            ports=tuple(
                PortInfo(index=int(i.get("index", p)), hw_mac=str(i.get("hw_mac", "")), driver=str(i.get("driver", "")),
                         speed_gbps=float(i.get("speed", 0.0) or 0.0), link_up=str(i.get("link", "UP")) == "UP")
                for p, i in zip(req.ports, infos, strict=True)
            ),
        )

    def run_trial(self, req: RunTrial, on_start: Callable[[], None] | None = None) -> TrialCounts:
        """Carry out `req`; `on_start` is called once the ports have started (the `Started` line)."""
        client = self._connected()
        ports = sorted({s.port for s in req.streams})
        try:
            client.remove_all_streams(ports=list(self.ports))
            for port in ports:
                client.add_streams([self.stream(s) for s in req.streams if s.port == port], ports=[port])
            client.clear_stats()
            samples = self._send(client, ports, req, on_start)
            if not self.stopped:  # (stop() waited for the residual frames already)
                client.wait_on_traffic(ports=ports, rx_delay_ms=int(req.residual_s * 1000))
            stats = client.get_stats()
        except self.api.TRexError as exc:
            raise TrexRequestError("trex", _one_line(str(exc))) from exc
        return self._counts(req, ports, samples, stats)

    def close(self) -> Closed:
        client, self.client = self.client, None
        if client is not None:
            try:
                client.disconnect(stop_traffic=True, release_ports=True)
            except self.api.TRexError as exc:
                raise TrexRequestError("trex", _one_line(str(exc))) from exc
        return Closed()

    def failure(self, exc: TrexRequestError) -> Failure:
        kind = exc.kind if exc.kind in ("connect", "version", "trex", "client", "protocol") else "trex"
        return Failure(kind=kind, message=str(exc))  # type: ignore[arg-type]

    # --- a trial -----------------------------------------------------------------------------

    def _connected(self) -> Any:
        if self.client is None:
            raise TrexRequestError("protocol", "a trial before connect")
        return self.client

    def _send(self, client: Any, ports: list[int], req: RunTrial,
              on_start: Callable[[], None] | None) -> dict[int, list[tuple[float, int]]]:
        """Start every port, sample their transmit counters (and with `sample_rx` every port's
        receive counter: `self.rx_samples`) until none sends; returns the transmit samples and
        sets `self.wall_s`."""
        samples: dict[int, list[tuple[float, int]]] = {p: [] for p in ports}
        watched = sorted(set(ports) | set(self.ports)) if req.sample_rx else ports
        self.rx_samples = {p: [] for p in self.ports} if req.sample_rx else {}
        round_trips: list[float] = []
        # The port counters alone (one request, ~1.5 ms here); the public get_stats adds the flow
        # statistics (a second request, up to 12 ms): a sample's time is known to half its round trip.
        read = getattr(client, "_get_stats_common", None) or (lambda p, _sync: client.get_stats(ports=p))
        started = self.clock()
        self.stopped = False
        client.start(ports=ports, force=True)
        if on_start is not None:
            on_start()
        while client.is_traffic_active(ports=ports):
            now = self.clock()
            if 0 < req.stop_after_s < now - started:
                # TRex could not send the trial in time: stop it, and count what it sent
                client.stop(ports=ports, rx_delay_ms=int(req.residual_s * 1000))
                self.stopped = True
                break
            if now - started > req.timeout_s:
                client.stop(ports=ports)
                raise TrexRequestError("trex", f"TRex was still sending {req.timeout_s:g} s after the start: stopped")
            stats = read(watched, True)
            done = self.clock()
            round_trips.append(done - now)
            for port in ports:  # times after the start request
                samples[port].append(((now + done) / 2 - started, int(stats[port]["opackets"])))
            for port, seen in self.rx_samples.items():
                seen.append(((now + done) / 2 - started, int(stats[port]["ipackets"])))
            self.sleep(req.sample_interval_s)
        self.wall_s = self.clock() - started
        return {p: precise(s, round_trips) for p, s in samples.items()}

    def _counts(self, req: RunTrial, ports: list[int], samples: dict[int, list[tuple[float, int]]],
                stats: dict[Any, Any]) -> TrialCounts:
        flows, latency = stats.get("flow_stats", {}), stats.get("latency", {})
        counts, lat = [], []
        for spec in req.streams:
            entry = flows.get(spec.pg_id) or flows.get(str(spec.pg_id)) or {}
            counts.append(StreamCounts(spec.pg_id, _total(entry.get("tx_pkts")), _total(entry.get("rx_pkts"))))
            if spec.latency:
                found = latency.get(spec.pg_id) or latency.get(str(spec.pg_id)) or {}
                inner, errors = found.get("latency", {}), found.get("err_cntrs", {})
                lat.append(LatencyCounts(
                    pg_id=spec.pg_id, min_us=float(inner.get("total_min", 0) or 0),
                    max_us=float(inner.get("total_max", 0) or 0), average_us=float(inner.get("average", 0) or 0),
                    histogram={str(k): int(v) for k, v in (inner.get("histogram") or {}).items()},
                    dropped=int(errors.get("dropped", 0)), out_of_order=int(errors.get("out_of_order", 0)),
                    duplicates=int(errors.get("dup", 0)),
                ))
        port_counts = [PortCounts(p, int(stats[p]["opackets"]), int(stats[p]["ipackets"])) for p in self.ports
                       if p in stats]
        fits = [fit_rate(port, samples[port], int(stats[port]["opackets"])) for port in ports]
        errors = flows.get("global", {}).get("rx_err", {})
        rx = tuple(RxSamples(p, tuple(t for t, _ in s), tuple(n for _, n in s)) for p, s in self.rx_samples.items())
        return TrialCounts(streams=tuple(counts), ports=tuple(port_counts), latency=tuple(lat), fits=tuple(fits),
                           wall_s=self.wall_s, rx_errors=_total(errors), rx_samples=rx, stopped=self.stopped)

    # --- streams -----------------------------------------------------------------------------

    def packet(self, spec: StreamSpec) -> Any:
        """The stream's frame (stream 0 of its flows) as TRex's packet builder takes it."""
        api = self.api
        frame = api.Ether(src=spec.src_mac, dst=spec.dst_mac)
        if spec.vlan_id is not None:
            frame = frame / api.Dot1Q(vlan=spec.vlan_id, prio=spec.vlan_priority, id=spec.vlan_cfi)
        frame = (frame / api.IP(src=spec.src_ip, dst=spec.dst_ip, ttl=64)
                 / api.UDP(sport=spec.src_udp, dport=spec.dst_udp, chksum=0) / (b"\0" * payload_bytes(spec)))
        return api.STLPktBuilder(pkt=frame, vm=self.field_engine(spec))

    def field_engine(self, spec: StreamSpec) -> Any:
        """TRex's field engine counting the varied field through the stream's flows, frame after
        frame (frame k carries flow k mod flows, as every vsperf generator sends them); None
        when nothing varies."""
        if spec.vary == "none" or spec.flows <= 1:
            return None
        api = self.api
        offset: str | int
        if spec.vary == "tp_dst":
            first, size, offset = spec.dst_udp, 2, "UDP.dport"
        elif spec.vary == "nw_dst":
            first, size, offset = _ipv4_int(spec.dst_ip), 4, "IP.dst"
        elif spec.vary == "dl_src":  # the low 32 bits of the source MAC (RFC 2889 learning frames)
            first, size, offset = int(spec.src_mac.replace(":", ""), 16) & 0xFFFFFFFF, 4, ETH_SRC_LOW32_OFFSET
        else:  # dl_dst: the low 32 bits of the destination MAC
            first, size, offset = int(spec.dst_mac.replace(":", ""), 16) & 0xFFFFFFFF, 4, ETH_DST_LOW32_OFFSET
        commands = [
            api.STLVmFlowVar(name="flow", min_value=first, max_value=first + spec.flows - 1, size=size, op="inc"),
            api.STLVmWrFlowVar(fv_name="flow", pkt_offset=offset),
        ]
        if spec.vary == "nw_dst":
            commands.append(api.STLVmFixIpv4(offset="IP"))
        return api.STLScVmRaw(commands)

    def stream(self, spec: StreamSpec) -> Any:
        api = self.api
        stats = api.STLFlowLatencyStats(pg_id=spec.pg_id) if spec.latency else api.STLFlowStats(pg_id=spec.pg_id)
        chained = {"next": f"vsperf{spec.next_pg_id}"} if spec.next_pg_id is not None else {}
        return api.STLStream(packet=self.packet(spec), mode=api.STLTXSingleBurst(total_pkts=spec.frames, pps=spec.pps),
                             flow_stats=stats, name=f"vsperf{spec.pg_id}", self_start=spec.self_start, **chained)

    wall_s: float = 0.0


def _ipv4_int(address: str) -> int:
    a, b, c, d = (int(x) for x in address.split("."))
    return (a << 24) | (b << 16) | (c << 8) | d


def _one_line(text: str) -> str:
    """TRex's multi-line error texts as one line."""
    return " ".join(part.strip() for part in text.strip().splitlines() if part.strip())
