"""A stand-in for TRex's client module `trex.stl.api`, for vsperf's unit tests (no TRex here).

It has the names vsperf's worker uses, records what it is given, and simulates a server that
sends every stream at its rate from the start request on: each port's transmit counter grows
with the clock until its streams are sent; every frame is received unless a stream's pg_id is in
LOSS (frames lost). Servers named "version-mismatch" and "unreachable" (or RPC ports 4999 and
4998) refuse the connection the way TRex's client reports it.
"""

import time

LOSS = {}  # pg_id -> frames lost, set by a test
PORT_MACS = ["02:00:00:00:00:0a", "02:00:00:00:00:0b"]
CREATED = []  # every STLClient made


class TRexError(Exception):
    pass


class _Layer:
    def __init__(self, kind, **fields):
        self.layers = [(kind, fields)]
        self.payload = b""

    def __truediv__(self, other):
        out = _Layer.__new__(_Layer)
        if isinstance(other, bytes):
            out.layers, out.payload = list(self.layers), self.payload + other
        else:
            out.layers, out.payload = self.layers + other.layers, self.payload + other.payload
        return out

    def __len__(self):
        sizes = {"Ether": 14, "Dot1Q": 4, "IP": 20, "UDP": 8}
        return sum(sizes[k] for k, _ in self.layers) + len(self.payload)


def Ether(**f):
    return _Layer("Ether", **f)


def Dot1Q(**f):
    return _Layer("Dot1Q", **f)


def IP(**f):
    return _Layer("IP", **f)


def UDP(**f):
    return _Layer("UDP", **f)


class _Record:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class STLPktBuilder(_Record):
    pass


class STLVmFlowVar(_Record):
    pass


class STLVmWrFlowVar(_Record):
    pass


class STLVmFixIpv4(_Record):
    pass


class STLScVmRaw(_Record):
    pass


class STLFlowStats(_Record):
    pass


class STLFlowLatencyStats(_Record):
    pass


class STLTXSingleBurst(_Record):
    pass


class STLStream(_Record):
    @property
    def pg_id(self):
        return self.kwargs["flow_stats"].kwargs["pg_id"]

    @property
    def latency(self):
        return isinstance(self.kwargs["flow_stats"], STLFlowLatencyStats)

    @property
    def frames(self):
        return self.kwargs["mode"].kwargs["total_pkts"]

    @property
    def pps(self):
        return self.kwargs["mode"].kwargs["pps"]


class _Ctx:
    def __init__(self):
        self.api_ver = {"name": "STL", "major": 5, "minor": 1}


class STLClient:
    def __init__(self, server="localhost", sync_port=4501, async_port=4500, verbose_level="error",
                 sync_timeout=None, async_timeout=None):
        self.server, self.sync_port, self.async_port = server, sync_port, async_port
        self.ctx = _Ctx()
        self.streams = {0: [], 1: []}
        self.started = None
        self.stopped_at = None
        self.promiscuous = False
        self.calls = []
        CREATED.append(self)

    def connect(self):
        if self.server == "version-mismatch" or self.sync_port == 4999:
            raise TRexError("RPC version mismatch: a newer client version is required (API type 'STL':  "
                            "- server: '5.1', client: '4.1')")
        if self.server == "unreachable" or self.sync_port == 4998:
            raise TRexError("*** [RPC] - Failed to get server response from tcp://unreachable:4501")
        self.calls.append("connect")

    def get_all_ports(self):
        return [0, 1]

    def reset(self, ports=None):
        self.calls.append(("reset", tuple(ports)))

    def set_port_attr(self, ports=None, promiscuous=None):
        self.promiscuous = promiscuous

    def get_port_info(self, ports=None):
        return [{"index": p, "hw_mac": PORT_MACS[p], "driver": "net_af_packet", "speed": 10.0, "link": "UP"}
                for p in ports]

    def get_server_version(self):
        return {"version": "v3.07", "mode": "STL"}

    def remove_all_streams(self, ports=None):
        for p in ports:
            self.streams[p] = []

    def add_streams(self, streams, ports=None):
        for p in ports:
            self.streams[p].extend(streams)

    def clear_stats(self):
        self.calls.append("clear_stats")

    def start(self, ports=None, force=False):
        self.started, self.stopped_at = time.monotonic(), None
        self.calls.append(("start", tuple(ports)))

    def _sent(self, stream, now):
        if self.started is None:
            return 0
        until = now if self.stopped_at is None else min(now, self.stopped_at)
        return min(stream.frames, int(stream.pps * (until - self.started)))

    def is_traffic_active(self, ports=None):
        now = time.monotonic()
        return self.stopped_at is None and any(self._sent(s, now) < s.frames for p in ports for s in self.streams[p])

    def _get_stats_common(self, ports, sync_now):
        now = time.monotonic()
        return {p: {"opackets": sum(self._sent(s, now) for s in self.streams[p])} for p in ports}

    def stop(self, ports=None, rx_delay_ms=None):
        self.stopped_at = time.monotonic()
        self.calls.append(("stop", rx_delay_ms))

    def wait_on_traffic(self, ports=None, rx_delay_ms=None):
        self.calls.append(("wait", rx_delay_ms))

    def get_stats(self, ports=None):
        now = time.monotonic()
        every = [s for p in (0, 1) for s in self.streams[p]]
        sent = {p: sum(self._sent(s, now) for s in self.streams[p]) for p in (0, 1)}
        received = {p: sum(self._sent(s, now) - LOSS.get(s.pg_id, 0) for s in self.streams[1 - p]) for p in (0, 1)}
        stats = {p: {"opackets": sent[p], "ipackets": received[p]} for p in (0, 1)}
        stats["flow_stats"] = {s.pg_id: {"tx_pkts": {"total": self._sent(s, now)},
                                         "rx_pkts": {"total": self._sent(s, now) - LOSS.get(s.pg_id, 0)}}
                               for s in every}
        stats["flow_stats"]["global"] = {"rx_err": {0: 0, 1: 0}}
        stats["latency"] = {s.pg_id: {"latency": {"total_min": 8, "total_max": 95, "average": 30.0,
                                                  "histogram": {0: 2, 10: s.frames - 4, 90: 2}},
                                      "err_cntrs": {"dropped": 0, "out_of_order": 0, "dup": 0}}
                            for s in every if s.latency}
        return stats

    def disconnect(self, stop_traffic=True, release_ports=True):
        self.calls.append("disconnect")
