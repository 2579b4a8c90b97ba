"""Settings of vsgen, vsperf's own software traffic generator. Defaults: conf/06_vsgen.yaml."""

from __future__ import annotations

from typing import Literal

from vsperf.config.types import MAX_COUNT, MAX_CPU, Int, ListOf, Setting, Str

# How the engine transmits (vsperf.trafficgen.vsgen.protocol), and its threads per direction.
Path = Literal["auto", "xdp", "afxdp", "packet"]
PATHS: tuple[Path, ...] = ("auto", "xdp", "afxdp", "packet")
MAX_TX_THREADS = 8  # transmit threads per direction (VSG_MAX_THREADS in csrc/vsgen_shared.h)

SETTINGS: dict[str, Setting] = {
    "VSGEN_ENGINE": Setting(
        Str(),
        "Path of the vsgen engine binary; empty: the one built with vsperf (or built on first use)."),
    "VSGEN_PATH": Setting(
        Str(choices=PATHS),
        "How vsgen transmits: xdp (XDP live frames, fastest), afxdp (an AF_XDP socket per transmit "
        "thread, bound to queue t: for NICs without XDP live frames), packet (AF_PACKET), or auto (xdp "
        "where the port's peer accepts it, else packet; the report says which)."),
    "VSGEN_CPUS": Setting(
        ListOf(Int(min=0, max=MAX_CPU, unit="CPU number")),
        "CPUs of vsgen's transmit threads, thread j on entry j (repeating; directions in order, "
        "VSGEN_TX_THREADS each); empty: the CPUs not in VSWITCH_PMD_CPU_MASK."),
    "VSGEN_TX_THREADS": Setting(
        Int(min=1, max=MAX_TX_THREADS, unit="threads"),
        "Transmit threads per direction (at most one per stream): thread t sends streams t, t+N, ... "
        "at its share of the rate, so each stream's sequence stays in order; give the ports as many "
        "queues (LAB_PORT_QUEUES) for the receive side to scale too. Two-rate (recovery) trials use one."),
    "VSGEN_STREAM_DETAIL": Setting(
        Int(min=0, max=MAX_COUNT, unit="streams"),
        "Per-stream counters are kept in the results when a direction has at most this many streams."),
}
