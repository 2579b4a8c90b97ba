"""The Lua that vsperf sends to Pktgen-DPDK's socket, as pure functions of their arguments.

How the socket answers (read in Pktgen 23.06.1's lib/lua/lua_socket.c and checked against the
running program): every line received is one REPL chunk; `print()` and the value of an
expression go to pktgen's console, never to the socket, but `io.write` does (pktgen points
`io.stdout` at the connection while a client is connected). Errors of a chunk go to the
console too. So every request is wrapped in `vsperf_call`, a function installed once per
connection (`HELPER`): it compiles the request with `load`, runs it under `pcall` and writes
one line of JSON to the socket, `{"ok":true,"value":...}` or `{"ok":false,"error":"..."}`,
which the client reads up to the newline. Requests are one line each (a chunk spanning
lines would be read as continuation lines).
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Sequence
from dataclasses import dataclass

from vsperf.traffic.streams import Headers

# One line: the JSON encoder (control, quote, backslash and non-ASCII bytes as \u00XX, so a
# reply never contains a raw newline) and the request wrapper.
HELPER = (
    "vsperf_enc = function(v) local t = type(v); "
    "if t == 'table' then local p = {}; for k, x in pairs(v) do "
    "p[#p + 1] = vsperf_enc(tostring(k)) .. ':' .. vsperf_enc(x) end; "
    "return '{' .. table.concat(p, ',') .. '}' "
    "elseif t == 'number' then if v ~= v or v == math.huge or v == -math.huge then return 'null' "
    "elseif math.type(v) == 'integer' then return string.format('%d', v) "
    "else return string.format('%.17g', v) end "
    "elseif t == 'string' then return '\"' .. v:gsub('[%c\"\\\\\\127-\\255]', "
    "function(c) return string.format('\\\\u%04x', c:byte()) end) .. '\"' "
    "elseif t == 'boolean' then return tostring(v) else return 'null' end end; "
    "vsperf_call = function(src) local f, err = load(src, '=vsperf'); local ok, r; "
    "if f then ok, r = pcall(f) else ok, r = false, err end; "
    "if ok then io.write('{\"ok\":true,\"value\":', vsperf_enc(r), '}\\n') "
    "else io.write('{\"ok\":false,\"error\":', vsperf_enc(tostring(r)), '}\\n') end; "
    "io.flush() end"
)

_OPEN, _CLOSE = "[==[", "]==]"

PKT_OVERHEAD_BYTES = 20  # preamble + SFD + inter-frame gap: what pktgen adds to a frame on the wire
DEFAULT_TX_BURST = 64  # pktgen's default frames per transmit slot
MAX_TX_BURST = 128  # pktgen's MAX_PKT_TX_BURST
TX_SLOT_S = 0.001  # transmit slot vsperf aims for (see tx_burst_for)
MIN_RATE_PERCENT = 1e-9
# A port starts at one burst per PRIME_PERIOD_S until its first burst has left: long enough to
# cover pktgen's packet setup before that burst (it then owes no bursts), short enough that the
# first burst comes soon after the start.
PRIME_PERIOD_S = 0.5  # pktgen turns a rate of exactly 0 into 0.01 %
MAX_SEQUENCES = 16  # pktgen's sequence packets per port (NUM_SEQ_PKTS): a frame mix's group at most


def request(code: str) -> bytes:
    """The line that runs `code` (a Lua chunk; `return x` answers x) through `vsperf_call`."""
    if "\n" in code or "\r" in code:
        raise ValueError("a pktgen request must be one line")
    if _CLOSE in code:
        raise ValueError(f"a pktgen request must not contain {_CLOSE}")
    return f"vsperf_call({_OPEN}{code}{_CLOSE})\n".encode()


def lua_str(text: str) -> str:
    """`text` as a Lua string literal (anything but printable ASCII as a decimal escape)."""
    out = []
    for char in text:
        if char.isascii() and char.isprintable() and char not in "\"\\]":
            out.append(char)
        else:
            out.extend(f"\\{byte:03d}" for byte in char.encode())
    return '"' + "".join(out) + '"'


def rate_percent(port_rate_fps: float, frame_size_bytes: int, link_mbps: int) -> float:
    """The `rate` (percent of link speed) at which pktgen sends `port_rate_fps` frames/s.

    pktgen computes its frames/s as floor(floor(link_mbps * 1e6 / ((size + 20) * 8)) * rate
    / 100) (app/pktgen.c, pktgen_packet_rate), size including the FCS: whole frames/s. This
    aims at the middle of the interval that gives round(port_rate_fps), so that the float
    arithmetic on either side cannot land one frame/s below it.
    """
    if port_rate_fps <= 0 or frame_size_bytes <= 0 or link_mbps <= 0:
        raise ValueError("rate, frame size and link speed must be positive")
    full = link_full_fps(frame_size_bytes, link_mbps)
    wanted = max(1, round(port_rate_fps))
    if wanted >= full:
        return 100.0
    return 100.0 * (wanted + 0.5) / full


def link_full_fps(frame_size_bytes: int, link_mbps: int) -> int:
    """pktgen's frames/s at 100 % on a link of `link_mbps` (integer division, as pktgen's)."""
    return (link_mbps * 1_000_000) // ((frame_size_bytes + PKT_OVERHEAD_BYTES) * 8)


def pktgen_pps(rate: float, frame_size_bytes: int, link_mbps: int) -> int:
    """The frames/s pktgen derives from `rate` percent (what it will try to send)."""
    return math.floor(link_full_fps(frame_size_bytes, link_mbps) * min(rate, 100.0) / 100.0)


def tx_burst_for(pps: int) -> int:
    """Frames per transmit slot for `pps`: pktgen sends a burst every burst/pps seconds and
    notices that its count is done one slot after the last burst, so at low rates its default
    64-frame bursts would stretch a trial (at 1,000 fps, by 64 ms); ~1 ms slots keep the
    measured transmit time exact to about a millisecond."""
    return max(1, min(DEFAULT_TX_BURST, int(pps * TX_SLOT_S)))


def prime_rate(frame_size_bytes: int, link_mbps: int, tx_burst: int) -> float:
    """The rate a port starts at: one burst per PRIME_PERIOD_S (see the backend's trial)."""
    return max(MIN_RATE_PERCENT, 100.0 * tx_burst / PRIME_PERIOD_S / link_full_fps(frame_size_bytes, link_mbps))


def format_rate(rate: float) -> str:
    """`rate` as the string pktgen parses with strtod (every digit of the double)."""
    return f"{min(rate, 100.0):.17g}"


@dataclass(frozen=True)
class PortSetup(Headers):
    """What one pktgen port sends in a trial (one direction of the test)."""

    port: int  # pktgen's port number
    frame_size_bytes: int  # including the FCS, as pktgen's `size`
    rate: float  # percent of the link speed pktgen reads (see rate_percent)
    count: int  # frames to send; pktgen stops by itself after them
    vary: str  # "none", "dl_dst", "nw_dst" or "tp_dst" (vsperf.traffic.streams.Direction)
    streams: int  # >= 1; more than 1 uses pktgen's range mode
    vlan_id: int | None = None  # 802.1Q tag on every frame (None: untagged)
    tx_burst: int = DEFAULT_TX_BURST  # frames pktgen sends per transmit slot
    # A frame mix: its sending pattern as pktgen's sequence packets, sent in turn (frame_size_bytes
    # is then the mix's mean, rounded, from which pktgen computes its frames per second).
    mix_sizes: tuple[int, ...] = ()
    sequences_off: bool = False  # turn sequence packets off (the port sent a frame mix before)

    def __post_init__(self) -> None:
        if self.port < 0 or self.count < 1 or self.streams < 1 or not 1 <= self.tx_burst <= MAX_TX_BURST:
            raise ValueError(f"port >= 0, count >= 1, streams >= 1 and 1 <= tx_burst <= {MAX_TX_BURST} are required")
        for address in (self.src_ip, self.dst_ip):
            ipaddress.IPv4Address(address)
        if self.vary not in ("none", "dl_dst", "nw_dst", "tp_dst"):
            raise ValueError(f"unknown varied field {self.vary!r}")
        if len(self.mix_sizes) > MAX_SEQUENCES or (self.mix_sizes and (self.streams > 1 or self.vlan_id is not None)):
            raise ValueError(f"a frame mix is at most {MAX_SEQUENCES} sequence packets of one stream, untagged")


def _mac_add(mac: str, n: int) -> str:
    value = (int(mac.replace(":", ""), 16) + n) & 0xFFFFFFFFFFFF
    raw = f"{value:012x}"
    return ":".join(raw[i : i + 2] for i in range(0, 12, 2))


def setup_port(p: PortSetup) -> str:
    """Statements configuring port `p.port` for one trial: single-packet mode, or range mode
    with the varied field stepping through `p.streams` values (the others fixed)."""
    port = lua_str(str(p.port))
    s = [
        f"pktgen.stop({port})",
        f"pktgen.set_proto({port}, 'udp')",
        f"pktgen.set_type({port}, 'ipv4')",
        f"pktgen.set_mac({port}, 'src', {lua_str(p.src_mac)})",
        f"pktgen.set_mac({port}, 'dst', {lua_str(p.dst_mac)})",
        f"pktgen.set_ipaddr({port}, 'src', {lua_str(p.src_ip + '/32')})",
        f"pktgen.set_ipaddr({port}, 'dst', {lua_str(p.dst_ip)})",
        f"pktgen.set({port}, 'sport', {p.src_udp})",
        f"pktgen.set({port}, 'dport', {p.dst_udp})",
        f"pktgen.set({port}, 'size', {p.frame_size_bytes})",
        f"pktgen.set({port}, 'burst', {p.tx_burst})",
        f"pktgen.set({port}, 'rate', {lua_str(format_rate(p.rate))})",
        f"pktgen.set({port}, 'count', {p.count})",
    ]
    if p.vlan_id is not None:
        s += [f"pktgen.vlanid({port}, {p.vlan_id})", f"pktgen.vlan({port}, 'on')"]
    else:
        s.append(f"pktgen.vlan({port}, 'off')")
    if p.streams > 1:
        s += _range(p, port)
        s.append(f"pktgen.set_range({port}, 'on')")
    else:
        s.append(f"pktgen.set_range({port}, 'off')")
    if p.mix_sizes or p.sequences_off:
        s += _sequences(p, port)
    return "; ".join(s)


def _sequences(p: PortSetup, port: str) -> list[str]:
    """A frame mix as sequence packets (the same headers, each its size), or sequences off."""
    out = []
    for index, size in enumerate(p.mix_sizes):
        table = {"eth_dst_addr": lua_str(p.dst_mac), "eth_src_addr": lua_str(p.src_mac),
                 "ip_dst_addr": lua_str(p.dst_ip), "ip_src_addr": lua_str(p.src_ip + "/32"),
                 "sport": str(p.src_udp), "dport": str(p.dst_udp), "ethType": lua_str("ipv4"),
                 "ipProto": lua_str("udp"), "vlanid": "1", "pktSize": str(size)}
        fields = ", ".join(f"[{lua_str(k)}] = {v}" for k, v in table.items())
        out.append(f"pktgen.seqTable({index}, {port}, {{{fields}}})")
    out.append(f"pktgen.set({port}, 'seq_cnt', {len(p.mix_sizes)})")
    return out


def _range(p: PortSetup, port: str) -> list[str]:
    last = p.streams - 1

    def field(name: str, base: str | int, top: str | int, step: str | int) -> list[str]:
        def lit(v: str | int) -> str:
            return lua_str(v) if isinstance(v, str) else str(v)

        return [f"pktgen.range.{name}({port}, '{k}', {lit(v)})"
                for k, v in (("start", base), ("min", base), ("max", top), ("inc", step))]

    def fixed(name: str, value: str | int, zero: str | int) -> list[str]:
        return field(name, value, value, zero)

    def varied(name: str, value: str | int, top: str | int, one: str | int, zero: str | int) -> list[str]:
        return field(name, value, top, one) if p.vary == name_to_vary[name] else fixed(name, value, zero)

    name_to_vary = {"dst_mac": "dl_dst", "dst_ip": "nw_dst", "dst_port": "tp_dst"}
    top_ip = str(ipaddress.IPv4Address(p.dst_ip) + last)
    return [
        *fixed("src_mac", p.src_mac, "00:00:00:00:00:00"),
        *varied("dst_mac", p.dst_mac, _mac_add(p.dst_mac, last), "00:00:00:00:00:01", "00:00:00:00:00:00"),
        *fixed("src_ip", p.src_ip, "0.0.0.0"),
        *varied("dst_ip", p.dst_ip, top_ip, "0.0.0.1", "0.0.0.0"),
        *fixed("src_port", p.src_udp, 0),
        *varied("dst_port", p.dst_udp, p.dst_udp + last, 1, 0),
        *fixed("pkt_size", p.frame_size_bytes, 0),
        f"pktgen.range.ip_proto({port}, 'udp')",
    ]


def portlist(ports: Sequence[int]) -> str:
    """A pktgen port list ("0,1") as a Lua string."""
    if not ports:
        raise ValueError("empty port list")
    return lua_str(",".join(str(p) for p in sorted(set(ports))))


def clear_stats() -> str:
    """Zero every port's counters (pktgen re-bases them on the driver's)."""
    return "pktgen.clr()"


def start(ports: Sequence[int]) -> str:
    """Start sending on `ports` (each stops by itself after its count)."""
    return f"pktgen.start({portlist(ports)})"


def set_rate(port: int, rate: float) -> str:
    """Change the rate of `port`, also while it sends, and restart its pacing clock.

    Setting `rate` alone recomputes the burst period but keeps the next burst where the old
    period put it; a zero `cycles` makes the sending lcore recompute the period and schedule
    the next burst one new period from now (app/pktgen.c, pktgen_main_rxtx_loop), so the new
    rate applies at once and no bursts are owed from before the change.
    """
    p = lua_str(str(port))
    return f"pktgen.set({p}, 'rate', {lua_str(format_rate(rate))}); pktgen.set({p}, 'cycles', 0)"


def wait_done(ports: Sequence[int], limit_s: float, *, start_first: bool = False) -> str:
    """Return once none of `ports` is sending, or stop them once ~`limit_s` have passed.

    Answers the number of 1 ms sleeps it took and whether it had to stop the ports. The limit
    is counted with os.time (whole seconds: the only clock of pktgen's Lua; the sleeps last
    longer than 1 ms on a busy machine). `start_first` starts the ports in the same request (a
    pktgen the user started: the request's wall time is then the transmit time, pktgen's
    packet setup included).
    """
    plist = portlist(ports)
    return (
        f"local ports = {plist}; " + ("pktgen.start(ports); " if start_first else "") + "local n = 0; "
        "local t0 = os.time(); "
        "local function busy() local s = pktgen.isSending(ports); "
        "for k, v in pairs(s) do if k ~= 'n' and v == 'y' then return true end end; return false end; "
        f"while busy() and os.time() - t0 < {math.ceil(limit_s)} do pktgen.delay(1); n = n + 1 end; "
        "local cut = busy(); if cut then pktgen.stop(ports) end; "
        "return {waited_ms = n, cut = cut}"
    )


def stop(ports: Sequence[int]) -> str:
    """Stop sending on `ports`."""
    return f"pktgen.stop({portlist(ports)})"


def port_stats() -> str:
    """Counters of every port and their change over the last second.

    pktgen's timer thread refreshes both once a second; the change is read first, so that a
    zero change guarantees the counters read after it include everything up to that refresh.
    """
    return "local rate = pktgen.portStats('all', 'rate'); return {rate = rate, port = pktgen.portStats('all', 'port')}"


def port_info() -> str:
    """Configuration and link state of every port."""
    return "return pktgen.portInfo('all')"


def pkt_stats() -> str:
    """Packet-type counters and latency probes of every port."""
    return "return pktgen.pktStats('all')"


def info() -> str:
    """pktgen's information table (versions, limits)."""
    return "return pktgen.info"


def latency(ports: Sequence[int], enable: bool) -> str:
    """Turn pktgen's latency probes on or off on `ports`."""
    return f"pktgen.latency({portlist(ports)}, '{'enable' if enable else 'disable'}')"


def screen_off() -> str:
    """Stop pktgen redrawing its console (vsperf never looks at it)."""
    return "pktgen.screen('off')"


def quit_pktgen() -> str:
    """Make pktgen exit (it restores its terminal first)."""
    return "pktgen.quit()"
