"""A host for deployment unit tests: an Executor whose network, files and processes live in dicts.

`FakeMachine` answers the commands `vsperf.host` and the deployment backends run (`ip`, `bridge`,
`sysctl`, `ethtool`, `cat`, `mkdir`, `rm`, `test`, `command -v`, `uname`, `getconf`, the signal
script) the way Linux would, keeps every command it was given with its namespace (`calls`), and,
given the run's journal (`watch`), what the journal held when each command ran (`journal_at`):
a test can check that a thing was recorded before it existed. Programs it does not know answer
through `handlers` (argv[0]'s name -> a function of the argv: (exit code, stdout)), else exit 0.

`lab_hosts` and `cabled_hosts` build the `RunHosts` of a local lab (one host, `local`) and of a
testbed of two SSH-like hosts (`dut`, `gen`) on such machines, without connecting anywhere.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from vsperf.errors import CommandError
from vsperf.executor import Command, Executor, Process, Streams, TcpStream
from vsperf.host.host import Host
from vsperf.host.hosts import RunHosts
from vsperf.host.journal import Entry, Journal
from vsperf.host.names import RunNames
from vsperf.host.ports import read_port
from vsperf.remote.connection import HostLostError
from vsperf.testbed.model import Cable, DutPort, GenPortSpec, Testbed, TestbedHost

RUN_ID = "abc123"
Handler = Callable[[list[str]], tuple[int, str]]


@dataclass
class Link:
    """An interface of a FakeMachine."""

    name: str
    netns: str | None
    kind: str  # veth, bridge, tap, phys
    mac: str
    mtu: int = 1500
    up: bool = False
    carrier: bool = False
    master: str | None = None
    peer: tuple[str | None, str] | None = None  # a veth's other end (netns, name)
    addresses: list[str] = field(default_factory=list)
    options: list[str] = field(default_factory=list)  # what `ip link add` was given after the type

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"ifname": self.name, "mtu": self.mtu, "address": self.mac,
                                "flags": (["UP"] if self.up else []) + (["LOWER_UP"] if self.carrier else []),
                                "addr_info": [{"family": "inet", "local": a.split("/")[0],
                                               "prefixlen": int(a.split("/")[1])} for a in self.addresses]}
        if self.master:
            data["master"] = self.master
        return data


@dataclass
class FakeProc:
    """A process of a FakeMachine, known by PID and start time."""

    label: str
    pid: int
    start_ticks: int
    running: bool = True

    def stat(self) -> str:
        return f"{self.pid} ({self.label}) {'S' if self.running else 'Z'}" + " 0" * 16 + " 1 0 " + \
            f"{self.start_ticks} 0 0\n"


class FakePopen:
    """The executor's handle of a FakeMachine process: a signal ends it (writing the program's
    `final_outputs` to its log first)."""

    stdin = stdout = stderr = None

    def __init__(self, machine: FakeMachine, proc: FakeProc, log: str | None, code: int | None) -> None:
        self.machine, self.proc, self.log = machine, proc, log
        self.pid, self.start_ticks, self.host = proc.pid, proc.start_ticks, machine.name
        self.returncode = code
        self.signals: list[int] = []

    def poll(self) -> int | None:
        if self.returncode is None and not self.proc.running:
            self.returncode = -15
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        code = self.poll()
        if code is None:
            raise subprocess.TimeoutExpired(self.proc.label, timeout or 0)
        return code

    def communicate(self, input: bytes | None = None, timeout: float | None = None) -> tuple[Any, Any]:
        return None, None

    def send_signal(self, sig: int) -> None:
        self.signals.append(sig)
        if self.poll() is not None:
            return
        if self.log is not None:
            self.machine.files[self.log] = self.machine.files.get(self.log, "") + \
                self.machine.final_outputs.get(self.proc.label, "")
        self.proc.running = False
        self.returncode = -sig

    def terminate(self) -> None:
        self.send_signal(15)

    def kill(self) -> None:
        self.send_signal(9)


class FakeMachine(Executor):
    """See the module docstring."""

    def __init__(self, name: str, *, kernel: str = "6.1.0-test", cpus: int = 4, mac_prefix: str = "02:00:00") -> None:
        self.name = name
        self.kernel = kernel
        self.cpus = cpus
        self._mac_prefix = mac_prefix
        self._macs = 0
        self.namespaces: set[str] = set()
        self.links: dict[tuple[str | None, str], Link] = {}
        self.files: dict[str, str] = {}
        self.modes: dict[str, int | None] = {}
        self.dirs: set[str] = set()
        self.procs: dict[int, FakeProc] = {}
        self.absent: set[str] = set()  # programs `command -v` does not find
        self.devices: set[str] = set()  # device nodes that can be opened (/dev/kvm, /dev/vhost-net)
        self.handlers: dict[str, Handler] = {}
        self.outputs: dict[str, str] = {}  # program -> what it writes to its log when it starts
        self.final_outputs: dict[str, str] = {}  # program -> what it writes when signalled
        self.exits: dict[str, int] = {}  # program -> its exit code: it ends at once
        self.spawned: list[tuple[list[str], str | None]] = []  # (argv, netns) of every process started
        self.calls: list[tuple[tuple[str, ...], str | None]] = []  # (argv, netns)
        self.journal_at: list[list[Entry]] = []  # the watched journal's entries at each call
        self.watched: Journal | None = None
        self.up = True  # False: the host does not answer any more

    @property
    def host(self) -> str:
        return self.name

    # --- what tests set up and read ---------------------------------------------------------------

    def watch(self, journal: Journal) -> None:
        self.watched = journal

    def add_phys(self, name: str, mac: str = "02:00:00:00:00:01", *, up: bool = False, carrier: bool = True,
                 netns: str | None = None) -> Link:
        """An interface that exists already (a testbed's cabled port), in `netns`."""
        if netns is not None:
            self.namespaces.add(netns)
        link = self.links[(netns, name)] = Link(name, netns, "phys", mac, up=up, carrier=carrier)
        return link

    def add_proc(self, label: str, pid: int, start_ticks: int = 777) -> FakeProc:
        proc = self.procs[pid] = FakeProc(label, pid, start_ticks)
        return proc

    def commands(self) -> list[str]:
        """Every command as one line: `[spawn] ` first for a background one, then `[netns] `
        when it ran in one."""
        lines = []
        for argv, ns in self.calls:
            spawn = argv[:1] == ("[spawn]",)
            words = shlex.join(argv[1:] if spawn else argv)
            lines.append(("[spawn] " if spawn else "") + (f"[{ns}] " if ns else "") + words)
        return lines

    def index(self, prefix: str) -> int:
        """Position of the first command starting with `prefix` (ValueError when none)."""
        return next(i for i, c in enumerate(self.commands()) if c.startswith(prefix))

    def recorded_before(self, prefix: str, kind: str, name: str) -> bool:
        """True when the journal held (kind, name) of this host when command `prefix` ran."""
        at = self.journal_at[self.index(prefix)]
        return any((e.kind, e.host, e.name) == (kind, self.name, name) for e in at)

    def link(self, name: str, netns: str | None = None) -> Link:
        return self.links[(netns, name)]

    def remove_link(self, name: str, netns: str | None = None) -> None:
        """Interface `name` disappears (someone deleted it): its ports leave it, a veth's peer goes."""
        self._drop((netns, name))

    # --- Executor ---------------------------------------------------------------------------------

    def alive(self) -> bool:
        """False once the connection to the host is lost (`up` False: every command fails)."""
        return self.up

    def _complete(self, cmd: Command, timeout_s: float | None,
                  input_text: str | None) -> subprocess.CompletedProcess[str]:
        if not self.up:
            raise HostLostError(f"host {self.name}: connection lost")
        argv = list(cmd.argv)
        self.calls.append((cmd.argv, cmd.netns))
        self.journal_at.append(self.watched.entries() if self.watched is not None else [])
        code, out, err = self._answer(argv, cmd.netns)
        return subprocess.CompletedProcess(argv, code, out, err)

    def _start(self, cmd: Command, streams: Streams) -> Process:
        argv, log = list(cmd.argv), None
        if argv[:2] == ["sh", "-c"] and argv[2].startswith("f=$1; shift; exec"):  # Host.spawn's log wrapper
            log, argv = argv[4], argv[5:]
        self.calls.append((("[spawn]", *argv), cmd.netns))
        self.journal_at.append(self.watched.entries() if self.watched is not None else [])
        prog = PurePosixPath(argv[0]).name
        if prog in self.absent:
            raise CommandError(argv, 127, f"{prog}: not found")
        pid = 4000 + len(self.procs)
        proc = self.add_proc(prog, pid, start_ticks=5000 + pid)
        self.spawned.append((argv, cmd.netns))
        output = self.outputs.get(prog, "")
        if log is not None:
            self.files[log] = self.files.get(log, "") + output
        code = self.exits.get(prog)
        if code is not None:
            proc.running = False
        return FakePopen(self, proc, log, code)

    def put(self, local: Path, remote: PurePosixPath | str, *, mode: int | None = None) -> None:
        self.calls.append((("put", str(remote)), None))
        self.journal_at.append(self.watched.entries() if self.watched is not None else [])
        self.files[str(remote)] = local.read_text(encoding="utf-8", errors="replace")
        self.modes[str(remote)] = mode

    def get(self, remote: PurePosixPath | str, local: Path) -> None:
        local.write_text(self.files[str(remote)], encoding="utf-8")

    def open_tcp(self, port: int, *, netns: str | None = None, timeout_s: float = 5.0) -> TcpStream:
        raise ConnectionRefusedError(f"host {self.name}: nothing listens on {port}")

    # --- answers ----------------------------------------------------------------------------------

    def _answer(self, argv: list[str], netns: str | None) -> tuple[int, str, str]:
        prog = PurePosixPath(argv[0]).name
        if prog in self.handlers:
            code, out = self.handlers[prog](argv)
            return code, out, "" if code == 0 else f"{prog} failed"
        if prog == "ip":
            return self._ip(argv[1:], netns)
        if prog == "bridge" or prog in ("sysctl", "ethtool", "find", "true", "tc", "pkg-config"):
            return 0, "", ""
        if argv[:3] == ["sh", "-c", 'command -v "$1"']:
            return (1, "", "") if argv[-1] in self.absent else (0, f"/usr/bin/{argv[-1]}\n", "")
        if argv[:2] == ["sh", "-c"] and "kill -" in argv[2]:
            return self._signal(argv[2])
        if argv[:2] == ["sh", "-c"] and "/dev/kvm" in argv[2]:  # can /dev/kvm be opened?
            return (0 if "/dev/kvm" in self.devices else 1), "", ""
        if argv[:2] == ["sh", "-c"] and argv[2].startswith("printf"):
            self.files[argv[5]] = argv[4]
            return 0, "", ""
        if prog == "uname":
            return 0, f"{self.kernel}\n", ""
        if prog == "getconf":
            return 0, f"{self.cpus}\n", ""
        if prog == "grep" and argv[-1] == "/proc/self/status":
            return 0, f"Cpus_allowed_list:\t0-{self.cpus - 1}\n", ""
        if prog == "cat":
            return self._cat(argv[-1])
        if prog == "mkdir":
            self.dirs.add(argv[-1])
            return 0, "", ""
        if prog == "rm":
            for path in argv[argv.index("--") + 1:]:
                self.files.pop(path, None)
                self.dirs.discard(path)
                for name in [f for f in self.files if f.startswith(path + "/")]:
                    del self.files[name]
            return 0, "", ""
        if prog == "test":
            path = argv[-1]
            return (0 if path in self.files or path in self.dirs or path in self.devices else 1), "", ""
        if prog == "readlink":
            return 1, "", ""
        if prog in self.absent:
            return 127, "", f"{prog}: not found"
        return 0, "", ""

    def _cat(self, path: str) -> tuple[int, str, str]:
        parts = PurePosixPath(path).parts
        if len(parts) == 4 and parts[1] == "proc" and parts[2].isdigit() and parts[3] == "stat":
            proc = self.procs.get(int(parts[2]))
            return (0, proc.stat(), "") if proc is not None else (1, "", "No such file or directory")
        if path in self.files:
            return 0, self.files[path], ""
        return 1, "", f"cat: {path}: No such file or directory"

    def _signal(self, script: str) -> tuple[int, str, str]:
        words = script.split("kill -", 1)[1].split()
        pid = int(words[1].lstrip("-"))
        proc = self.procs.get(pid)
        if proc is not None and (f"= {proc.start_ticks} ]" in script or "[ \"$1\"" not in script):
            proc.running = False
        return 0, "", ""

    # --- ip ---------------------------------------------------------------------------------------

    def _mac(self) -> str:
        self._macs += 1
        return f"{self._mac_prefix}:{self._macs // 256:02x}:{self._macs % 256:02x}:ff"

    def _gone(self, what: str) -> tuple[int, str, str]:
        return 1, "", f'Cannot find device "{what}"'

    def _ip(self, args: list[str], netns: str | None) -> tuple[int, str, str]:
        as_json = details = False
        while args and args[0] in ("-n", "-j", "-d"):
            if args[0] == "-n":
                netns, args = args[1], args[2:]
            else:
                as_json, details = as_json or args[0] == "-j", details or args[0] == "-d"
                args = args[1:]
        if netns is not None and netns not in self.namespaces:
            return 1, "", f'Cannot open network namespace "{netns}": No such file or directory'
        obj, verb, rest = args[0], args[1] if len(args) > 1 else "show", args[2:]
        if obj == "netns":
            return self._netns(verb, rest)
        if obj == "link" and verb == "add":
            return self._link_add(rest, netns)
        if obj == "tuntap" and verb == "add":
            self.links[(netns, rest[1])] = Link(rest[1], netns, "tap", self._mac())
            return 0, "", ""
        if obj in ("link", "addr") and verb == "show":
            if "dev" not in rest:
                shown = [link.as_json() for (ns, _n), link in self.links.items() if ns == netns]
                return 0, json.dumps(shown) if as_json else "", ""
            link = self.links.get((netns, rest[rest.index("dev") + 1]))
            if link is None:
                return self._gone(rest[-1])
            return 0, json.dumps([link.as_json()]) if as_json else f"1: {link.name}\n", ""
        if obj == "link" and verb == "set":
            return self._link_set(rest, netns)
        if obj == "link" and verb == "del":
            return self._link_del(rest[-1], netns)
        if obj == "addr" and verb in ("add", "del"):
            link = self.links.get((netns, rest[-1]))
            if link is None:
                return self._gone(rest[-1])
            if verb == "add":
                link.addresses.append(rest[0])
            elif rest[0] in link.addresses:
                link.addresses.remove(rest[0])
            return 0, "", ""
        return 0, "", ""

    def _netns(self, verb: str, rest: list[str]) -> tuple[int, str, str]:
        if verb == "add":
            if rest[0] in self.namespaces:
                return 1, "", f'Cannot create namespace file "/run/netns/{rest[0]}": File exists'
            self.namespaces.add(rest[0])
            self.links[(rest[0], "lo")] = Link("lo", rest[0], "loopback", "00:00:00:00:00:00")
            return 0, "", ""
        if verb in ("del", "delete"):
            if rest[0] not in self.namespaces:
                return 1, "", f'Cannot remove namespace file "/run/netns/{rest[0]}": No such file or directory'
            self.namespaces.discard(rest[0])
            for key in [k for k in self.links if k[0] == rest[0]]:
                self._drop(key)
            return 0, "", ""
        if verb == "pids":
            return (0, "", "") if rest[0] in self.namespaces else (1, "", "No such file or directory")
        return 0, "".join(f"{ns}\n" for ns in sorted(self.namespaces)), ""

    def _link_add(self, rest: list[str], netns: str | None) -> tuple[int, str, str]:
        if rest[0] == "name":  # a bridge
            name = rest[1]
            if (netns, name) in self.links:
                return 1, "", "RTNETLINK answers: File exists"
            self.links[(netns, name)] = Link(name, netns, rest[3], self._mac(), options=rest[4:])
            return 0, "", ""
        a, peer_at = rest[0], rest.index("peer")
        b = rest[peer_at + 2]
        mtu = int(rest[rest.index("mtu") + 1]) if "mtu" in rest else 1500
        b_ns = netns
        if "netns" in rest[peer_at:]:
            target = rest[peer_at:][rest[peer_at:].index("netns") + 1]
            b_ns = None if target == "1" else target
        if (netns, a) in self.links or (b_ns, b) in self.links:
            return 1, "", "RTNETLINK answers: File exists"
        self.links[(netns, a)] = Link(a, netns, "veth", self._mac(), mtu=mtu, carrier=True, peer=(b_ns, b),
                                      options=rest[1:peer_at])
        self.links[(b_ns, b)] = Link(b, b_ns, "veth", self._mac(), mtu=mtu, carrier=True, peer=(netns, a))
        return 0, "", ""

    def _link_set(self, rest: list[str], netns: str | None) -> tuple[int, str, str]:
        name = rest[1] if rest[0] == "dev" else rest[0]
        link = self.links.get((netns, name))
        if link is None:
            return self._gone(name)
        if "master" in rest:
            link.master = rest[rest.index("master") + 1]
        if "nomaster" in rest:
            link.master = None
        if "mtu" in rest:
            link.mtu = int(rest[rest.index("mtu") + 1])
        if rest[-1] in ("up", "down"):
            link.up = rest[-1] == "up"
        return 0, "", ""

    def _link_del(self, name: str, netns: str | None) -> tuple[int, str, str]:
        if (netns, name) not in self.links:
            return self._gone(name)
        self._drop((netns, name))
        return 0, "", ""

    def _drop(self, key: tuple[str | None, str]) -> None:
        link = self.links.pop(key, None)
        if link is None:
            return
        if link.peer is not None:
            self.links.pop(link.peer, None)
        for other in self.links.values():
            if other.master == link.name and other.netns == link.netns:
                other.master = None


def fake_hosts(machines: Mapping[str, FakeMachine], testbed: Testbed, tmp_path: Path, *,
               run_id: str = RUN_ID, results_dir: Path | None = None) -> RunHosts:
    """The run's hosts on `machines` (one per host of `testbed`), its journal under `tmp_path`,
    every machine watching it; the cabled ports read as `RunHosts.open` checks them."""
    journal = Journal(run_id, root=tmp_path / "state")
    names = RunNames(run_id)
    hosts = RunHosts(testbed, {n: Host(n, m, names, journal, results_dir=results_dir) for n, m in machines.items()},
                     journal)
    for machine in machines.values():
        machine.watch(journal)
    for cable in testbed.cables:
        for host, ifname in ((testbed.dut_host, cable.dut.interface),
                             (testbed.trafficgen_host, cable.trafficgen.interface)):
            if ifname is not None and (None, ifname) in machines[host].links:
                hosts.checked[(host, ifname)] = read_port(machines[host], ifname)
    for machine in machines.values():
        machine.calls.clear()
        machine.journal_at.clear()
    return hosts


def lab_hosts(tmp_path: Path, *, run_id: str = RUN_ID) -> tuple[RunHosts, FakeMachine]:
    """The local lab on a FakeMachine named `local`."""
    machine = FakeMachine("local")
    return fake_hosts({"local": machine}, Testbed.local(), tmp_path, run_id=run_id), machine


def two_cables() -> tuple[Cable, Cable]:
    """dut:ens1 - gen:p0 and dut:ens2 - gen:p1."""
    return tuple(Cable(DutPort(d, None, "kernel"), GenPortSpec(g, None))  # type: ignore[return-value]
                 for d, g in (("ens1", "p0"), ("ens2", "p1")))


def cabled_hosts(tmp_path: Path, cables: Sequence[Cable] | None = None, *,
                  run_id: str = RUN_ID) -> tuple[RunHosts, FakeMachine, FakeMachine]:
    """A testbed `lab.yaml` of hosts `dut` and `gen` (SSH-like FakeMachines): dut's ens1, ens2
    (down) cabled to gen's p0 (up) and p1 (down), or `cables`."""
    dut, gen = FakeMachine("dut", mac_prefix="02:00:0d"), FakeMachine("gen", mac_prefix="02:00:0e")
    dut.add_phys("ens1", "02:00:00:00:00:01")
    dut.add_phys("ens2", "02:00:00:00:00:02")
    gen.add_phys("p0", "02:00:00:00:01:01", up=True)
    gen.add_phys("p1", "02:00:00:00:01:02")
    testbed = Testbed("lab.yaml", (TestbedHost("dut"), TestbedHost("gen")), "dut", "gen",
                      tuple(cables) if cables is not None else two_cables())
    return fake_hosts({"dut": dut, "gen": gen}, testbed, tmp_path, run_id=run_id), dut, gen


class FakeOvs:
    """A private Open vSwitch on a FakeMachine that does what it is told: its daemons write their
    pid files and run until `ovs-appctl ... exit`; `add-br` makes the bridge (and ovs-vswitchd
    its datapath's `ovs-netdev`) in the namespace the daemon runs in; every port it is given is
    attached and polled. `version` answers `--version` of any OVS binary."""

    PIDS: ClassVar[dict[str, int]] = {"ovsdb-server": 4101, "ovs-vswitchd": 4102}

    def __init__(self, machine: FakeMachine, version: str = "ovs-vswitchd (Open vSwitch) 3.1.0\n") -> None:
        self.machine = machine
        self.version = version
        self.netns: str | None = None  # where ovs-vswitchd runs
        self.ifaces: list[str] = []
        self.bridge: str | None = None
        self.restarts = 0
        for prog in ("ovsdb-tool", "ovsdb-server", "ovs-vswitchd", "ovs-vswitchd-dpdk", "ovs-vsctl", "ovs-appctl",
                     "ovs-ofctl"):
            machine.handlers[prog] = self.answer

    def _daemon(self, label: str, argv: list[str]) -> tuple[int, str]:
        pidfile = next(a.split("=", 1)[1] for a in argv if a.startswith("--pidfile="))
        pid = self.PIDS[label] + 10 * self.restarts
        self.machine.add_proc(label, pid, start_ticks=900 + pid)
        self.machine.files[pidfile] = f"{pid}\n"
        if label == "ovs-vswitchd":
            self.netns = self.machine.calls[-1][1]
            if self.bridge is not None:  # the database keeps the bridge: it comes back
                self._make_links()
        return 0, ""

    def _make_links(self) -> None:
        for name in ("ovs-netdev", self.bridge or ""):
            self.machine.links[(self.netns, name)] = Link(name, self.netns, "tap", "02:00:00:0f:0f:0f", up=True)

    def _exit(self, label: str) -> None:
        for proc in self.machine.procs.values():
            if proc.label == label:
                proc.running = False
        if label == "ovs-vswitchd":
            self.restarts += 1
            for name in ("ovs-netdev", self.bridge or ""):
                self.machine.links.pop((self.netns, name), None)

    def answer(self, argv: list[str]) -> tuple[int, str]:
        prog = PurePosixPath(argv[0]).name
        if argv[-1] == "--version":
            return 0, self.version
        if prog in ("ovsdb-server", "ovs-vswitchd", "ovs-vswitchd-dpdk"):
            return self._daemon("ovsdb-server" if prog == "ovsdb-server" else "ovs-vswitchd", argv)
        if prog == "ovs-vsctl":
            if "add-br" in argv:
                self.bridge = argv[argv.index("add-br") + 1]
                self.ifaces = [argv[i + 2] for i, a in enumerate(argv) if a == "add-port"]
                self._make_links()
            if "dpdk_initialized" in argv:
                return 0, "true\n"
            if argv[-2:] == ["list", "Interface"]:
                return 0, "".join(f"{n},{i + 1},\n" for i, n in enumerate(self.ifaces))
            return 0, ""
        if prog == "ovs-appctl":
            target = PurePosixPath(argv[argv.index("-t") + 1]).name.split(".")[0]
            if "exit" in argv:
                self._exit(target)
                return 0, ""
            if "dpif-netdev/pmd-rxq-show" in argv:
                return 0, "".join(f"  port: {i}  queue-id:  0 (enabled)   pmd usage:  0 %\n" for i in self.ifaces)
            return 0, ""
        return 0, ""

    def running(self) -> set[str]:
        return {p.label for p in self.machine.procs.values() if p.running and p.label in self.PIDS}
