"""A host in memory for the unit tests of vsperf.host: an Executor whose commands act on a small
model of a Linux machine (processes, network namespaces, links, directories, files, a sysfs tree)
and are all kept, in order, with the namespace they ran in. What it does not model answers from
`answers` (argv -> stdout; exit 1 when absent), so a test sees every command it did not expect.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any, ClassVar

import pytest

from vsperf.executor import Command, Executor, Process, Streams, TcpStream
from vsperf.host import hosts as hosts_module
from vsperf.host.pci import TreeSysFs
from vsperf.remote.connection import SshHost

Result = tuple[int, str, str]  # exit code, stdout, stderr
_KILL_RE = re.compile(r"kill -(\d+) -(\d+)")
_TICKS_RE = re.compile(r'\[ "\$1" = (\d+) \]')


@dataclass
class FakeProc:
    """A process of the machine: what /proc/PID/stat says of it."""

    pid: int
    start_ticks: int
    netns: str | None = None
    name: str = "sleep"
    state: str = "S"
    threads: int = 1
    survives_term: bool = False  # ignores SIGTERM (a SIGKILL is needed)

    def stat_line(self) -> str:
        rest = [self.state, *["0"] * 16, str(self.threads), "0", str(self.start_ticks), "0"]
        return f"{self.pid} ({self.name}) {' '.join(rest)}\n"


class FakeMachine(Executor):
    """One machine (see the module docstring); `alive` False plays an SSH host that is gone."""

    def __init__(self, name: str = "local", *, answers: Mapping[tuple[str, ...], str] | None = None,
                 sysfs: TreeSysFs | None = None) -> None:
        self.name = name
        self.answers = dict(answers or {})
        self.sysfs = sysfs
        self.commands: list[tuple[tuple[str, ...], str | None]] = []
        self.failing: dict[tuple[str, ...], str] = {}  # argv prefix -> stderr of its failure (exit 2)
        self.procs: dict[int, FakeProc] = {}
        self.netns: set[str] = set()
        self.links: dict[str, str | None] = {}  # interface -> its namespace (None: the host's)
        self.peers: dict[str, str] = {}  # a veth end -> the other end
        self.dirs: set[str] = set()
        self.files: dict[str, str] = {}
        self.signals: list[tuple[int, int]] = []  # (pid, signal) delivered
        self.connected = True
        self._next_pid = 4000

    # --- the Executor contract ------------------------------------------------------------------

    @property
    def host(self) -> str:
        return self.name

    def alive(self) -> bool:
        return self.connected

    def _complete(self, cmd: Command, timeout_s: float | None,
                  input_text: str | None) -> subprocess.CompletedProcess[str]:
        self.commands.append((cmd.argv, cmd.netns))
        argv = list(cmd.argv)
        failure = next((err for prefix, err in self.failing.items() if tuple(argv[:len(prefix)]) == prefix), None)
        code, out, err = (2, "", failure) if failure is not None else self._do(argv, cmd.netns)
        return subprocess.CompletedProcess(argv, code, out, err)

    def _start(self, cmd: Command, streams: Streams) -> Process:
        self.commands.append((cmd.argv, cmd.netns))
        proc = self.add_process(netns=cmd.netns, name=PurePosixPath(cmd.argv[0]).name)
        return FakePopen(self, proc.pid)

    def put(self, local: Path, remote: PurePosixPath | str, *, mode: int | None = None) -> None:
        self.commands.append((("put", str(local), str(remote), oct(mode or 0)), None))
        self.files[str(remote)] = local.read_text()

    def get(self, remote: PurePosixPath | str, local: Path) -> None:
        local.write_text(self.files[str(remote)])

    def open_tcp(self, port: int, *, netns: str | None = None, timeout_s: float = 5.0) -> TcpStream:
        raise ConnectionRefusedError(f"host {self.name}: nothing listens on port {port}")

    # --- the model ------------------------------------------------------------------------------

    def add_process(self, *, netns: str | None = None, name: str = "sleep", start_ticks: int | None = None,
                    survives_term: bool = False) -> FakeProc:
        self._next_pid += 1
        proc = FakeProc(self._next_pid, start_ticks or 100_000 + self._next_pid, netns, name,
                        survives_term=survives_term)
        self.procs[proc.pid] = proc
        return proc

    def add_port(self, ifname: str, *, qdiscs: list[dict[str, Any]] | None = None, up: bool = True,
                 carrier: bool = True, mtu: int = 1500, addresses: tuple[str, ...] = (), master: str | None = None,
                 xdp: bool = False) -> None:
        """An existing interface (a testbed's port): what `ip -j -d addr show` and `tc -j qdisc
        show` print of it (a kernel default root qdisc unless `qdiscs` says otherwise)."""
        flags = ["BROADCAST", *(["UP"] if up else []), *(["LOWER_UP"] if carrier else [])]
        link: dict[str, Any] = {"ifname": ifname, "flags": flags, "mtu": mtu, "addr_info": [
            {"family": "inet", "local": a.split("/")[0], "prefixlen": int(a.split("/")[1])} for a in addresses]}
        link.update({"master": master} if master else {})
        link.update({"xdp": {"mode": 1}} if xdp else {})
        self.answers[("ip", "-j", "-d", "addr", "show", "dev", ifname)] = json.dumps([link])
        default = [{"kind": "noqueue", "handle": "0:", "root": True}]
        self.answers[("tc", "-j", "qdisc", "show", "dev", ifname)] = json.dumps(default if qdiscs is None else qdiscs)
        self.links.setdefault(ifname, None)

    def ran(self, *prefix: str) -> list[tuple[str, ...]]:
        """The commands run that start with `prefix`, in order."""
        return [argv for argv, _ns in self.commands if argv[:len(prefix)] == prefix]

    def _signal(self, pid: int, sig: int) -> None:
        proc = self.procs.get(pid)
        if proc is None:
            return
        self.signals.append((pid, sig))
        if sig == signal.SIGKILL or (sig != 0 and not proc.survives_term):
            del self.procs[pid]

    def _do(self, argv: list[str], netns: str | None) -> Result:
        if netns is not None and netns not in self.netns:
            return 1, "", f'Cannot open network namespace "{netns}": No such file or directory'
        if argv[:1] == ["ip"]:
            return self._ip(argv[1:])
        handler = _COMMANDS.get(argv[0]) if argv else None
        if handler is not None:
            result = handler(self, argv)
            if result is not None:
                return result
        out = self.answers.get(tuple(argv))
        return (0, out, "") if out is not None else (1, "", f"{argv[0]}: No such file or directory")

    def _cat(self, argv: list[str]) -> Result | None:
        path = argv[-1]
        match = re.fullmatch(r"/proc/(\d+)/stat", path)
        if match:
            proc = self.procs.get(int(match.group(1)))
            return (0, proc.stat_line(), "") if proc else (1, "", f"cat: {path}: No such file or directory")
        if self._in_tree(path):
            assert self.sysfs is not None
            text = self.sysfs.read(PurePosixPath(path))
            return (0, text + "\n", "") if text is not None else (1, "", f"cat: {path}: No such file or directory")
        if path in self.files:
            return 0, self.files[path], ""
        return None

    def _sh(self, argv: list[str]) -> Result | None:
        script = argv[2]
        kill = _KILL_RE.search(script)
        if kill:
            sig, pid = int(kill.group(1)), int(kill.group(2))
            ticks = _TICKS_RE.search(script)
            proc = self.procs.get(pid)
            if proc is not None and (ticks is None or int(ticks.group(1)) == proc.start_ticks):
                self._signal(pid, sig)
            return 0, "", ""
        if script.startswith("printf"):  # ExecutorSysFs.write
            if self._in_tree(argv[5]):
                assert self.sysfs is not None
                self.sysfs.write(PurePosixPath(argv[5]), argv[4])
            elif argv[5] in self.files:
                self.files[argv[5]] = argv[4] + "\n"
            else:
                return 1, "", f"sh: 1: cannot create {argv[5]}: No such file or directory"
            return 0, "", ""
        return None

    def _in_tree(self, path: str) -> bool:
        """PCI devices and drivers are the sysfs tree's; other files (kernel settings) `files`."""
        return self.sysfs is not None and path.startswith("/sys/bus/")

    def _sysctl(self, argv: list[str]) -> Result:
        return 0, "", ""

    def _kill(self, argv: list[str]) -> Result:
        self._signal(int(argv[-1]), signal.SIGKILL)
        return 0, "", ""

    def _test(self, argv: list[str]) -> Result:
        path = argv[-1]
        there = path in self.dirs or path in self.files
        if self._in_tree(path):
            assert self.sysfs is not None
            there = self.sysfs.exists(PurePosixPath(path))
        return (0 if there else 1), "", ""

    def _readlink(self, argv: list[str]) -> Result:
        name = self.sysfs.link_name(PurePosixPath(argv[-1])) if self.sysfs is not None else None
        return (0, f"../../../bus/pci/drivers/{name}\n", "") if name else (1, "", "")

    def _ls(self, argv: list[str]) -> Result:
        entries = self.sysfs.listdir(PurePosixPath(argv[-1])) if self.sysfs is not None else []
        return 0, "".join(f"{e}\n" for e in entries), ""

    def _mkdir(self, argv: list[str]) -> Result:
        self.dirs.add(argv[-1])
        return 0, "", ""

    def _rm(self, argv: list[str]) -> Result:
        for path in argv[argv.index("--") + 1:]:
            self.files.pop(path, None)
            self.dirs.discard(path)
            for inside in [p for p in (*self.files, *self.dirs) if p.startswith(path + "/")]:
                self.files.pop(inside, None)
                self.dirs.discard(inside)
        return 0, "", ""

    # --- ip ---------------------------------------------------------------------------------------

    def _ip(self, args: list[str]) -> Result:
        ns: str | None = None
        if args[:1] == ["-n"]:
            ns, args = args[1], args[2:]
            if ns not in self.netns:
                return 1, "", f'Cannot open network namespace "{ns}": No such file or directory'
        if args[:1] == ["netns"]:
            return self._ip_netns(args[1:])
        as_json = args[:1] == ["-j"]
        args = args[1:] if as_json else args
        if args[:2] == ["link", "add"]:
            return self._link_add(args[2:], ns)
        if args[:2] == ["tuntap", "add"]:
            return self._new_link(args[3], ns)
        if args[:3] == ["link", "del", "dev"]:
            return self._link_del(args[3], ns)
        if args[:3] == ["link", "set", "dev"] or args[:2] in (["addr", "add"], ["addr", "del"], ["neigh", "replace"]):
            name = args[args.index("dev") + 1]
            there = name == "lo" or self.links.get(name, "?") == ns  # every namespace has its loopback
            return (0, "", "") if there else (1, "", f'Cannot find device "{name}"')
        if as_json and args[:3] == ["link", "show", "dev"]:
            name = args[3]
            if self.links.get(name, "?") != ns:
                return 1, "", f'Device "{name}" does not exist.'
            return 0, json.dumps([{"ifname": name, "address": mac_of(name)}]), ""
        out = self.answers.get(("ip", *(["-n", ns] if ns else []), *(["-j"] if as_json else []), *args))
        return (0, out, "") if out is not None else (1, "", f"ip {' '.join(args)}: not modelled")

    def _ip_netns(self, args: list[str]) -> Result:
        what, name = args[0], args[1] if len(args) > 1 else ""
        if what == "list":
            return 0, "".join(f"{n}\n" for n in sorted(self.netns)), ""
        if what == "add":
            if name in self.netns:
                return 1, "", f'Cannot create namespace file "/run/netns/{name}": File exists'
            self.netns.add(name)
            return 0, "", ""
        if name not in self.netns:
            return 1, "", f'Cannot open network namespace "{name}": No such file or directory'
        if what == "pids":
            return 0, "".join(f"{p.pid}\n" for p in self.procs.values() if p.netns == name), ""
        self.netns.discard(name)  # del: its interfaces go with it, and a veth's other end
        for link in [link for link, where in self.links.items() if where == name]:
            self._drop_link(link)
        return 0, "", ""

    def _new_link(self, name: str, ns: str | None) -> Result:
        if name in self.links:
            return 2, "", "RTNETLINK answers: File exists"
        self.links[name] = ns
        return 0, "", ""

    def _link_add(self, args: list[str], ns: str | None) -> Result:
        if args[0] == "name":  # a bridge
            return self._new_link(args[1], ns)
        a = args[0]
        peer = args[args.index("peer") + 2]
        peer_ns = ns
        if "netns" in args[args.index("peer"):]:
            where = args[len(args) - 1 - args[::-1].index("netns") + 1]
            peer_ns = None if where == "1" else where
        code = self._new_link(a, ns)
        if code[0] == 0:
            self.links[peer] = peer_ns
            self.peers[a], self.peers[peer] = peer, a
        return code

    def _drop_link(self, name: str) -> None:
        self.links.pop(name, None)
        peer = self.peers.pop(name, None)
        if peer is not None:
            self.links.pop(peer, None)
            self.peers.pop(peer, None)

    def _link_del(self, name: str, ns: str | None) -> Result:
        if self.links.get(name, "?") != ns:
            return 1, "", f'Cannot find device "{name}"'
        self._drop_link(name)
        return 0, "", ""


_COMMANDS: dict[str, Callable[[FakeMachine, list[str]], Result | None]] = {
    "cat": FakeMachine._cat, "sh": FakeMachine._sh, "kill": FakeMachine._kill, "test": FakeMachine._test,
    "readlink": FakeMachine._readlink, "ls": FakeMachine._ls, "mkdir": FakeMachine._mkdir, "rm": FakeMachine._rm,
    "sysctl": FakeMachine._sysctl,
}


def mac_of(ifname: str) -> str:
    """The MAC address the machine gives interface `ifname` (the same name, the same address)."""
    digits = f"{sum(map(ord, ifname)) & 0xFFFFFF:06x}"
    return f"02:00:00:{digits[0:2]}:{digits[2:4]}:{digits[4:6]}"


class FakePopen:
    """The executor's handle of a process `FakeMachine` started (a `Process`)."""

    stdin: IO[bytes] | None = None
    stdout: IO[bytes] | None = None
    stderr: IO[bytes] | None = None

    def __init__(self, machine: FakeMachine, pid: int) -> None:
        self.machine = machine
        self.pid = pid
        self.host = machine.name
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None and self.pid not in self.machine.procs:
            last = [s for p, s in self.machine.signals if p == self.pid]
            self.returncode = -last[-1] if last else 0
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        code = self.poll()
        if code is None:
            raise subprocess.TimeoutExpired("fake", timeout or 0)
        return code

    def communicate(self, input: bytes | None = None, timeout: float | None = None) -> tuple[Any, Any]:
        return None, None

    def send_signal(self, sig: int) -> None:
        self.machine._signal(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class RemoteMachine(FakeMachine):
    """A machine reached over SSH: `RunHosts.open` connects to it and closes it.

    After `install`, `SshExecutor(ssh_host, command_log)` inside vsperf.host.hosts returns the
    prepared machine of that host's name (as it is: its state is the test's)."""

    prepared: ClassVar[dict[str, RemoteMachine]] = {}

    def __new__(cls, *args: Any, **kwargs: Any) -> RemoteMachine:
        if args and isinstance(args[0], SshHost):
            return cls.prepared[args[0].name]
        return super().__new__(cls)

    def __init__(self, name: str | SshHost, command_log: Any = None, **kwargs: Any) -> None:
        if isinstance(name, SshHost):
            return  # a prepared machine, handed out by __new__
        super().__init__(name, **kwargs)
        self.connects = 0
        self.closes = 0

    def connect(self) -> None:
        self.connects += 1

    def close(self) -> None:
        self.closes += 1


def install(monkeypatch: pytest.MonkeyPatch, local: FakeMachine | None, *remote: RemoteMachine) -> None:
    """Make `RunHosts.open` use `local` for the host `local` and each of `remote` for the SSH
    host of its name."""
    monkeypatch.setattr(hosts_module, "LocalExecutor", lambda command_log=None: local)
    monkeypatch.setattr(RemoteMachine, "prepared", {m.name: m for m in remote})
    monkeypatch.setattr(hosts_module, "SshExecutor", RemoteMachine)
