"""Settings of vsgen, vsperf's own software traffic generator. Defaults: conf/06_vsgen.yaml."""

from __future__ import annotations

from vsperf.config.types import Int, ListOf, Setting, Str
from vsperf.trafficgen.vsgen.protocol import PATHS

SETTINGS: dict[str, Setting] = {
    "VSGEN_ENGINE": Setting(
        Str(),
        "Path of the vsgen engine binary; empty: the one built with vsperf (or built on first use)."),
    "VSGEN_PATH": Setting(
        Str(choices=PATHS),
        "How vsgen transmits: xdp (XDP live frames, fastest), packet (AF_PACKET), or auto (xdp where "
        "the port's peer accepts it, else packet; the report says which)."),
    "VSGEN_CPUS": Setting(
        ListOf(Int(min=0, unit="CPU number")),
        "CPUs of vsgen's transmit threads, port i on entry i (repeating); empty: the CPUs not in "
        "VSWITCH_PMD_CPU_MASK."),
    "VSGEN_STREAM_DETAIL": Setting(
        Int(min=0, unit="streams"),
        "Per-stream counters are kept in the results when a direction has at most this many streams."),
}
