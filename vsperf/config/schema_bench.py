"""Settings of the seeds' other benchmarks (vsperf.benchmarks): UDP message loss (seeds/004),
host-stack bandwidth with iperf3 with and without a user-space stack (seeds/000, 002).

Defaults: conf/10_benchmarks.yaml.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vsperf.config.types import (
    MAX_COUNT,
    NAME,
    SECONDS,
    WEEK_S,
    Bool,
    Constraint,
    Float,
    Int,
    ListOf,
    MapOf,
    Setting,
    Str,
    Struct,
)

SCHEDULERS = ("OTHER", "BATCH", "IDLE", "FIFO", "RR")
REALTIME_SCHEDULERS = ("FIFO", "RR")
RECEIVE_METHODS = ("select", "epoll", "thread")
MAX_PAYLOAD_BYTES = 1500

_SCHED = Str(choices=SCHEDULERS)
_PRIORITY = Int(min=0, max=99, unit="real-time priority")
_RCVBUF = Int(min=0, max=1 << 30, unit="bytes")
_PAYLOAD = Int(min=0, max=MAX_PAYLOAD_BYTES, unit="bytes")
_MESSAGES = Int(min=1, max=MAX_COUNT, unit="messages")
_METHOD = Str(choices=RECEIVE_METHODS)

# One row of a UDP message-loss sweep: every parameter of one measurement (seeds/004's columns).
UDPLOSS_ROW = Struct({
    "sender_sched": _SCHED,
    "sender_priority": _PRIORITY,
    "receiver_sched": _SCHED,
    "receiver_priority": _PRIORITY,
    "rcvbuf_bytes": _RCVBUF,
    "payload_bytes": _PAYLOAD,
    "messages": _MESSAGES,
    "connected": Bool(),
    "method": _METHOD,
})

SETTINGS: dict[str, Setting] = {
    "LAB_PORT_QUEUES": Setting(
        Int(min=1, max=64, unit="queues"),
        "Local lab: rx and tx queues of the generator ports' veths (numrxqueues/numtxqueues), and "
        "n_rxq of ovs afxdp ports and of ovs-dpdk veth ports (with DPDK_PORT_DRIVER=af_packet: "
        "net_af_xdp opens one queue of a veth): seeds/003's queues column."),
    # --- seeds/003 sweeps (traffic types sweep_bw, sweep_latency) --------------------------------
    "SWEEP_FLOWS": Setting(
        ListOf(Int(min=1, max=65536, unit="flows"), min_len=1),
        "sweep_bw: flows per direction, one trial each (TRAFFIC multistream; the seed's 1, 8, 32, 64, 256)."),
    "SWEEP_DURATION_S": Setting(SECONDS, "Length of each sweep trial."),
    "SWEEP_RATE_PERCENT": Setting(
        Float(gt=0, max=100, unit="% of line rate"), "sweep_bw: offered load of every point, % of line rate."),
    "SWEEP_LATENCY_RATE_PERCENT": Setting(
        Float(gt=0, max=100, unit="% of line rate"), "sweep_latency: offered load of the latency trial."),
    # --- UDP message loss (traffic type udp_msg_loss) -------------------------------------------
    "UDPLOSS_SENDER_SCHED": Setting(_SCHED, "Scheduler of the UDP message sender: OTHER, BATCH, IDLE, FIFO or RR."),
    "UDPLOSS_SENDER_PRIORITY": Setting(_PRIORITY, "Sender's real-time priority: 1..99 with FIFO/RR, else 0."),
    "UDPLOSS_RECEIVER_SCHED": Setting(_SCHED, "Scheduler of the UDP message receiver: OTHER, BATCH, IDLE, FIFO or RR."),
    "UDPLOSS_RECEIVER_PRIORITY": Setting(_PRIORITY, "Receiver's real-time priority: 1..99 with FIFO/RR, else 0."),
    "UDPLOSS_RCVBUF_BYTES": Setting(_RCVBUF, "Receiver's socket receive buffer (SO_RCVBUF); 0: the system default."),
    "UDPLOSS_PAYLOAD_BYTES": Setting(_PAYLOAD, "UDP payload per message, 0..1500 (1472 fills a 1500-byte IP packet)."),
    "UDPLOSS_MESSAGES": Setting(_MESSAGES, "Messages sent per measurement (the seed sent 1,000,000)."),
    "UDPLOSS_CONNECTED": Setting(Bool(), "The sender connect()s its socket and uses send() instead of sendto()."),
    "UDPLOSS_METHOD": Setting(_METHOD, "How the receiver waits for messages: select, epoll or a thread in recv()."),
    "UDPLOSS_PORT": Setting(Int(min=1024, max=65535, unit="UDP port"), "Receiver's UDP port."),
    "UDPLOSS_IDLE_MS": Setting(
        Int(min=1, max=WEEK_S * 1000, unit="ms"),
        "The receiver stops when no message came for this long after the first one."),
    "UDPLOSS_ROWS": Setting(
        ListOf(UDPLOSS_ROW),
        "A sweep: one measurement per row (keys sender_sched, sender_priority, receiver_sched, "
        "receiver_priority, rcvbuf_bytes, payload_bytes, messages, connected, method); empty: one "
        "measurement with the UDPLOSS_* settings."),
    "BENCH_PORT_OFFLOADS": Setting(
        Bool(),
        "Keep the generator ports' transmit checksum/TSO offloads on during the benchmarks; false (off): "
        "the kernel stacks send finished frames, which switches that read veths with AF_XDP or DPDK need."),
    # --- host-stack bandwidth (traffic types iperf3_tcp, iperf3_udp) ------------------------------
    "IPERF_BINARY": Setting(NAME, "The iperf3 program (a name on PATH or a path)."),
    "IPERF_DURATION_S": Setting(Int(min=1, max=WEEK_S, unit="seconds"),
                                "Length of one iperf3 measurement (iperf3 -t)."),
    "IPERF_INTERVAL_S": Setting(Float(min=0.1, max=WEEK_S, unit="seconds"), "Per-interval report period (iperf3 -i)."),
    "IPERF_PARALLEL": Setting(Int(min=1, max=128, unit="streams"), "Parallel client streams (iperf3 -P)."),
    "IPERF_PORT": Setting(Int(min=1024, max=65535, unit="TCP port"), "Port of the iperf3 server."),
    "IPERF_UDP_BANDWIDTH_BPS": Setting(
        Float(min=0, max=1.6e12, unit="bits/s"), "Offered UDP load (iperf3 -b); 0: as fast as the sender can."),
    "IPERF_UDP_LENGTH_BYTES": Setting(
        Int(min=0, max=65507, unit="bytes"), "UDP datagram payload (iperf3 -l); 0: iperf3's default."),
    "USERSTACK_PRELOAD": Setting(
        Str(),
        "Library of a user-space network stack loaded with LD_PRELOAD into both iperf3 ends (seeds "
        "000/002: libnStackAPI.so); empty: the kernel stack only. Set: both, side by side."),
    "USERSTACK_ENV": Setting(
        MapOf(NAME, Str()),
        "Environment of the user-space stack's runs besides LD_PRELOAD (e.g. LD_LIBRARY_PATH)."),
    "USERSTACK_NAME": Setting(NAME, "Name of the user-space stack in results and the report."),
}


def _priority_problem(values: Mapping[str, Any]) -> str | None:
    for side in ("SENDER", "RECEIVER"):
        sched, prio = values[f"UDPLOSS_{side}_SCHED"], values[f"UDPLOSS_{side}_PRIORITY"]
        if (sched in REALTIME_SCHEDULERS) != (prio > 0):
            need = "1..99" if sched in REALTIME_SCHEDULERS else "0"
            return f"UDPLOSS_{side}_PRIORITY must be {need} with UDPLOSS_{side}_SCHED {sched}, got {prio}"
    return None


CONSTRAINTS: tuple[Constraint, ...] = (
    Constraint(
        ("UDPLOSS_SENDER_SCHED", "UDPLOSS_SENDER_PRIORITY", "UDPLOSS_RECEIVER_SCHED", "UDPLOSS_RECEIVER_PRIORITY"),
        _priority_problem,
    ),
)
