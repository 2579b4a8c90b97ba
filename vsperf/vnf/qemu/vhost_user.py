"""`qemu-vhost-user` (VSPERF's QemuDpdkVhostUser): the guest's NICs are vhost-user ports of OVS-DPDK.

By default QEMU serves the sockets (`-chardev socket,server=on`) and OVS connects to them as
`dpdkvhostuserclient` ports, so OVS reconnects when a guest restarts; with
VSWITCH_VHOSTUSER_SERVER_MODE OVS serves them (`dpdkvhostuser`) and QEMU connects. The guest's
memory is a shared memfd (no host hugepages); under TCG the NICs run without MSI-X (see qemu.py).
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import ClassVar

from vsperf.vnf.qemu.qemu import NicConfig, guest_mac
from vsperf.vnf.qemu.vnf import QemuVnf
from vsperf.vnf.vhost import vhost_user_ports
from vsperf.vswitch.base import PortKind, SwitchPort


class QemuVhostUserVnf(QemuVnf):
    """A QEMU guest on two vhost-user ports (OVS-DPDK): VSPERF's PVP/PVVP with DPDK."""

    NAME: ClassVar[str] = "qemu-vhost-user"
    ALIASES: ClassVar[tuple[str, ...]] = ("QemuDpdkVhostUser",)
    PORT_KIND: ClassVar[PortKind] = "vhostuser"
    NIC_TYPE: ClassVar[str] = "vhost-user (virtio-net-pci)"

    def create_ports(self, index: int, mtu_bytes: int) -> tuple[SwitchPort, SwitchPort]:
        return vhost_user_ports(self.host, index)

    def qemu_is_server(self) -> bool:
        """QEMU serves the sockets unless OVS does (VSWITCH_VHOSTUSER_SERVER_MODE)."""
        return not bool(self.settings["VSWITCH_VHOSTUSER_SERVER_MODE"])

    def nic_configs(self) -> tuple[NicConfig, ...]:
        server = self.qemu_is_server()
        return tuple(
            NicConfig("vhostuser", guest_mac(self._index, k), socket_path=port.socket_path, server=server)
            for k, port in enumerate(self.ports)
        )

    def details(self) -> dict[str, str]:
        info = super().details()
        info["vhost_user_server"] = "qemu" if self.qemu_is_server() else "switch"
        return info

    def remove_ports(self) -> None:
        # QEMU as the server leaves its socket files behind.
        self.host.remove_files([PurePosixPath(port.socket_path) for port in self.ports])
