"""`qemu-virtio-net` (VSPERF's QemuVirtioNet): the guest's NICs are tap devices of a kernel-facing switch.

Each NIC is a tap created in the switch's namespace on the switch's host (named like the netns
VNF's switch-side veths, recorded before it exists: the run's state on the local lab, the run's
journal for a testbed host, so leftover cleanup knows it); QEMU runs in that namespace and opens
the taps by name; ovs (userspace datapath) or linux-bridge attaches them like any interface.
The vhost-net accelerator is used where the host's /dev/vhost-net can be opened (`vhost=on`),
else QEMU copies frames itself (`vhost=off`); the report says which.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, ClassVar

from vsperf.errors import PrerequisiteError, VsperfError
from vsperf.executor import Executor
from vsperf.host.host import Host
from vsperf.vnf.qemu.qemu import NicConfig, guest_mac
from vsperf.vnf.qemu.vnf import QemuVnf
from vsperf.vswitch.base import PortKind, SwitchPort

log = logging.getLogger(__name__)

VHOST_NET = "/dev/vhost-net"
DPDK_SWITCHES = ("ovs-dpdk", "ovsdpdkvhost")  # the name and VSPERF's alias


def vhost_net_available(executor: Executor) -> bool:
    """True when the kernel's vhost-net accelerator can be opened on the executor's host."""
    return executor.run(["test", "-r", VHOST_NET, "-a", "-w", VHOST_NET], check=False, timeout_s=10).returncode == 0


class QemuVirtioNetVnf(QemuVnf):
    """A QEMU guest on two tap devices (ovs, linux-bridge): VSPERF's PVP/PVVP with virtio-net."""

    NAME: ClassVar[str] = "qemu-virtio-net"
    ALIASES: ClassVar[tuple[str, ...]] = ("QemuVirtioNet",)
    PORT_KIND: ClassVar[PortKind] = "veth"  # a kernel interface in the switch namespace
    NIC_TYPE: ClassVar[str] = "virtio-net (tap)"

    def __init__(self, settings: Mapping[str, Any], host: Host) -> None:
        super().__init__(settings, host)
        self._vhost_net = False  # the host's /dev/vhost-net (known once the ports exist)

    def check_prerequisites(self) -> None:
        if str(self.settings["VSWITCH"]).lower() in DPDK_SWITCHES:
            # Measured: OVS-DPDK's AF_XDP and AF_PACKET ports on taps lose about half of the frames.
            raise PrerequisiteError("VNF QemuVirtioNet (taps) does not work with ovs-dpdk here; use --vnf "
                                    "QemuDpdkVhostUser with ovs-dpdk, or QemuVirtioNet with ovs or linux-bridge")
        super().check_prerequisites()

    def create_ports(self, index: int, mtu_bytes: int) -> tuple[SwitchPort, SwitchPort]:
        names = self.host.names.vnf(index).switch_ifs
        self._vhost_net = vhost_net_available(self.host.executor)
        for name in names:
            self.host.net.add_tap(name, self._switch_netns, mtu_bytes=mtu_bytes)
        return (SwitchPort(f"vnf{index}.0", "veth", "vnf", ifname=names[0], tap=True),
                SwitchPort(f"vnf{index}.1", "veth", "vnf", ifname=names[1], tap=True))

    def qemu_netns(self) -> str | None:
        return self._switch_netns

    def nic_configs(self) -> tuple[NicConfig, ...]:
        return tuple(
            NicConfig("tap", guest_mac(self._index, k), ifname=port.ifname, vhost=self._vhost_net)
            for k, port in enumerate(self.ports)
        )

    def details(self) -> dict[str, str]:
        info = super().details()
        info["vhost_net"] = "on" if self._vhost_net else f"off ({VHOST_NET} missing)"
        return info

    def remove_ports(self) -> None:
        for port in self.ports:
            try:
                self.host.net.del_link(port.ifname, self._switch_netns)
            except VsperfError as exc:  # the journal keeps it: the teardown's release deletes it
                log.warning("could not delete tap %s: %s", port.ifname, exc)
