"""A VNF without a VM: dpdk-testpmd on two virtio-user ports plays the guest of a PVP loop.

Where VSPERF booted a QEMU guest running testpmd behind two vhost-user ports, this VNF runs
testpmd on the host with `--vdev net_virtio_user<k>,path=<socket>`: to the switch, the two
vhost-user ports look exactly like a guest's virtio-net devices (same rings, same copies), only
the VM exits are missing. Needs a DPDK switch (ovs-dpdk).

Who creates the sockets follows VSWITCH_VHOSTUSER_SERVER_MODE: False (default) makes testpmd
the server (`server=1`) and OVS the client (dpdkvhostuserclient: OVS reconnects if the VNF
restarts); True makes OVS the server (dpdkvhostuser) and testpmd connects to it.

It runs on the switch's host (`vsperf.host.Host`: this machine, or a testbed's DUT host): its
sockets, process, log and DPDK runtime directory live there.

testpmd busy-polls one CPU (GUEST_TESTPMD_CPU); its rings hold TESTPMD_DESCRIPTORS frames
(1024 by default: with 256, frames are lost whenever the generator takes its CPU for a few ms).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any, ClassVar

from vsperf.dpdk.conf import DpdkLabConf
from vsperf.dpdk.eal import (
    TestpmdConfig,
    require_testpmd,
    virtio_user_vdev,
)
from vsperf.dpdk.testpmd import PortCounters, TestpmdProcess, TestpmdVersion
from vsperf.errors import DeploymentError
from vsperf.host.host import Host
from vsperf.vnf.base import Vnf
from vsperf.vnf.vhost import vhost_user_ports
from vsperf.vswitch.base import PortKind, SwitchPort


class TestpmdVhostVnf(TestpmdVersion, Vnf):
    """dpdk-testpmd on two vhost-user (virtio-user) ports: the guest of a PVP loop, without a VM."""

    __test__ = False  # not a pytest test class despite the name

    NAME: ClassVar[str] = "testpmd-vhost"
    PORT_KIND: ClassVar[PortKind] = "vhostuser"

    def __init__(self, settings: Mapping[str, Any], host: Host) -> None:
        super().__init__(settings, host)
        self.conf = DpdkLabConf.from_settings(settings)
        self._index = 0
        self._ports: tuple[SwitchPort, ...] = ()
        self._testpmd: TestpmdProcess | None = None
        self.final_counters: dict[int, PortCounters] = {}

    @property
    def label(self) -> str:
        return f"testpmd vnf{self._index}"

    def check_prerequisites(self) -> None:
        require_testpmd(self.host)

    def details(self) -> dict[str, str]:
        return {
            "loopback": "dpdk-testpmd on virtio-user (no VM)",
            "forwarding_mode": self.conf.guest_fwd_mode_for(self._index),
            "cpu": str(self.conf.guest_cpu),
            "vhost_user_sockets": "switch (dpdkvhostuser)" if self.conf.vhostuser_server_mode
            else "testpmd (dpdkvhostuserclient)",
            "descriptors": str(self.conf.testpmd_descriptors),
            "memory_mb": str(self.conf.testpmd_memory_mb),
        }

    @property
    def ports(self) -> tuple[SwitchPort, ...]:
        return self._ports

    def create(self, index: int, mtu_bytes: int, switch_netns: str | None) -> tuple[SwitchPort, SwitchPort]:
        self._index = index
        self._ports = vhost_user_ports(self.host, index)
        return self._ports

    def testpmd_config(self) -> TestpmdConfig:
        """The testpmd of this VNF: port 0 and port 1 forwarded to each other."""
        host = self.host
        server = not self.conf.vhostuser_server_mode
        vdevs = tuple(
            virtio_user_vdev(k, port.socket_path, server=server, queue_size=self.conf.testpmd_descriptors)
            for k, port in enumerate(self._ports)
        )
        return self.conf.testpmd(file_prefix=host.dpdk_file_prefix(f"t{self._index}"), cpu=self.conf.guest_cpu,
                                 vdevs=vdevs, fwd_mode=self.conf.guest_fwd_mode_for(self._index),
                                 extra_args=self.conf.guest_args)

    def start(self) -> None:
        host = self.host
        if not self._ports:
            raise DeploymentError(f"{self.label}: start() called before create()")
        # In server mode testpmd waits for the switch to connect before it forwards, and OVS
        # retries its connection every second or so: allow for a few retries.
        self._testpmd = TestpmdProcess(
            host, self.label, self.testpmd_config(),
            log_path=host.log_path(f"testpmd-vnf{self._index}.log"), ready_timeout_s=30.0,
        )
        self._testpmd.start()

    def counters(self, port: int) -> PortCounters:
        """Live counters of the VNF's port `port` (0 or 1)."""
        if self._testpmd is None:
            raise DeploymentError(f"{self.label}: not forwarding")
        return self._testpmd.counters(port)

    def stop(self) -> None:
        if self._testpmd is not None:
            self.final_counters = self._testpmd.stop()
            self._testpmd = None
        # testpmd as the vhost-user server leaves its socket files behind.
        if self._ports:
            self.host.remove_files([PurePosixPath(port.socket_path) for port in self._ports])

    def pids(self) -> dict[str, int]:
        pid = self._testpmd.pid if self._testpmd is not None else None
        return {self.label: pid} if pid is not None else {}

    def check_alive(self) -> None:
        if self._testpmd is not None:
            self._testpmd.check_alive()
