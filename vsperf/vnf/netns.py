"""A VNF made of a network namespace: two veths towards the switch and a loopback between them.

The loopback is VSPERF's GUEST_LOOPBACK, one value per VNF (the list repeats when shorter than
the number of VNFs): "linux_bridge" (a kernel bridge inside the namespace, the default) or
"testpmd" (dpdk-testpmd forwarding between AF_PACKET vdevs on the two veths, without hugepages
or PCI; its CPU, memory and mode are the GUEST_TESTPMD_* / TESTPMD_* settings of the DPDK VNF).
VSPERF's other loopbacks need a QEMU guest and are refused by name.

The namespace, veths and bridge are built through a `vsperf.vnf.host.VnfHost`: the local lab's
(`LabVnfHost`, netlink on this machine) or a testbed DUT host's
(`vsperf.testbed.vnf_host.TestbedVnfHost`, `ip` commands through its executor), and so is the
testpmd loopback's process (`VnfHost.spawn`: on the host, recorded by PID, stopped by PID).
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
from vsperf.errors import CommandError, ConfigError, DeploymentError, PrerequisiteError
from vsperf.lab import netdev
from vsperf.lab.env import LabEnv
from vsperf.lab.state import Resource
from vsperf.vnf.base import Vnf
from vsperf.vnf.host import LabProcessHost, VnfHost, VnfNames
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


class LabVnfHost(LabProcessHost):
    """The local lab as the host of a namespace VNF (`vsperf.vnf.host.VnfHost`): netlink on this
    machine, every namespace, link and process recorded in the run's state file before it exists."""

    @property
    def switch_netns(self) -> str | None:
        return self.lab.switch_netns

    def vnf_names(self, index: int) -> VnfNames:
        names = self.lab.names
        return VnfNames(names.vnf_netns(index), (names.vnf_switch_if(index, 0), names.vnf_switch_if(index, 1)),
                        (names.vnf_inner_if(index, 0), names.vnf_inner_if(index, 1)), names.vnf_bridge(index))

    def add_netns(self, name: str) -> None:
        netdev.create_netns(self.lab.state, self.executor, name)

    def add_veth(self, inner: str, netns: str, outer: str, *, mtu_bytes: int) -> None:
        netdev.create_veth(self.lab.state, inner, netns, outer, self.switch_netns, mtu_bytes=mtu_bytes)

    def add_bridge(self, name: str, netns: str, members: tuple[str, ...]) -> None:
        netdev.create_bridge(self.lab.state, name, netns)
        for member in members:
            netdev.enslave(member, name, netns)

    def remove(self, names: VnfNames) -> None:
        state = self.lab.state
        # Deleting the namespace deletes the bridge and both veth pairs with it.
        for name in names.inner_ifs:
            state.discard(Resource("link", name, netns=names.netns))
        state.discard(Resource("link", names.bridge, netns=names.netns))
        try:
            netdev.delete_netns(names.netns)
        except OSError as exc:
            raise DeploymentError(f"could not delete namespace {names.netns}: {exc}") from exc
        state.discard(Resource("netns", names.netns))

    def add_tap(self, name: str, *, mtu_bytes: int) -> None:
        ns = self.lab.switch_netns
        self.lab.state.add(Resource("link", name, netns=ns))
        try:
            self.executor.run(["ip", "-n", ns, "tuntap", "add", "dev", name, "mode", "tap"], timeout_s=30)
            self.executor.run(["ip", "-n", ns, "link", "set", "dev", name, "mtu", str(mtu_bytes), "up"],
                              timeout_s=30)
        except CommandError as exc:
            raise DeploymentError(f"cannot create tap {name}: {exc}") from exc

    def remove_tap(self, name: str) -> None:
        ns = self.lab.switch_netns
        try:
            netdev.delete_link(name, ns)
        except OSError as exc:
            log.warning("could not delete tap %s: %s", name, exc)
            return
        self.lab.state.discard(Resource("link", name, netns=ns))


class NetnsVnf(Vnf):
    """A network namespace forwarding between its two ports (kernel bridge or dpdk-testpmd)."""

    NAME: ClassVar[str] = "netns"
    PORT_KIND: ClassVar[PortKind] = "veth"

    def __init__(self, settings: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(settings, ctx)
        self._lab: LabEnv | None = None  # the local lab (None on a testbed host)
        self._host: VnfHost | None = None
        self._names: VnfNames | None = None
        self._built = False  # create_on began: stop has something to remove
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
                require_testpmd()
                require_port_driver("af_packet")

    def version(self) -> str:
        if self._loopback == "testpmd":
            return "DPDK " + dpdk_version(self.ctx.executor)
        if self._host is not None and self._lab is None:  # another host's kernel
            return self._host.executor.run(["uname", "-r"], timeout_s=10).stdout.strip()
        return netdev.kernel_release()

    def details(self) -> dict[str, str]:
        return {"loopback": self._loopback or "none", "namespace": self._names.netns if self._names else ""}

    @property
    def ports(self) -> tuple[SwitchPort, ...]:
        return self._ports

    def create(self, lab: LabEnv, index: int, mtu_bytes: int) -> tuple[SwitchPort, SwitchPort]:
        self._lab = lab
        return self.create_on(LabVnfHost(lab), index, mtu_bytes)

    def create_on(self, host: VnfHost, index: int, mtu_bytes: int) -> tuple[SwitchPort, SwitchPort]:
        """`create` on `host` (the local lab's, or a testbed DUT host's)."""
        self._host, self._index, self._mtu = host, index, mtu_bytes
        self._loopback = loopback_for(self.settings, index)
        names = self._names = host.vnf_names(index)
        self._built = True
        host.add_netns(names.netns)
        ports: list[SwitchPort] = []
        for side in (0, 1):
            host.add_veth(names.inner_ifs[side], names.netns, names.switch_ifs[side], mtu_bytes=mtu_bytes)
            ports.append(SwitchPort(f"vnf{index}.{side}", "veth", "vnf", ifname=names.switch_ifs[side]))
        self._ports = tuple(ports)
        return ports[0], ports[1]

    def start(self) -> None:
        if self._host is None or self._names is None:
            raise DeploymentError("netns VNF: start() called before create()")
        names = self._names
        if self._loopback == "linux_bridge":
            self._host.add_bridge(names.bridge, names.netns, names.inner_ifs)
            return
        host = self._host
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
        if self._host is None or self._names is None or not self._built:
            return
        if self._testpmd is not None:
            self._testpmd.stop()
            self._testpmd = None
        try:
            self._host.remove(self._names)
        except DeploymentError as exc:
            log.warning("%s", exc)
            return
        self._ports, self._built = (), False

    def pids(self) -> dict[str, int]:
        pid = self._testpmd.pid if self._testpmd else None
        return {self._testpmd.label: pid} if self._testpmd and pid else {}

    def check_alive(self) -> None:
        if self._testpmd is not None:
            self._testpmd.check_alive()
