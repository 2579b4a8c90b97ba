"""A private Open vSwitch (userspace datapath) on a testbed host, driven through its executor.

The local lab's `vsperf.vswitch.ovs` keeps its instance in a local work directory and adopts
its daemons by local pid files; on a testbed host everything is the host's: the instance lives
in /tmp/vsperf-RUNID-ovs there (removed at teardown, or by the next run after a killed one),
its two daemons are journaled by PID and start time as soon as they run (stopped at restore
when teardown could not), and every command is an `ovs-*` command run through the host's
executor with OVS_RUNDIR/OVS_LOGDIR/OVS_DBDIR pointing at that directory. The DUT's ports are
attached as `system` (AF_PACKET) ports with OpenFlow rules port 1 <-> port 2, as the lab's
p2p does; the datapath's bridge interface carries the name of the run's bridge.
"""

from __future__ import annotations

import logging
from pathlib import PurePosixPath

from vsperf.errors import CommandError, DeploymentError
from vsperf.testbed.session import TestbedSession

log = logging.getLogger(__name__)

OVS_SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"
# The userspace datapath's own interface on the host: one per host, whichever OVS instance runs it.
NETDEV_IF = "ovs-netdev"
_START_TIMEOUT_S = 60.0


def ovs_dir(run_id: str) -> PurePosixPath:
    """The instance's directory on the host (matches /tmp/vsperf-RUNID-*: see
    `vsperf.testbed.session.host_run_dirs_removal`)."""
    return PurePosixPath(f"/tmp/vsperf-{run_id}-ovs")


def p2p_flows(ports: int = 2) -> list[str]:
    """OpenFlow rules of p2p: every frame from port 1 leaves by port 2 and back."""
    if ports != 2:
        raise ValueError("p2p has two ports")
    return ["priority=1,in_port=1,actions=output:2", "priority=1,in_port=2,actions=output:1"]


class RemoteOvs:
    """ovsdb-server + ovs-vswitchd of the run on one testbed host."""

    def __init__(self, session: TestbedSession, host: str, run_id: str) -> None:
        self.session = session
        self.host = host
        self.dir = ovs_dir(run_id)
        self._daemons: dict[str, int] = {}  # label -> PID
        self._bridge: str | None = None

    def env(self) -> dict[str, str]:
        """Points every OVS tool at the private instance."""
        d = str(self.dir)
        return {"OVS_RUNDIR": d, "OVS_LOGDIR": d, "OVS_DBDIR": d, "OVS_SYSCONFDIR": d}

    def _run(self, *argv: str, timeout_s: float = 30.0) -> str:
        try:
            return self.session.executors[self.host].run(list(argv), env=self.env(), timeout_s=timeout_s).stdout
        except CommandError as exc:
            raise DeploymentError(f"host {self.host}: ovs: {exc}") from exc

    def _vsctl(self, *args: str) -> str:
        return self._run("ovs-vsctl", f"--db=unix:{self.dir / 'db.sock'}", "--timeout=30", *args, timeout_s=40.0)

    def version(self) -> str:
        """`ovs-vswitchd --version`'s first line on the host."""
        out = self._run("ovs-vswitchd", "--version", timeout_s=10.0)
        return out.splitlines()[0].rsplit(" ", 1)[-1] if out.strip() else "unknown"

    def start(self) -> None:
        """Create the database and start both daemons (each journaled once it runs)."""
        d = self.dir
        executor = self.session.executors[self.host]
        if executor.run(["ip", "link", "show", "dev", NETDEV_IF], check=False, timeout_s=10).returncode == 0:
            # Another OVS runs a userspace datapath there: a private one would share its interface.
            raise DeploymentError(f"host {self.host}: another Open vSwitch runs a userspace datapath there "
                                  f"({NETDEV_IF} exists); stop it or use --vswitch linux-bridge")
        # ovs-vswitchd creates it with the first netdev bridge; SIGKILLed, it leaves it behind.
        self.session.journal.record_link(self.host, NETDEV_IF)
        self._run("mkdir", "-p", "-m", "700", str(d))
        self._run("ovsdb-tool", "create", str(d / "conf.db"), OVS_SCHEMA)
        self._run("ovsdb-server", str(d / "conf.db"), f"--remote=punix:{d / 'db.sock'}",
                  f"--pidfile={d / 'ovsdb-server.pid'}", f"--log-file={d / 'ovsdb-server.log'}", "--detach")
        self._adopt("ovsdb-server")
        self._vsctl("--no-wait", "init")
        self._run("ovs-vswitchd", f"unix:{d / 'db.sock'}", f"--pidfile={d / 'ovs-vswitchd.pid'}",
                  f"--log-file={d / 'ovs-vswitchd.log'}", "--detach", timeout_s=_START_TIMEOUT_S)
        self._adopt("ovs-vswitchd")

    def _adopt(self, label: str) -> None:
        try:
            self._daemons[label] = self.session.adopt_daemon(self.host, str(self.dir / f"{label}.pid"), label)
        except (CommandError, ValueError) as exc:
            raise DeploymentError(f"host {self.host}: {label} did not start: {exc}") from exc

    def configure(self, bridge: str, interfaces: list[str], mtu_bytes: int) -> None:
        """Bridge `bridge` (userspace datapath) with `interfaces` as OpenFlow ports 1, 2, ..."""
        self._bridge = bridge
        args = ["add-br", bridge, "--", "set", "bridge", bridge, "datapath_type=netdev", "fail_mode=secure"]
        for index, iface in enumerate(interfaces):
            args += ["--", "add-port", bridge, iface, "--", "set", "Interface", iface, "type=system",
                     f"ofport_request={index + 1}", f"mtu_request={mtu_bytes}"]
        self._vsctl(*args)
        errors = self._vsctl("--format=csv", "--data=bare", "--no-headings", "--columns=name,ofport,error",
                             "list", "Interface")
        for line in errors.splitlines():
            name, ofport, *error = line.split(",")
            if name in interfaces and (ofport in ("", "-1") or any(e.strip() for e in error)):
                raise DeploymentError(f"host {self.host}: ovs cannot attach {name}: {','.join(error) or 'no ofport'}")
        self._run("ovs-ofctl", "del-flows", bridge)
        for flow in p2p_flows(len(interfaces)):
            self._run("ovs-ofctl", "add-flow", bridge, flow)

    def check_alive(self) -> None:
        """DeploymentError when ovs-vswitchd no longer answers."""
        self._run("ovs-appctl", "-t", "ovs-vswitchd", "version", timeout_s=10.0)

    def stop(self) -> None:
        """Both daemons exit (the datapath's interfaces go with --cleanup), the directory goes."""
        for label, args in (("ovs-vswitchd", ["exit", "--cleanup"]), ("ovsdb-server", ["exit"])):
            pid = self._daemons.pop(label, None)
            if pid is None:
                continue
            try:
                self._run("ovs-appctl", "-t", label, *args, timeout_s=20.0)
                self.session.forget_daemon(self.host, pid)
            except DeploymentError as exc:  # the session's restore stops it by its PID
                log.warning("%s", exc)
        try:
            self._run("rm", "-rf", "--", str(self.dir), timeout_s=20.0)
        except DeploymentError as exc:
            log.warning("%s", exc)
