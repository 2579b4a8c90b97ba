"""`qemu-virtio-net` (VSPERF's QemuVirtioNet): the guest's NICs are tap devices of a kernel-facing switch.

Each NIC is a tap created in the switch's namespace (named like the netns VNF's switch-side
veths, so the run's state and leftover cleanup know it); QEMU runs in that namespace and opens
the taps by name; ovs (userspace datapath) or linux-bridge attaches them like any interface.
The vhost-net accelerator is used where /dev/vhost-net exists (`vhost=on`), else QEMU copies
frames itself (`vhost=off`); the report says which.
"""

from __future__ import annotations

import logging
import os
from typing import ClassVar

from vsperf.errors import CommandError, DeploymentError, PrerequisiteError
from vsperf.lab import netdev
from vsperf.lab.env import LabEnv
from vsperf.lab.state import Resource
from vsperf.vnf.qemu.qemu import NicConfig, guest_mac
from vsperf.vnf.qemu.vnf import QemuVnf
from vsperf.vswitch.base import PortKind, SwitchPort

log = logging.getLogger(__name__)
VHOST_NET = "/dev/vhost-net"
DPDK_SWITCHES = ("ovs-dpdk", "ovsdpdkvhost")  # the name and VSPERF's alias


def vhost_net_available() -> bool:
    """True when the kernel's vhost-net accelerator can be opened."""
    return os.access(VHOST_NET, os.R_OK | os.W_OK)


class QemuVirtioNetVnf(QemuVnf):
    """A QEMU guest on two tap devices (ovs, linux-bridge): VSPERF's PVP/PVVP with virtio-net."""

    NAME: ClassVar[str] = "qemu-virtio-net"
    ALIASES: ClassVar[tuple[str, ...]] = ("QemuVirtioNet",)
    PORT_KIND: ClassVar[PortKind] = "veth"  # a kernel interface in the switch namespace
    NIC_TYPE: ClassVar[str] = "virtio-net (tap)"

    def check_prerequisites(self) -> None:
        if str(self.settings["VSWITCH"]).lower() in DPDK_SWITCHES:
            # Measured: OVS-DPDK's AF_XDP and AF_PACKET ports on taps lose about half of the frames.
            raise PrerequisiteError("VNF QemuVirtioNet (taps) does not work with ovs-dpdk here; use --vnf "
                                    "QemuDpdkVhostUser with ovs-dpdk, or QemuVirtioNet with ovs or linux-bridge")
        super().check_prerequisites()

    def create_ports(self, lab: LabEnv, index: int, mtu_bytes: int) -> tuple[SwitchPort, SwitchPort]:
        ns = lab.switch_netns
        ports = []
        for k in (0, 1):
            name = lab.names.vnf_switch_if(index, k)
            lab.state.add(Resource("link", name, netns=ns))
            try:
                lab.ctx.executor.run(["ip", "-n", ns, "tuntap", "add", "dev", name, "mode", "tap"], timeout_s=30)
                lab.ctx.executor.run(["ip", "-n", ns, "link", "set", "dev", name, "mtu", str(mtu_bytes), "up"],
                                     timeout_s=30)
            except CommandError as exc:
                raise DeploymentError(f"cannot create tap {name} for {self.label}: {exc}") from exc
            ports.append(SwitchPort(f"vnf{index}.{k}", "veth", "vnf", ifname=name, tap=True))
        return ports[0], ports[1]

    def qemu_netns(self) -> str | None:
        assert self._lab is not None
        return self._lab.switch_netns

    def nic_configs(self) -> tuple[NicConfig, ...]:
        vhost = vhost_net_available()
        return tuple(
            NicConfig("tap", guest_mac(self._index, k), ifname=port.ifname, vhost=vhost)
            for k, port in enumerate(self.ports)
        )

    def details(self) -> dict[str, str]:
        info = super().details()
        info["vhost_net"] = "on" if vhost_net_available() else f"off ({VHOST_NET} missing)"
        return info

    def remove_ports(self, lab: LabEnv) -> None:
        ns = lab.switch_netns
        for port in self.ports:
            try:
                netdev.delete_link(port.ifname, ns)
            except OSError as exc:
                log.warning("could not delete tap %s: %s", port.ifname, exc)
                continue
            lab.state.discard(Resource("link", port.ifname, netns=ns))
