"""Local lab settings: the switch, the VNFs and the software generator's ports (VSPERF's names
where it had them). Defaults: conf/02_vswitch.yaml and conf/03_vnf.yaml.

The DPDK entries (OVS-DPDK, testpmd as switch or VNF) are read by vsperf.dpdk.conf.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from vsperf.config.types import MAX_CPU, MAX_MEMORY_MB, NAME, Bool, Constraint, Int, ListOf, MapOf, OneOf, Setting, Str

# The DPDK drivers that attach a veth (vsperf.dpdk.eal) and testpmd's forwarding modes.
PortDriver = Literal["af_xdp", "af_packet"]
PORT_DRIVERS: tuple[PortDriver, ...] = ("af_xdp", "af_packet")
FWD_MODES = ("io", "mac", "macswap", "csum")

# VSWITCH_JUMBO_FRAMES_SIZE's bounds: OVS-DPDK's mtu_request range (DPDK's RTE_ETHER_MIN_MTU; OVS's
# NETDEV_DPDK_MAX_PKT_LEN 9728 less the Ethernet header and FCS).
MIN_JUMBO_MTU_BYTES = 68
MAX_JUMBO_MTU_BYTES = 9710

_CPU = Int(min=0, max=MAX_CPU, unit="CPU number")
_FWD_MODE = Str(choices=FWD_MODES)

SETTINGS: dict[str, Setting] = {
    # --- switch -----------------------------------------------------------------------------
    "VSWITCH": Setting(
        NAME,
        "Virtual switch under test (vsperf --list-vswitches): ovs, ovs-dpdk, linux-bridge, none."),
    "VSWITCH_VLAN_ID": Setting(
        Int(min=0, max=4095),
        "VLAN id the switch pushes towards the receiving generator port (Frame Modification vlan)."),
    "VSWITCH_OVS_PORT_TYPE": Setting(
        Str(choices=("afxdp", "system")),
        "How ovs (userspace datapath) attaches its veth ports: afxdp (AF_XDP, polled by a PMD thread) "
        "or system (AF_PACKET, polled by the main thread)."),
    "VSWITCH_FLOW_MODE": Setting(
        Str(choices=("auto", "ports", "normal")),
        "How ovs forwards: ports (VSPERF's port-to-port flows), normal (one NORMAL flow: MAC "
        "learning, as RFC 2889 address caching and learning need), or auto (normal for those two "
        "traffic types, ports otherwise)."),
    "VSWITCH_OVS_AFXDP_MODE": Setting(
        Str(choices=("native", "generic")),
        "xdp-mode of afxdp ports (above MTU 3498, i.e. frames > 3516 B, ovs uses system ports)."),
    "OVS_VSWITCHD": Setting(
        NAME,
        "The ovs-vswitchd executable of the ovs switch (its private instance; never the system's)."),
    "VSWITCH_PMD_CPU_MASK": Setting(
        NAME,
        "CPUs of OVS's PMD threads (other_config:pmd-cpu-mask, hex, e.g. '0x2'); `none` runs its "
        "testpmd forwarding lcore on the lowest CPU of this mask."),
    "VSWITCHD_DPDK_CONFIG": Setting(
        MapOf(NAME, Str(), merge_keys=True),
        "Extra Open_vSwitch other_config keys for OVS-DPDK, set before ovs-vswitchd starts; they "
        "override vsperf's own (dpdk-init, dpdk-extra, pmd-cpu-mask)."),
    "VSWITCH_DPDK_MEMORY_MB": Setting(
        Int(min=64, max=MAX_MEMORY_MB, unit="MiB"),
        "Ceiling of OVS-DPDK's EAL memory (-m, no hugepages); p2p uses ~250 MiB, pvp ~410, pvvp ~580."),
    "OVS_DPDK_VSWITCHD": Setting(
        NAME,
        "The DPDK build of ovs-vswitchd (run directly; update-alternatives is never switched)."),
    "DPDK_PORT_DRIVER": Setting(
        Str(choices=PORT_DRIVERS),
        "DPDK driver attaching veth ports (ovs-dpdk and none): af_xdp (fast) or af_packet (fallback)."),
    "VSWITCH_VHOSTUSER_SERVER_MODE": Setting(
        Bool(),
        "true: OVS creates the vhost-user sockets (dpdkvhostuser); false: testpmd creates them and OVS "
        "connects (dpdkvhostuserclient, reconnects if the VNF restarts)."),
    "VSWITCH_JUMBO_FRAMES_ENABLED": Setting(
        Bool(),
        "VSPERF's jumbo frames: every port the switch adds (deployment and TestSteps) gets "
        "VSWITCH_JUMBO_FRAMES_SIZE as its MTU (OVS's mtu_request), or the frames' if larger."),
    "VSWITCH_JUMBO_FRAMES_SIZE": Setting(
        Int(min=MIN_JUMBO_MTU_BYTES, max=MAX_JUMBO_MTU_BYTES, unit="bytes"),
        "IP MTU of the switch's ports when VSWITCH_JUMBO_FRAMES_ENABLED (VSPERF's default 9000)."),
    "TESTPMD_FWD_MODE": Setting(
        _FWD_MODE,
        "Forwarding mode of testpmd when it is the switch (--vswitch none)."),
    "TESTPMD_ARGS": Setting(
        ListOf(Str()),
        "Extra testpmd application arguments (after --) for --vswitch none."),
    "TESTPMD_MEMORY_MB": Setting(
        Int(min=32, max=MAX_MEMORY_MB, unit="MiB"),
        "Memory of each testpmd's EAL (-m, no hugepages): switch and VNFs alike."),
    "TESTPMD_NB_MBUFS": Setting(
        Int(min=2048, max=2**24),
        "--total-num-mbufs of each testpmd."),
    "TESTPMD_DESCRIPTORS": Setting(
        Int(min=64, max=4096),
        "RX/TX ring size of each testpmd port (--rxd/--txd, virtio queue_size)."),
    # --- VNFs ---------------------------------------------------------------------------------
    "VNF": Setting(
        NAME,
        "VNF of pvp/pvvp/pvpv deployments (vsperf --list-vnfs); auto: netns for ovs and linux-bridge, "
        "testpmd-vhost for ovs-dpdk."),
    "LAB_PARALLEL_STREAM_TYPE": Setting(
        Str(choices=("L2", "L3", "L4"), ignore_case=True),
        "The local lab splits a pvpvN deployment's traffic between its N VNFs by stream: a test "
        "sending fewer than N streams (VSPERF's pvpv tests send one) gets N streams of this type."),
    "GUEST_LOOPBACK": Setting(
        ListOf(Str(choices=("linux_bridge", "testpmd", "l2fwd", "buildin", "clean")), min_len=1),
        "Loopback inside each VNF, one value per VNF (the list repeats): linux_bridge or testpmd for "
        "the netns VNF (VSPERF's l2fwd, buildin and clean need a VM and are refused)."),
    "GUEST_TESTPMD_FWD_MODE": Setting(
        OneOf(_FWD_MODE, ListOf(_FWD_MODE, min_len=1)),
        "Forwarding mode of testpmd inside VNFs (testpmd-vhost, and the netns VNF's testpmd loopback); "
        "a list (VSPERF's form, e.g. ['csum']) gives one per VNF, its first entry for the VNFs past its end."),
    "GUEST_TESTPMD_CPU": Setting(
        _CPU,
        "CPU the forwarding lcore of a VNF's testpmd busy-polls (its main lcore shares it and sleeps)."),
    "GUEST_TESTPMD_ARGS": Setting(
        ListOf(Str()),
        "Extra testpmd application arguments (after --) for VNFs' testpmd."),
    # --- software generator ports -------------------------------------------------------------
    "TRAFGEN_CPUS": Setting(
        ListOf(_CPU),
        "CPU of each port's trafgen sender, port i on entry i (repeating); empty: port i on CPU i."),
}


def _pmd_mask(values: Mapping[str, Any]) -> str | None:
    text = str(values["VSWITCH_PMD_CPU_MASK"]).strip().lower()
    digits = text[2:] if text.startswith("0x") else text
    try:
        if int(digits, 16) > 0:
            return None
    except ValueError:
        pass
    return f"VSWITCH_PMD_CPU_MASK ({values['VSWITCH_PMD_CPU_MASK']!r}) must be a non-zero hex CPU mask"


CONSTRAINTS = (Constraint(("VSWITCH_PMD_CPU_MASK",), _pmd_mask),)
