"""Settings of the pktgen traffic generator (Pktgen-DPDK). Defaults: conf/07_pktgen.yaml."""

from __future__ import annotations

from vsperf.config.types import MAX_MEMORY_MB, NAME, WEEK_S, Bool, Int, ListOf, Setting, Str

SETTINGS: dict[str, Setting] = {
    "TRAFFICGEN_PKTGEN_BINARY": Setting(
        NAME,
        "The pktgen executable (a name on PATH or a path), built with Lua (meson -Denable_lua=true)."),
    "TRAFFICGEN_PKTGEN_HOST": Setting(
        Str(),
        "Host of a pktgen the user started with -G/-g; empty: vsperf starts pktgen on the lab's ports."),
    "TRAFFICGEN_PKTGEN_PORT": Setting(
        Int(min=1, max=65535, unit="TCP port"),
        "TCP port of pktgen's Lua socket (pktgen's default: 22022), for both kinds of pktgen."),
    "TRAFFICGEN_PKTGEN_PORT_MAP": Setting(
        ListOf(Int(min=0, max=1023, unit="pktgen port")),
        "With TRAFFICGEN_PKTGEN_HOST: the pktgen port of generator port i is entry i."),
    "TRAFFICGEN_PKTGEN_LCORES": Setting(
        ListOf(NAME),
        "EAL --lcores of the pktgen processes vsperf starts (one per namespace of the generator "
        "ports), process i on entry i (repeating): lcore 0 runs pktgen's console and timers, lcore 1 "
        "its ports (e.g. '0@0,1@1': lcore 0 on CPU 0, lcore 1 on CPU 1)."),
    "TRAFFICGEN_PKTGEN_CORE_MAP": Setting(
        Str(),
        "pktgen's -m (which lcores serve which ports); empty: lcore 1 serves every port."),
    "TRAFFICGEN_PKTGEN_MEMORY_MB": Setting(
        Int(min=256, max=MAX_MEMORY_MB, unit="MiB"),
        "EAL memory (-m, no hugepages) of each pktgen vsperf starts, per port it owns."),
    "TRAFFICGEN_PKTGEN_PORT_DRIVER": Setting(
        Str(choices=("af_packet", "af_xdp")),
        "DPDK driver attaching the lab's veth ports to pktgen: af_packet or af_xdp."),
    "TRAFFICGEN_PKTGEN_EAL_ARGS": Setting(
        ListOf(NAME),
        "Extra EAL arguments of each pktgen vsperf starts (after vsperf's own)."),
    "TRAFFICGEN_PKTGEN_LATENCY": Setting(
        Bool(),
        "Send pktgen's latency probes (one timestamped frame per interval: a sample, flagged "
        "latency_sampled in the results)."),
    "TRAFFICGEN_PKTGEN_TIMEOUT_S": Setting(
        Int(min=1, max=WEEK_S, unit="s"),
        "How long vsperf waits for pktgen's Lua socket (start-up, connection)."),
}
