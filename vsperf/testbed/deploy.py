"""A deployment on a testbed's hosts: the DUT host's switch between its existing, cabled ports.

What runs today: p2p with the Linux bridge, or a private Open vSwitch with the userspace
datapath (`vsperf.testbed.ovs`), on the DUT host. The bridge is the one interface vsperf creates
there (recorded in the run's journal before it exists, so the next run deletes it after a
SIGKILL or a lost host; OVS's daemons are journaled too, by PID and start time). The DUT's
ports are the testbed's own interfaces, never created, renamed or deleted: their state is
recorded, they are brought up (MTU for the frame size) and attached, and teardown puts them
back as they were (`vsperf.testbed.ports`). Every command goes through the host's executor
(SSH, or this machine for a host `local`): `ip` and `ovs-*` commands, not the local lab's
netlink, because the DUT may be another machine.

The generator ports are the generator host's ends of the cables, in the root namespace of
that host; frames carry their MAC addresses and the test's 198.18.0.0/15 addresses (nothing
is configured on them but link state and MTU).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from vsperf.deployment import ComponentInfo, Deployment, GenPort
from vsperf.errors import CommandError, DeploymentError
from vsperf.executor import CommandLog
from vsperf.lab.deploy import mtu_for
from vsperf.lab.state import DEFAULT_STATE_ROOT
from vsperf.plan import PlannedTest
from vsperf.sysinfo import port_details
from vsperf.testbed.file import load_testbed
from vsperf.testbed.model import Cable
from vsperf.testbed.ovs import RemoteOvs
from vsperf.testbed.session import TestbedSession
from vsperf.traffic import Traffic

log = logging.getLogger(__name__)

DEPLOYMENTS = ("p2p",)  # what a testbed deploys today
VSWITCHES = ("linux-bridge", "ovs")
TRAFFICGENS = ("vsgen",)  # generators that run on the generator host (dummy simulates: nothing deployed)


def bridge_name(run_id: str) -> str:
    """The DUT's bridge: the run id in its name (15 characters at most, an interface name)."""
    return f"vsperf{run_id}b0"[:15]


def unsupported_on_testbed(plan: Iterable[PlannedTest]) -> str | None:
    """Why a planned test cannot run on a testbed yet (None: every one can); checked before
    anything is created."""
    for pt in plan:
        if pt.simulated:
            continue  # the simulated generator deploys nothing
        why = ""
        if pt.traffic_only or pt.hold:
            why = "--mode trafficgen* on a testbed is not implemented"
        elif pt.test.deployment not in DEPLOYMENTS:
            why = f"deployment {pt.test.deployment} (only {', '.join(DEPLOYMENTS)} deploys on a testbed)"
        elif pt.vswitch not in VSWITCHES:
            why = f"vswitch {pt.vswitch} (only {' and '.join(VSWITCHES)} deploy on a testbed)"
        elif pt.trafficgen not in TRAFFICGENS:
            why = f"traffic generator {pt.trafficgen} (only {', '.join(TRAFFICGENS)} or dummy runs on a testbed)"
        elif pt.test.frame_modification or pt.test.load:
            why = "frame modification and CPU/memory load are not implemented on a testbed"
        if why:
            return f"test {pt.test.name}: {why}"
    return None


def dut_tools(plan: Iterable[PlannedTest]) -> dict[str, str]:
    """Programs the DUT host needs for the plan's testbed deployments (program -> Debian package)."""
    tools: dict[str, str] = {}
    for pt in plan:
        if pt.simulated:
            continue
        tools["ip"] = "iproute2"  # (ethtool, for the report's port details, is optional)
        if pt.vswitch == "ovs":
            tools.update({t: "openvswitch-switch" for t in
                          ("ovsdb-tool", "ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ovs-ofctl", "ovs-appctl")})
    return tools


def missing_tools(session: TestbedSession, tools: Mapping[str, str]) -> str | None:
    """The first program of `tools` the DUT host lacks, as a one-line fix (None: all there)."""
    for tool, package in tools.items():
        # A fixed script; the program's name is its argument, never part of the script.
        found = session.dut.run(["sh", "-c", 'command -v "$1"', "sh", tool], check=False, timeout_s=10)
        if found.returncode != 0:
            return f"host {session.testbed.dut_host}: {tool} is missing: apt-get install {package} there"
    return None


class TestbedDeployment(Deployment):
    """p2p on the testbed: the DUT host's switch (linux-bridge or ovs) joins its first two ports."""

    __test__ = False

    def __init__(self, name: str, session: TestbedSession, *, run_id: str, traffic: Traffic,
                 vswitch: str = "linux-bridge") -> None:
        if name not in DEPLOYMENTS:
            raise DeploymentError(f"deployment {name} is not implemented on a testbed (only p2p)")
        if vswitch not in VSWITCHES:
            raise DeploymentError(f"vswitch {vswitch} does not deploy on a testbed (only {' and '.join(VSWITCHES)})")
        cables = [c for c in session.testbed.cables if c.dut.interface and c.trafficgen.interface]
        if len(cables) < 2:
            raise DeploymentError(f"testbed {session.testbed.path}: p2p needs two ports that are kernel interfaces "
                                  f"on both hosts, the file has {len(cables)}")
        self.name = name
        self.session = session
        self.traffic = traffic
        self.cables: tuple[Cable, Cable] = (cables[0], cables[1])
        self.bridge = bridge_name(run_id)
        self.vswitch = vswitch
        self._ovs = RemoteOvs(session, session.testbed.dut_host, run_id) if vswitch == "ovs" else None
        self._ports: tuple[GenPort, ...] = ()
        self._version = ""

    @property
    def _dut_host(self) -> str:
        return self.session.testbed.dut_host

    @property
    def _gen_host(self) -> str:
        return self.session.testbed.trafficgen_host

    def _dut_ifs(self) -> list[str]:
        return [str(c.dut.interface) for c in self.cables]

    def _gen_ifs(self) -> list[str]:
        return [str(c.trafficgen.interface) for c in self.cables]

    def deploy(self) -> None:
        mtu = mtu_for(self.traffic)
        dut, session = self.session.dut, self.session
        try:
            for dut_if, gen_if in zip(self._dut_ifs(), self._gen_ifs(), strict=True):
                session.use_port(self._gen_host, gen_if, mtu_bytes=mtu)
                session.use_port(self._dut_host, dut_if, mtu_bytes=mtu)
            if self._ovs is not None:
                # The datapath's bridge interface is OVS's; journaled too, in case OVS is killed.
                session.journal.record_link(self._dut_host, self.bridge)
                self._ovs.start()
                self._ovs.configure(self.bridge, self._dut_ifs(), mtu)
                self._version = self._ovs.version()
            else:
                # STP off and no forward delay: the ports forward as soon as the bridge is up.
                session.create_link(self._dut_host, ["ip", "link", "add", "name", self.bridge, "type", "bridge",
                                                     "stp_state", "0", "forward_delay", "0"], self.bridge)
                for dut_if in self._dut_ifs():
                    dut.run(["ip", "link", "set", "dev", dut_if, "master", self.bridge], timeout_s=10)
                dut.run(["ip", "link", "set", "dev", self.bridge, "up"], timeout_s=10)
                self._version = dut.run(["uname", "-r"], timeout_s=10).stdout.strip()
            macs = [self._mac(gen_if) for gen_if in self._gen_ifs()]
        except CommandError as exc:
            raise DeploymentError(f"deploying {self.name} on the testbed: {exc}") from exc
        ips = (self.traffic.l3.srcip, self.traffic.l3.dstip)
        self._ports = tuple(
            GenPort(netns=None, ifname=gen_if, mac=macs[i], ipv4=ips[i], peer_mac=macs[1 - i], peer_ipv4=ips[1 - i])
            for i, gen_if in enumerate(self._gen_ifs()))
        log.info("testbed: host %s bridges %s with %s %s; generator ports %s on host %s", self._dut_host,
                 " and ".join(self._dut_ifs()), self.vswitch, self.bridge, " and ".join(self._gen_ifs()),
                 self._gen_host)

    def _mac(self, ifname: str) -> str:
        out = self.session.trafficgen.run(["ip", "-j", "link", "show", "dev", ifname], timeout_s=10).stdout
        links = json.loads(out or "[]")
        if not links or "address" not in links[0]:
            raise DeploymentError(f"host {self._gen_host}: no MAC address for interface {ifname}")
        return str(links[0]["address"])

    def teardown(self) -> None:
        """Stop the switch, delete the bridge and put every port back (a lost host's are left to
        the next run)."""
        if self._ovs is not None and self.session.reachable(self._dut_host):
            self._ovs.stop()
        for done in self.session.restore():
            log.debug("testbed teardown: %s", done)
        self._ports = ()

    @property
    def gen_ports(self) -> Sequence[GenPort]:
        return self._ports

    def check_alive(self) -> None:
        """The DUT host still answers and the bridge is still there (HostLostError names the
        host when its SSH connection is gone)."""
        proc = self.session.dut.run(["ip", "link", "show", "dev", self.bridge], check=False, timeout_s=10)
        if proc.returncode != 0:
            raise DeploymentError(f"host {self._dut_host}: bridge {self.bridge} is gone")
        if self._ovs is not None:
            self._ovs.check_alive()

    def components(self) -> list[ComponentInfo]:
        """The bridge and the DUT's ports (driver, firmware, PCI address as ethtool reports them)."""
        details = {"host": self._dut_host, "bridges": self.bridge}
        if self._ovs is not None:
            details.update({"datapath": "netdev (userspace)", "port type": "system (AF_PACKET)"})
        info = [ComponentInfo("vswitch", self.vswitch, self._version or "unknown", details)]
        for i, (dut_if, gen_if) in enumerate(zip(self._dut_ifs(), self._gen_ifs(), strict=True)):
            details = port_details(self.session.dut, dut_if)
            driver = details.pop("driver", "unknown")
            info.append(ComponentInfo("port", f"port {i}", driver, {
                "host": self._dut_host, "interface": dut_if, "cabled to": f"{self._gen_host}:{gen_if}", **details}))
        return info


def open_run_session(settings: Mapping[str, Any], plan: Iterable[PlannedTest], *, run_id: str,
                     command_log: CommandLog, state_root: Path = DEFAULT_STATE_ROOT) -> TestbedSession | None:
    """The run's session on its testbed (hosts connected, ports checked), when the run has a
    testbed and deploys on it; None otherwise. The caller closes it (that restores the ports)."""
    if not settings["TESTBED"] or all(pt.simulated for pt in plan):
        return None
    return TestbedSession.open(load_testbed(Path(settings["TESTBED"])), run_id=run_id, state_root=state_root,
                               command_log=command_log)
