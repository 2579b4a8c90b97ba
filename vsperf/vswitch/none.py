"""No virtual switch: dpdk-testpmd forwards between the ports (VSPERF's `--vswitch none`).

VSPERF ran a packet forwarder (testpmd) between the NICs to measure the platform without a
switch. Here testpmd attaches the veth ends in the switch namespace with net_af_xdp (or
net_af_packet) and forwards port pairs in io (or mac/macswap) mode. The pairs come from the
forwarding plan: every rule's two ports form a pair, so p2p (phy0<->phy1) and pvp with a
veth VNF (phy0<->vnf0.0, vnf0.1<->phy1) both work; rules matching header fields or pushing
VLAN tags cannot be expressed and are refused.

testpmd's forwarding lcore busy-polls the first CPU of VSWITCH_PMD_CPU_MASK, the CPU an OVS
PMD thread would use, so `none` and `ovs-dpdk` results compare on equal terms.

testpmd runs on the switch's host (`vsperf.host.Host`: this machine, or a testbed's DUT host), in
the switch's namespace there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from vsperf.dpdk.conf import DpdkLabConf
from vsperf.dpdk.eal import (
    MAX_VETH_FRAME_BYTES,
    TestpmdConfig,
    check_veth_mtu,
    check_veth_queues,
    require_port_driver,
    require_testpmd,
    veth_vdev,
)
from vsperf.dpdk.testpmd import PortCounters, TestpmdProcess, TestpmdVersion
from vsperf.errors import ConfigError, DeploymentError
from vsperf.host.host import Host
from vsperf.vswitch.base import ForwardingPlan, PortKind, SwitchPort, VSwitch

LABEL = "testpmd"


def forwarding_pairs(plan: ForwardingPlan) -> list[tuple[SwitchPort, SwitchPort]]:
    """The port pairs testpmd must connect, in rule order, each pair in the plan's port order.

    DeploymentError when a rule cannot be expressed as "everything from A goes to B": a
    header match, a VLAN push, a port forwarding to itself, or a port in two pairs.
    """
    pairs: list[tuple[SwitchPort, SwitchPort]] = []
    partner: dict[str, str] = {}
    for rule in plan.rules:
        if rule.match or rule.push_vlan_id is not None:
            what = "match header fields" if rule.match else "push VLAN tags"
            raise DeploymentError(
                f"vswitch 'none' (testpmd forwarding) cannot {what} "
                f"(rule {rule.in_port} -> {rule.out_port}); use vswitch ovs or ovs-dpdk"
            )
        if rule.in_port == rule.out_port:
            raise DeploymentError(f"vswitch 'none' cannot send port {rule.in_port} back to itself")
        known = partner.get(rule.in_port), partner.get(rule.out_port)
        if known == (rule.out_port, rule.in_port):
            continue  # the reverse direction of a pair we have
        if known != (None, None):
            raise DeploymentError(
                f"vswitch 'none' connects ports in fixed pairs; {rule.in_port} -> {rule.out_port} "
                "would put a port in two pairs"
            )
        partner[rule.in_port], partner[rule.out_port] = rule.out_port, rule.in_port
        a, b = sorted((rule.in_port, rule.out_port), key=plan.port_number)
        pairs.append((plan.port(a), plan.port(b)))
    return pairs


class NoVSwitch(TestpmdVersion, VSwitch):
    """No vswitch: dpdk-testpmd forwards between the ports (AF_XDP or AF_PACKET)."""

    NAME: ClassVar[str] = "none"
    ALIASES: ClassVar[tuple[str, ...]] = ()
    PORT_KINDS: ClassVar[frozenset[PortKind]] = frozenset({"veth"})
    DEFAULT_VNF: ClassVar[str] = "netns"
    SUPPORTS_MATCH: ClassVar[bool] = False
    LAB_MAX_FRAME_BYTES: ClassVar[int | None] = MAX_VETH_FRAME_BYTES

    def __init__(self, settings: Mapping[str, Any], host: Host) -> None:
        super().__init__(settings, host)
        self.conf = DpdkLabConf.from_settings(settings)
        self._started = False
        self._netns: str | None = None  # the switch's namespace on its host
        self._testpmd: TestpmdProcess | None = None
        self.final_counters: dict[int, PortCounters] = {}

    def check_prerequisites(self) -> None:
        require_testpmd(self.host)
        if self.host.local:  # the PMDs of this machine's DPDK (a testbed host's: found when it starts)
            require_port_driver(self.conf.port_driver)
        # testpmd opens one queue per port: frames the lab's veth steers to another queue would be lost
        queues = int(self.settings["LAB_PORT_QUEUES"])
        check_veth_queues(self.conf.port_driver, queues, f"vswitch none: LAB_PORT_QUEUES={queues}")

    def check_vlan_support(self) -> None:
        """ConfigError: testpmd io forwarding cannot push VLAN tags (Frame Modification "vlan")."""
        raise ConfigError(
            "vswitch 'none' (testpmd forwarding) cannot push VLAN tags; use vswitch ovs or ovs-dpdk "
            "for VLAN frame modification tests"
        )

    def details(self) -> dict[str, str]:
        return {
            "forwarder": "dpdk-testpmd",
            "forwarding_mode": self.conf.testpmd_fwd_mode,
            "port_driver": f"net_{self.conf.port_driver}",
            "cpu": str(self.conf.switch_cpu),
            "memory_mb": str(self.conf.testpmd_memory_mb),
            "descriptors": str(self.conf.testpmd_descriptors),
        }

    def start(self, netns: str | None) -> None:
        # Nothing runs without ports: testpmd needs its devices on the command line, so it is
        # launched by `configure`.
        self._netns, self._started = netns, True

    def testpmd_config(self, plan: ForwardingPlan) -> TestpmdConfig:
        """The testpmd that connects the plan's pairs (vdevs ordered pair by pair)."""
        ports = [port for pair in forwarding_pairs(plan) for port in pair]
        vdevs = tuple(veth_vdev(self.conf.port_driver, i, port.ifname) for i, port in enumerate(ports))
        return self.conf.testpmd(file_prefix=self.host.dpdk_file_prefix("n"), cpu=self.conf.switch_cpu,
                                 vdevs=vdevs, fwd_mode=self.conf.testpmd_fwd_mode, extra_args=self.conf.testpmd_args)

    def configure(self, plan: ForwardingPlan) -> None:
        if not self._started:
            raise DeploymentError("vswitch none: configure() called before start()")
        if not plan.rules:
            return  # deployment "clean": nothing to forward
        check_veth_mtu(plan.mtu_bytes, "vswitch none")
        for port in plan.ports:
            if port.kind != "veth":
                raise DeploymentError(f"vswitch none cannot attach {port.kind} port {port.name}")
        self._testpmd = TestpmdProcess(
            self.host, LABEL, self.testpmd_config(plan), log_path=self.host.log_path("testpmd-none.log"),
            netns=self._netns,
        )
        self._testpmd.start()

    def counters(self, port: int) -> PortCounters:
        """Live counters of testpmd port `port` (ports numbered pair by pair)."""
        if self._testpmd is None:
            raise DeploymentError("vswitch none: not forwarding")
        return self._testpmd.counters(port)

    def stop(self) -> None:
        if self._testpmd is not None:
            self.final_counters = self._testpmd.stop()
            self._testpmd = None

    def pids(self) -> dict[str, int]:
        pid = self._testpmd.pid if self._testpmd is not None else None
        return {LABEL: pid} if pid is not None else {}

    def check_alive(self) -> None:
        if self._testpmd is not None:
            self._testpmd.check_alive()
