"""A VNF made of a network namespace: two veths towards the switch and a loopback between them.

The loopback is VSPERF's GUEST_LOOPBACK, one value per VNF (the list repeats when shorter than
the number of VNFs): "linux_bridge" (a kernel bridge inside the namespace, the default) or
"testpmd" (dpdk-testpmd forwarding between AF_PACKET vdevs on the two veths, without hugepages
or PCI; its CPU, memory and mode are the GUEST_TESTPMD_* / TESTPMD_* settings of the DPDK VNF).
VSPERF's other loopbacks need a QEMU guest and are refused by name.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from vsperf.context import RunContext
from vsperf.dpdk.conf import DpdkLabConf
from vsperf.dpdk.eal import (
    dpdk_version,
    require_port_driver,
    require_testpmd,
    veth_vdev,
)
from vsperf.dpdk.testpmd import TestpmdProcess
from vsperf.errors import ConfigError, DeploymentError, PrerequisiteError
from vsperf.lab import netdev
from vsperf.lab.env import LabEnv
from vsperf.lab.state import Resource
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

    def __init__(self, settings: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(settings, ctx)
        self._lab: LabEnv | None = None
        self._index = 0
        self._ports: tuple[SwitchPort, ...] = ()
        self._inner: tuple[str, ...] = ()
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
                require_testpmd()
                require_port_driver("af_packet")

    def version(self) -> str:
        if self._loopback == "testpmd":
            return "DPDK " + dpdk_version(self.ctx.executor)
        return netdev.kernel_release()

    def details(self) -> dict[str, str]:
        return {"loopback": self._loopback or "none", "namespace": self._netns or ""}

    @property
    def _netns(self) -> str | None:
        return self._lab.names.vnf_netns(self._index) if self._lab else None

    @property
    def ports(self) -> tuple[SwitchPort, ...]:
        return self._ports

    def create(self, lab: LabEnv, index: int, mtu_bytes: int) -> tuple[SwitchPort, SwitchPort]:
        self._lab, self._index, self._mtu = lab, index, mtu_bytes
        self._loopback = loopback_for(self.settings, index)
        ns = netdev.create_netns(lab.state, lab.ctx.executor, lab.names.vnf_netns(index))
        ports: list[SwitchPort] = []
        inner: list[str] = []
        for side in (0, 1):
            outer_if, inner_if = lab.names.vnf_switch_if(index, side), lab.names.vnf_inner_if(index, side)
            netdev.create_veth(lab.state, inner_if, ns, outer_if, lab.switch_netns, mtu_bytes=mtu_bytes)
            ports.append(SwitchPort(f"vnf{index}.{side}", "veth", "vnf", ifname=outer_if))
            inner.append(inner_if)
        self._ports, self._inner = tuple(ports), tuple(inner)
        return ports[0], ports[1]

    def start(self) -> None:
        lab = self._require_lab()
        ns = lab.names.vnf_netns(self._index)
        if self._loopback == "linux_bridge":
            bridge = lab.names.vnf_bridge(self._index)
            netdev.create_bridge(lab.state, bridge, ns)
            for name in self._inner:
                netdev.enslave(name, bridge, ns)
            return
        conf = DpdkLabConf.from_settings(self.settings)
        cfg = conf.testpmd(
            file_prefix=f"{lab.names.tag}v{self._index}",
            cpu=conf.guest_cpu,
            vdevs=tuple(veth_vdev("af_packet", i, name) for i, name in enumerate(self._inner)),
            fwd_mode=conf.guest_fwd_mode_for(self._index),
            extra_args=conf.guest_args,
            max_pkt_len_bytes=self._mtu + _L2_OVERHEAD_BYTES,
        )
        self._testpmd = TestpmdProcess(
            lab, f"testpmd vnf{self._index}", cfg, log_path=lab.work_path(f"testpmd-vnf{self._index}.log"),
            netns=ns,
        )
        self._testpmd.start()
        self._testpmd.wait_links_up()

    def stop(self) -> None:
        if self._lab is None:
            return
        lab = self._lab
        if self._testpmd is not None:
            self._testpmd.stop()
            self._testpmd = None
        ns = lab.names.vnf_netns(self._index)
        # Deleting the namespace deletes the bridge and both veth pairs with it.
        for name in self._inner:
            lab.state.discard(Resource("link", name, netns=ns))
        lab.state.discard(Resource("link", lab.names.vnf_bridge(self._index), netns=ns))
        try:
            netdev.delete_netns(ns)
        except OSError as exc:
            log.warning("could not delete namespace %s: %s", ns, exc)
            return
        lab.state.discard(Resource("netns", ns))
        self._ports, self._inner = (), ()

    def pids(self) -> dict[str, int]:
        pid = self._testpmd.pid if self._testpmd else None
        return {self._testpmd.label: pid} if self._testpmd and pid else {}

    def check_alive(self) -> None:
        if self._testpmd is not None:
            self._testpmd.check_alive()

    def _require_lab(self) -> LabEnv:
        if self._lab is None:
            raise DeploymentError("netns VNF: start() called before create()")
        return self._lab
