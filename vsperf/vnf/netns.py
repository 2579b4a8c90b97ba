"""A VNF made of a network namespace: two veths towards the switch and a loopback between them.

The loopback is VSPERF's GUEST_LOOPBACK, one value per VNF (the list repeats when shorter than
the number of VNFs): "linux_bridge" (a kernel bridge inside the namespace, the default) or
"testpmd" (dpdk-testpmd forwarding between AF_PACKET vdevs on the two veths, without hugepages
or PCI; its CPU, memory and mode are the GUEST_TESTPMD_* / TESTPMD_* settings of the DPDK VNF).
VSPERF's other loopbacks need a QEMU guest and are refused by name.

The namespace, veths and bridge are made on the switch's host (`vsperf.host.Host`: this machine,
or a testbed's DUT host; `ip` commands through its executor, each recorded in the run's journal),
and so is the testpmd loopback's process (`Host.spawn`: recorded by PID, stopped by PID).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from vsperf.dpdk.conf import DpdkLabConf
from vsperf.dpdk.eal import (
    dpdk_version,
    require_port_driver,
    require_testpmd,
    veth_vdev,
)
from vsperf.dpdk.testpmd import TestpmdProcess
from vsperf.errors import ConfigError, DeploymentError, PrerequisiteError, VsperfError
from vsperf.host.host import Host
from vsperf.host.names import VnfNames
from vsperf.vnf.base import Vnf
from vsperf.vswitch.base import PortKind, SwitchPort

log = logging.getLogger(__name__)

LOOPBACKS = ("linux_bridge", "testpmd")
VSPERF_GUEST_ONLY = ("l2fwd", "buildin", "clean")  # VSPERF loopbacks that need a VM image
_L2_OVERHEAD_BYTES = 18  # Ethernet header + FCS


def loopback_for(settings: Mapping[str, Any], index: int) -> str:
    """GUEST_LOOPBACK of VNF `index` (a list repeats; a plain string applies to every VNF)."""
    raw = settings["GUEST_LOOPBACK"]
    values: Sequence[str] = [raw] if isinstance(raw, str) else list(raw)
    if not values:
        values = ["linux_bridge"]
    value = str(values[index % len(values)])
    if value in VSPERF_GUEST_ONLY:
        raise ConfigError(
            f"GUEST_LOOPBACK {value!r} is not available with the netns VNF (it needs a VM); "
            f"use one of {', '.join(LOOPBACKS)}"
        )
    if value not in LOOPBACKS:
        raise ConfigError(f"unknown GUEST_LOOPBACK {value!r}; valid: {', '.join(LOOPBACKS)}")
    return value


class NetnsVnf(Vnf):
    """A network namespace forwarding between its two ports (kernel bridge or dpdk-testpmd)."""

    NAME: ClassVar[str] = "netns"
    PORT_KIND: ClassVar[PortKind] = "veth"

    def __init__(self, settings: Mapping[str, Any], host: Host) -> None:
        super().__init__(settings, host)
        self._names: VnfNames | None = None
        self._switch_netns: str | None = None
        self._built = False  # create began: stop has something to remove
        self._index = 0
        self._ports: tuple[SwitchPort, ...] = ()
        self._loopback: str | None = None
        self._testpmd: TestpmdProcess | None = None
        self._mtu = 1500

    def check_prerequisites(self) -> None:
        raw = self.settings["GUEST_LOOPBACK"]
        values = [raw] if isinstance(raw, str) else list(raw)
        for index in range(max(1, len(values))):
            try:
                loopback = loopback_for(self.settings, index)
            except ConfigError as exc:
                raise PrerequisiteError(str(exc)) from exc
            if loopback == "testpmd":
                require_testpmd(self.host)
                if self.host.local:  # this machine's DPDK PMDs (a testbed host's: found when it starts)
                    require_port_driver("af_packet")

    def version(self) -> str:
        if self._loopback == "testpmd":
            return "DPDK " + dpdk_version(self.host.executor)
        return self.host.kernel_release()

    def details(self) -> dict[str, str]:
        return {"loopback": self._loopback or "none", "namespace": self._names.netns if self._names else ""}

    @property
    def ports(self) -> tuple[SwitchPort, ...]:
        return self._ports

    @property
    def shell_netns(self) -> str | None:
        return self._names.netns if self._names else None

    def create(self, index: int, mtu_bytes: int, switch_netns: str | None) -> tuple[SwitchPort, SwitchPort]:
        self._index, self._mtu, self._switch_netns = index, mtu_bytes, switch_netns
        self._loopback = loopback_for(self.settings, index)
        names = self._names = self.host.names.vnf(index)
        net = self.host.net
        net.add_netns(names.netns)
        self._built = True  # only now: a namespace that could not be made (someone's) is never deleted
        ports: list[SwitchPort] = []
        for side in (0, 1):
            net.add_veth(names.inner_ifs[side], names.netns, names.switch_ifs[side], switch_netns,
                         mtu_bytes=mtu_bytes)
            ports.append(SwitchPort(f"vnf{index}.{side}", "veth", "vnf", ifname=names.switch_ifs[side]))
        self._ports = tuple(ports)
        return ports[0], ports[1]

    def start(self) -> None:
        if self._names is None:
            raise DeploymentError("netns VNF: start() called before create()")
        names, host = self._names, self.host
        if self._loopback == "linux_bridge":
            host.net.add_bridge(names.bridge, names.netns, names.inner_ifs)
            return
        conf = DpdkLabConf.from_settings(self.settings)
        cfg = conf.testpmd(
            file_prefix=host.dpdk_file_prefix(f"v{self._index}"),
            cpu=conf.guest_cpu,
            vdevs=tuple(veth_vdev("af_packet", i, name) for i, name in enumerate(names.inner_ifs)),
            fwd_mode=conf.guest_fwd_mode_for(self._index),
            extra_args=conf.guest_args,
            max_pkt_len_bytes=self._mtu + _L2_OVERHEAD_BYTES,
        )
        self._testpmd = TestpmdProcess(
            host, f"testpmd vnf{self._index}", cfg, log_path=host.log_path(f"testpmd-vnf{self._index}.log"),
            netns=names.netns,
        )
        self._testpmd.start()
        self._testpmd.wait_links_up()

    def stop(self) -> None:
        if self._names is None or not self._built:
            return
        if self._testpmd is not None:
            self._testpmd.stop()
            self._testpmd = None
        names, net = self._names, self.host.net
        try:
            # The veths first: deleting a pair is synchronous, while a namespace's interfaces go
            # with it in the kernel's own time (its switch ends would linger a moment).
            for outer in names.switch_ifs:
                net.del_link(outer, self._switch_netns)
            net.forget_link(names.bridge, names.netns)
            net.del_netns(names.netns)
        except VsperfError as exc:  # the journal keeps it: the teardown's release deletes it
            log.warning("could not delete VNF %d's namespace %s: %s", self._index, names.netns, exc)
            return
        self._ports, self._built = (), False

    def pids(self) -> dict[str, int]:
        pid = self._testpmd.pid if self._testpmd else None
        return {self._testpmd.label: pid} if self._testpmd and pid else {}

    def check_alive(self) -> None:
        if self._testpmd is not None:
            self._testpmd.check_alive()
