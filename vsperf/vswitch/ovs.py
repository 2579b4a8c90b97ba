"""Open vSwitch with the userspace datapath (datapath_type=netdev), as a private instance.

Each run starts its own ovsdb-server and ovs-vswitchd with OVS_RUNDIR/LOGDIR/DBDIR in the run's
directory /tmp/vsperf-RUNID-ovs of its host (`vsperf.host.Host`: this machine, or a testbed's DUT
host), every command through that host's executor. On the local lab it runs inside the run's
switch namespace (so the datapath's taps never meet those of another OVS on the machine); on a
testbed in the host's own namespace, where its cabled interfaces are (another userspace datapath
there is refused). The system's OVS, if any, is never contacted. Ports are the veth
ends in that namespace, attached as AF_XDP ("afxdp", the default: a PMD thread polls them) or
AF_PACKET ("system") netdevs. Flows are VSPERF's: "in_port=1 actions=output:2" and back, one
flow per stream for pre-installed flows, "mod_vlan_vid" towards the generator for VLAN tests.

`OvsDpdkVSwitch` (vsperf.vswitch.ovs_dpdk) subclasses this class and overrides
`vswitchd_binary`, `other_config`, `interface_config` and `vswitchd_start_timeout_s`.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any, ClassVar

from vsperf.errors import CommandError, DeploymentError, PrerequisiteError
from vsperf.host.host import Host
from vsperf.host.process import HostProcess
from vsperf.traffic.framemod import FRAME_MODIFICATIONS
from vsperf.traffic.tunnel import TUNNEL_KINDS
from vsperf.vswitch.base import ForwardingPlan, ForwardRule, PortKind, SwitchPort, VSwitch

log = logging.getLogger(__name__)

OVS_SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"
OVS_TOOLS = ("ovsdb-tool", "ovsdb-server", "ovs-vsctl", "ovs-ofctl", "ovs-appctl")
_STOP_TIMEOUT_S = 10.0
NORMAL_FLOW = "idle_timeout=0,priority=0,actions=NORMAL"  # VSWITCH_FLOW_MODE normal
_RESTART_PORTS_TIMEOUT_S = 20.0  # a restarted ovs-vswitchd re-attaches its ports
# OVS's AF_XDP umem frames are one page (OVS 3.1 has no multi-buffer), and native XDP on veth
# takes frames up to about a page: above this MTU, AF_XDP ports lose every frame.
_AFXDP_MAX_MTU = 3498
# The userspace datapath's own interface: one per network namespace, whichever OVS runs it.
NETDEV_IF = "ovs-netdev"


def rule_to_flow(rule: ForwardRule, plan: ForwardingPlan) -> str:
    """One ovs-ofctl flow for `rule` (ports numbered as VSPERF numbers them: phy0=1, phy1=2, ...)."""
    parts = [f"priority={rule.priority}"] if rule.priority else []
    parts.append(f"in_port={plan.port_number(rule.in_port)}")
    parts += [f"{key}={value}" for key, value in rule.match]
    actions = [f"mod_vlan_vid:{rule.push_vlan_id}"] if rule.push_vlan_id is not None else []
    actions += rule.modify
    actions.append(f"output:{plan.port_number(rule.out_port)}")
    return "idle_timeout=0," + ",".join(parts) + ",actions=" + ",".join(actions)


def plan_flows(plan: ForwardingPlan) -> list[str]:
    """Every flow of `plan`, in rule order."""
    return [rule_to_flow(rule, plan) for rule in plan.rules]


def parse_version(text: str) -> str:
    """'ovs-vswitchd (Open vSwitch) 3.1.0' -> '3.1.0' (the whole first line if unrecognised)."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    match = re.search(r"\)\s*(\S+)\s*$", first)
    return match.group(1) if match else first


class OvsVSwitch(VSwitch):
    """Open vSwitch, userspace datapath (netdev), private instance; AF_XDP or AF_PACKET ports."""

    NAME: ClassVar[str] = "ovs"
    ALIASES: ClassVar[tuple[str, ...]] = ("OvsVanilla",)
    PORT_KINDS: ClassVar[frozenset[PortKind]] = frozenset({"veth"})
    FRAME_MODIFICATIONS: ClassVar[frozenset[str]] = frozenset(FRAME_MODIFICATIONS)
    TUNNEL_TYPES: ClassVar[tuple[str, ...]] = TUNNEL_KINDS  # native tunnelling of the userspace datapath
    vswitchd_start_timeout_s: ClassVar[float] = 20.0

    def __init__(self, settings: Mapping[str, Any], host: Host) -> None:
        super().__init__(settings, host)
        self._started = False
        self._netns: str | None = None
        self._dir: PurePosixPath | None = None
        self._ovsdb: HostProcess | None = None
        self._vswitchd: HostProcess | None = None
        self._bridge: str | None = None
        self._version: str | None = None
        self._mtu = 1500
        self._configured: ForwardingPlan | None = None  # the plan restart() re-programs

    # --- override points (OVS-DPDK) ------------------------------------------------------

    def vswitchd_binary(self) -> str:
        """The ovs-vswitchd executable."""
        return str(self.settings["OVS_VSWITCHD"])

    def other_config(self) -> dict[str, str]:
        """Open_vSwitch other_config set before ovs-vswitchd starts."""
        mask = self.settings["VSWITCH_PMD_CPU_MASK"]
        return {"pmd-cpu-mask": str(mask)} if mask else {}

    def interface_config(self, port: SwitchPort, index: int) -> tuple[str, dict[str, str]]:
        """Interface type and options of `port` (the `index`-th port of the plan, 0-based)."""
        if port.kind != "veth":
            raise DeploymentError(f"{self.NAME} cannot attach {port.kind} port {port.name}; use ovs-dpdk")
        port_type, mode = self._port_type()
        # Native XDP on a tap drops about half of the frames here: a VM's taps are system ports.
        if port_type == "afxdp" and not port.tap:
            # One AF_XDP socket (and PMD rx queue) per queue of the veth (LAB_PORT_QUEUES).
            return "afxdp", {"xdp-mode": mode, "n_rxq": str(self.settings["LAB_PORT_QUEUES"])}
        return "system", {}

    def _port_type(self) -> tuple[str, str]:
        """(port type, xdp mode) actually used for the plan's MTU."""
        port_type = str(self.settings["VSWITCH_OVS_PORT_TYPE"])
        mode = str(self.settings["VSWITCH_OVS_AFXDP_MODE"])
        if port_type == "afxdp" and self._mtu > _AFXDP_MAX_MTU:
            # OVS's AF_XDP umem frames are one page: larger frames never arrive.
            return "system", ""
        return port_type, mode if port_type == "afxdp" else ""

    # --- helpers -------------------------------------------------------------------------

    @property
    def rundir(self) -> PurePosixPath:
        if self._dir is None:
            raise DeploymentError(f"{self.NAME}: not started")
        return self._dir

    def env(self) -> dict[str, str]:
        """Environment that points every OVS tool at the private instance."""
        d = str(self.rundir)
        return {"OVS_RUNDIR": d, "OVS_LOGDIR": d, "OVS_DBDIR": d, "OVS_SYSCONFDIR": d}

    def _run(self, argv: Sequence[str], *, timeout_s: float = 30.0, netns: str | None = None) -> str:
        try:
            proc = self.host.executor.run(argv, env=self.env(), timeout_s=timeout_s, netns=netns)
        except CommandError as exc:
            raise DeploymentError(f"{self.NAME}: {exc}") from exc
        return proc.stdout

    def vsctl(self, *args: str, timeout_s: float = 30.0) -> str:
        """ovs-vsctl against the private database."""
        return self._run(
            ["ovs-vsctl", f"--db=unix:{self.rundir / 'db.sock'}", f"--timeout={int(timeout_s)}", *args],
            timeout_s=timeout_s + 5,
        )

    def ofctl(self, *args: str) -> str:
        """ovs-ofctl against the private instance's bridges."""
        return self._run(["ovs-ofctl", *args])

    def ctl_socket(self, daemon: str) -> PurePosixPath:
        """Control socket of `daemon` ("ovs-vswitchd" or "ovsdb-server"): a fixed path, whatever
        the binary is called (the DPDK build would otherwise name it after itself)."""
        return self.rundir / f"{daemon}.ctl"

    def appctl(self, target: str, *args: str, timeout_s: float = 10.0) -> str:
        """ovs-appctl to `target` (ovs-vswitchd or ovsdb-server) of the private instance."""
        return self._run(
            ["ovs-appctl", f"--timeout={int(timeout_s)}", "-t", str(self.ctl_socket(target)), *args],
            timeout_s=timeout_s + 5,
        )

    def iface_name(self, port: SwitchPort, index: int) -> str:
        """OVS Interface name of `port`: its kernel name, or one made up for a socket port."""
        return port.ifname or f"{self._bridge or 'br'}x{index}"

    # --- VSwitch ---------------------------------------------------------------------------

    def check_prerequisites(self) -> None:
        missing = [t for t in (*OVS_TOOLS, self.vswitchd_binary()) if not self.host.which(t)]
        schema = self.host.executor.run(["test", "-e", OVS_SCHEMA], check=False, timeout_s=10).returncode == 0
        if missing or not schema:
            where = self.host.prefix
            raise PrerequisiteError(
                f"{where}Open vSwitch is missing ({', '.join(missing) or OVS_SCHEMA}): "
                "apt-get install openvswitch-switch" + ("" if self.host.local else " there")
            )
        self._check_pmd_mask()

    def _check_pmd_mask(self) -> None:
        """VSWITCH_PMD_CPU_MASK names CPUs the host has (an unknown CPU leaves ports unpolled)."""
        mask = str(self.settings["VSWITCH_PMD_CPU_MASK"] or "").strip()
        try:
            bits = int(mask, 16) if mask else 0
        except ValueError:
            raise PrerequisiteError(f"VSWITCH_PMD_CPU_MASK {mask!r} is not a hex CPU mask (e.g. '0x2')") from None
        missing = [cpu for cpu in range(bits.bit_length()) if bits >> cpu & 1 and cpu not in self.host.cpus()]
        if missing:
            where = "this machine" if self.host.local else f"host {self.host.name}"
            raise PrerequisiteError(f"VSWITCH_PMD_CPU_MASK {mask} names CPU {missing[0]}, which {where} does not have "
                                    f"(CPUs {', '.join(map(str, self.host.cpus()))}): run on a DUT host with it")

    def version(self) -> str:
        if self._version is None:
            try:
                out = self.host.executor.run([self.vswitchd_binary(), "--version"], timeout_s=10).stdout
            except CommandError as exc:
                return f"unknown ({exc})"
            self._version = parse_version(out)
        return self._version

    def details(self) -> dict[str, str]:
        info = {"datapath": "netdev (userspace)"}
        port_type, mode = self._port_type()
        info["port_type"] = port_type
        if mode:
            info["xdp_mode"] = mode
        if port_type != self.settings["VSWITCH_OVS_PORT_TYPE"]:
            info["note"] = f"AF_XDP ports cannot carry MTU {self._mtu}: AF_PACKET (system) ports used"
        return info

    def start(self, netns: str | None) -> None:
        self._started, self._netns = True, netns
        if netns is None:
            self._claim_userspace_datapath()
        # Short path: unix socket paths are limited to 108 bytes.
        d = self._dir = self.host.work_dir("ovs")
        self._run(["ovsdb-tool", "create", str(d / "conf.db"), OVS_SCHEMA])
        self._run(["ovsdb-server", str(d / "conf.db"), f"--remote=punix:{d / 'db.sock'}",
                   f"--pidfile={d / 'ovsdb-server.pid'}", f"--log-file={d / 'ovsdb-server.log'}",
                   f"--unixctl={self.ctl_socket('ovsdb-server')}", "--detach"], netns=netns)
        self._ovsdb = self.host.adopt("ovsdb-server", d / "ovsdb-server.pid", log_path=d / "ovsdb-server.log")
        self._link_ctl_socket("ovsdb-server", self._ovsdb.pid)
        self.vsctl("--no-wait", "init")
        config = self.other_config()
        if config:
            self.vsctl("--no-wait", "set", "Open_vSwitch", ".",
                       *[f"other_config:{k}={v}" for k, v in config.items()])
        self._start_vswitchd()

    def _claim_userspace_datapath(self) -> None:
        """In the host's own namespace (a testbed's DUT host): refuse a host where another OVS
        userspace datapath runs (the two would share its interface); record that interface (a
        killed ovs-vswitchd leaves it)."""
        listed = self.host.executor.run(["ip", "link", "show", "dev", NETDEV_IF], check=False, timeout_s=10)
        if listed.returncode == 0:
            raise DeploymentError(f"host {self.host.name}: another Open vSwitch runs a userspace datapath there "
                                  f"({NETDEV_IF} exists); stop it or use --vswitch linux-bridge")
        self.host.net.record_link(NETDEV_IF, None)

    def _start_vswitchd(self) -> None:
        d = self.rundir
        self._run(
            [self.vswitchd_binary(), f"unix:{d / 'db.sock'}", f"--pidfile={d / 'ovs-vswitchd.pid'}",
             f"--log-file={d / 'ovs-vswitchd.log'}", f"--unixctl={self.ctl_socket('ovs-vswitchd')}",
             "--detach"], netns=self._netns, timeout_s=self.vswitchd_start_timeout_s)
        self._vswitchd = self.host.adopt("ovs-vswitchd", d / "ovs-vswitchd.pid", log_path=d / "ovs-vswitchd.log")
        self._link_ctl_socket("ovs-vswitchd", self._vswitchd.pid)

    def _link_ctl_socket(self, daemon: str, pid: int) -> None:
        """`<daemon>.<pid>.ctl`, where `ovs-appctl -t <daemon>` looks for the control socket with
        OVS_RUNDIR set (env()): a shell step's bare ovs-appctl reaches this instance."""
        self._run(["ln", "-sf", f"{daemon}.ctl", str(self.rundir / f"{daemon}.{pid}.ctl")])

    def configure(self, plan: ForwardingPlan) -> None:
        self._require_started()
        if not plan.ports:
            return  # deployment "clean": the switch runs, no bridge
        bridge = self.host.names.bridge(0)
        self._bridge = bridge
        self.host.net.record_link(bridge, self._netns)  # a killed ovs-vswitchd leaves it
        self._mtu = plan.mtu_bytes
        port_type, _ = self._port_type()
        if port_type != self.settings["VSWITCH_OVS_PORT_TYPE"]:
            log.warning("MTU %d is too large for AF_XDP ports: ovs uses AF_PACKET (system) ports", self._mtu)
        args = ["add-br", bridge, "--", "set", "bridge", bridge, "datapath_type=netdev", "fail_mode=secure"]
        for index, port in enumerate(plan.ports):
            iface = self.iface_name(port, index)
            port_type, options = self.interface_config(port, index)
            args += ["--", "add-port", bridge, iface, "--", "set", "Interface", iface, f"type={port_type}",
                     f"ofport_request={index + 1}", f"mtu_request={plan.mtu_bytes}"]
            args += [f"options:{k}={v}" for k, v in options.items()]
        self.vsctl(*args, timeout_s=60.0)
        self._check_interfaces(plan)
        self._configured = plan
        self._program_flows(plan)

    def _program_flows(self, plan: ForwardingPlan) -> None:
        """Replace the bridge's flows with the plan's."""
        bridge = self._bridge or ""
        flows_file = self.rundir / "flows.txt"
        flows = plan_flows(plan)
        if str(self.settings["VSWITCH_FLOW_MODE"]) == "normal":
            # A learning switch: forwards by destination MAC, floods unknown ones (RFC 2889).
            flows = [NORMAL_FLOW]
        self.host.write_file(flows_file, "\n".join(flows) + "\n")
        self.ofctl("del-flows", bridge)
        self.ofctl("add-flows", bridge, str(flows_file))

    # --- DUT actions (RFC 2544 reset, RFC 2889) ----------------------------------------------

    def vswitchd_started(self) -> None:
        """Called when a restarted ovs-vswitchd runs, before its ports are checked (OVS-DPDK
        waits for DPDK here)."""

    def restart_daemon(self) -> None:
        """Restart ovs-vswitchd (`ovs-appctl exit`, then the same command as at start): bridges and
        ports come back from the database, flows do not (they live only in the daemon)."""
        self._require_started()
        old = self._vswitchd
        if old is None:
            raise DeploymentError(f"{self.NAME}: ovs-vswitchd is not running")
        try:
            self.appctl("ovs-vswitchd", "exit")
        except DeploymentError as exc:
            log.warning("ovs-vswitchd did not exit on request: %s", exc)
        if old.wait(_STOP_TIMEOUT_S) is None and old.alive():
            raise DeploymentError(f"{self.NAME}: ovs-vswitchd (pid {old.pid}) did not exit for the restart")
        self.host.stop_process(old)
        self._vswitchd = None
        self._start_vswitchd()
        self.vswitchd_started()

    def restart(self) -> None:
        """Restart ovs-vswitchd (`restart_daemon`) and re-program the flows. Returns once every
        port is attached again and the flows are in place."""
        self._require_started()
        plan = self._configured
        if plan is None or self._vswitchd is None:
            raise DeploymentError(f"{self.NAME}: nothing to restart (configure() not called)")
        self.restart_daemon()
        deadline = time.monotonic() + _RESTART_PORTS_TIMEOUT_S
        while True:
            try:
                self._check_interfaces(plan)
                break
            except DeploymentError:
                self.check_alive()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self._program_flows(plan)
        self.wait_ready()

    def forget_addresses(self) -> None:
        """Flush the bridge's MAC learning table (`ovs-appctl fdb/flush`); only NORMAL flows learn."""
        if self._bridge is None:
            raise DeploymentError(f"{self.NAME}: no bridge whose addresses to flush (configure() not called)")
        self.appctl("ovs-vswitchd", "fdb/flush", self._bridge)

    def _check_interfaces(self, plan: ForwardingPlan) -> None:
        out = self.vsctl("--format=csv", "--data=bare", "--no-headings", "--columns=name,ofport,error",
                         "list", "Interface")
        states = {}
        for line in out.strip().splitlines():
            name, ofport, error = [*line.split(",", 2), "", ""][:3]
            states[name] = (ofport, error.strip('"'))
        for index, port in enumerate(plan.ports):
            iface = self.iface_name(port, index)
            ofport, error = states.get(iface, ("", "not found"))
            if error or ofport != str(index + 1):
                problem = error or f"ofport {ofport}"
                raise DeploymentError(f"{self.NAME}: port {port.name} ({iface}) not attached: {problem}")

    def dump_flows(self) -> str:
        """The bridge's flows with their counters (for logs and tests)."""
        return self.ofctl("dump-flows", self._bridge) if self._bridge else ""

    def stop(self) -> None:
        if not self._started:
            return
        for proc, target, args in (
            (self._vswitchd, "ovs-vswitchd", ("exit", "--cleanup")),
            (self._ovsdb, "ovsdb-server", ("exit",)),
        ):
            if proc is None:
                continue
            if proc.alive():
                try:
                    self.appctl(target, *args)
                except DeploymentError as exc:
                    log.warning("%s did not exit on request: %s", target, exc)
                proc.wait(_STOP_TIMEOUT_S)
            self.host.stop_process(proc)  # by PID if it is still there; forgets the record either way
        self._vswitchd = self._ovsdb = None
        self._bridge = None
        self._configured = None
        self._started = False

    def pids(self) -> dict[str, int]:
        return {p.label: p.pid for p in (self._vswitchd, self._ovsdb) if p is not None}

    def bridges(self) -> tuple[str, ...]:
        return (self._bridge,) if self._bridge else ()

    def check_alive(self) -> None:
        for proc in (self._vswitchd, self._ovsdb):
            if proc is not None and not proc.alive():
                tail = proc.log_tail(3)
                raise DeploymentError(f"{proc.label} (pid {proc.pid}) died" + (f": {tail}" if tail else ""))

    def _require_started(self) -> None:
        if not self._started:
            raise DeploymentError(f"{self.NAME}: configure() called before start()")

