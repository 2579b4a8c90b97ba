"""The receive agent of the trafgen generator, on the generator host (this machine or a testbed's).

vsperf does not load its counting tc program (`vsperf.trafficgen.trafgen.rxcount`) itself: a BPF
program lives as long as the file descriptors of the process that loaded it, and `tc` attaches
only programs it loads from an object file. So this script (with `bpf.py` beside it: on another
host, copies of both in the run's directory there) is run on the generator host, in the namespace
of the ports it serves, with the host's python3, standard library only
(`vsperf.trafficgen.trafgen.agent_client` starts it). It holds the maps and programs, attaches them
with its own netlink requests, and answers one line per command line on its standard input (pipes
to vsperf on this machine, the SSH channel on another host):

    map SLOTS            -> ok FD            an array map of SLOTS u64 counters
    attach FD IF HEX     -> ok               load program HEX (it counts into map FD) at IF's ingress
    read FD              -> ok N0 N1 ...     the map's counters
    tx IF                -> ok N             IF's tx_packets + tx_dropped (/proc/net/dev)
    paced IF             -> ok               IF's root qdisc is vsperf's pacer: deleted at exit
    detach IF            -> ok               remove IF's clsact qdisc (and with it the program)

Errors answer `error MESSAGE`. At the end of its input (vsperf closed it, or died, or lost its
SSH connection) it removes every clsact and pacer it knows and exits, so nothing
of it stays on the ports.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import sys
from collections.abc import Callable, Iterable

try:
    from vsperf.trafficgen.trafgen import bpf
except ImportError:  # on the generator host: bpf.py was copied beside this file
    import bpf  # type: ignore[import-not-found,no-redef]

RTM_NEWQDISC, RTM_DELQDISC, RTM_NEWTFILTER = 36, 37, 44
NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE = 0x1, 0x4, 0x200, 0x400
NLMSG_ERROR = 2
TCA_KIND, TCA_OPTIONS = 1, 2
TCA_BPF_CLASSID, TCA_BPF_FD, TCA_BPF_NAME, TCA_BPF_FLAGS = 3, 6, 7, 8
TCA_BPF_FLAG_ACT_DIRECT = 1
TC_H_ROOT = 0xFFFFFFFF
TC_H_CLSACT = 0xFFFFFFF1
TC_H_INGRESS_FILTER = 0xFFFFFFF2  # TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS)
CLSACT_HANDLE = 0xFFFF0000
ETH_P_ALL_BE = 0x0300  # htons(ETH_P_ALL) as the kernel reads it on a little-endian host
FILTER_PRIO = 1
PROGRAM_NAME = "vsperf_rx"


def rtattr(kind: int, payload: bytes) -> bytes:
    """One netlink attribute, padded to 4 bytes."""
    data = struct.pack("=HH", 4 + len(payload), kind) + payload
    return data + b"\0" * (-len(data) % 4)


def tc_message(msg_type: int, flags: int, ifindex: int, handle: int, parent: int, info: int,
               attrs: Iterable[bytes], seq: int = 1) -> bytes:
    """A netlink request carrying a `struct tcmsg` and its attributes."""
    body = struct.pack("=BBHiIII", socket.AF_UNSPEC, 0, 0, ifindex, handle, parent, info) + b"".join(attrs)
    return struct.pack("=IHHII", 16 + len(body), msg_type, flags | NLM_F_REQUEST | NLM_F_ACK, seq, 0) + body


def clsact_message(msg_type: int, ifindex: int) -> bytes:
    """Add (RTM_NEWQDISC) or delete (RTM_DELQDISC) the clsact qdisc of `ifindex`."""
    flags = NLM_F_CREATE | NLM_F_EXCL if msg_type == RTM_NEWQDISC else 0
    return tc_message(msg_type, flags, ifindex, CLSACT_HANDLE, TC_H_CLSACT, 0, [rtattr(TCA_KIND, b"clsact\0")])


def root_qdisc_deletion(ifindex: int) -> bytes:
    """Delete the root qdisc of `ifindex` (the interface falls back to its default)."""
    return tc_message(RTM_DELQDISC, 0, ifindex, 0, TC_H_ROOT, 0, [])


def filter_message(ifindex: int, prog_fd: int) -> bytes:
    """Attach program `prog_fd` at ingress of `ifindex` in direct-action mode (as `tc filter add
    dev IF ingress bpf da` does for a program it loaded)."""
    options = b"".join([
        rtattr(TCA_BPF_CLASSID, struct.pack("=I", 1)),
        rtattr(TCA_BPF_FD, struct.pack("=I", prog_fd)),
        rtattr(TCA_BPF_NAME, PROGRAM_NAME.encode() + b"\0"),
        rtattr(TCA_BPF_FLAGS, struct.pack("=I", TCA_BPF_FLAG_ACT_DIRECT)),
    ])
    info = (FILTER_PRIO << 16) | ETH_P_ALL_BE
    return tc_message(RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL, ifindex, 1, TC_H_INGRESS_FILTER, info,
                      [rtattr(TCA_KIND, b"bpf\0"), rtattr(TCA_OPTIONS, options)])


def ack_error(reply: bytes) -> int:
    """The error number of a netlink acknowledgement (0: done)."""
    _length, msg_type = struct.unpack_from("=IH", reply)
    if msg_type != NLMSG_ERROR:
        raise OSError(f"unexpected netlink reply type {msg_type}")
    return -int(struct.unpack_from("=i", reply, 16)[0])


def netlink(request: bytes) -> int:
    """Send one rtnetlink request; its error number (0: done)."""
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0) as sock:  # NETLINK_ROUTE
        sock.bind((0, 0))
        sock.send(request)
        return ack_error(sock.recv(65536))


def tx_frames(proc_net_dev: str, ifname: str) -> int:
    """tx_packets + tx_dropped of `ifname` from the text of /proc/net/dev."""
    for line in proc_net_dev.splitlines():
        name, sep, numbers = line.partition(":")
        if sep and name.strip() == ifname:
            fields = [int(n) for n in numbers.split()]
            return fields[9] + fields[11]  # transmit packets, transmit drop
    raise OSError(f"no interface {ifname}")


class Agent:
    """The maps, programs and qdiscs of this process; one method per command."""

    def __init__(self, send: Callable[[bytes], int] = netlink) -> None:
        self.send = send
        self.maps: dict[int, bpf.ArrayMap] = {}
        self.progs: list[int] = []
        self.clsacts: set[str] = set()
        self.pacers: set[str] = set()

    def _tc(self, request: bytes, what: str, *, tolerate: tuple[int, ...] = ()) -> None:
        err = self.send(request)
        if err and err not in tolerate:
            raise OSError(err, f"{what}: {os.strerror(err)}")

    def handle(self, line: str) -> str:
        """The answer to one command line."""
        words = line.split()
        try:
            if not words:
                raise ValueError("empty command")
            return "ok" + "".join(f" {w}" for w in self._command(words[0], words[1:]))
        except (OSError, ValueError, IndexError, KeyError) as exc:
            return f"error {words[0] if words else ''}: {exc}".replace("\n", " ")

    def _command(self, name: str, args: list[str]) -> list[str]:
        if name == "map":
            array = bpf.ArrayMap(int(args[0]))
            self.maps[array.fd] = array
            return [str(array.fd)]
        if name == "read":
            return [str(v) for v in self.maps[int(args[0])].values()]
        if name == "tx":
            with open("/proc/net/dev", encoding="ascii") as f:
                return [str(tx_frames(f.read(), args[0]))]
        if name == "attach":
            self.attach(int(args[0]), args[1], bytes.fromhex(args[2]))
            return []
        if name == "paced":
            socket.if_nametoindex(args[0])
            self.pacers.add(args[0])
            return []
        if name == "detach":
            self.detach(args[0])
            return []
        raise ValueError(f"unknown command {name!r}")

    def attach(self, map_fd: int, ifname: str, code: bytes) -> None:
        """Load `code` (its map loads name `map_fd`) and attach it at ingress of `ifname`."""
        if map_fd not in self.maps:
            raise KeyError(f"no map {map_fd}")
        insns = [bpf.Insn(c, r & 0xF, r >> 4, off, imm) for c, r, off, imm in struct.iter_unpack("<BBhi", code)]
        prog_fd = bpf.load_sched_cls(insns, PROGRAM_NAME)
        self.progs.append(prog_fd)
        index = socket.if_nametoindex(ifname)
        self._tc(clsact_message(RTM_DELQDISC, index), "clsact", tolerate=(2, 22))  # left by an earlier attach
        self._tc(clsact_message(RTM_NEWQDISC, index), f"clsact on {ifname}")
        self.clsacts.add(ifname)
        self._tc(filter_message(index, prog_fd), f"bpf filter on {ifname}")

    def detach(self, ifname: str) -> None:
        """Remove `ifname`'s clsact qdisc (its filter and program go with it)."""
        self.clsacts.discard(ifname)
        self._tc(clsact_message(RTM_DELQDISC, socket.if_nametoindex(ifname)), f"clsact on {ifname}",
                 tolerate=(2, 22))

    def close(self) -> None:
        """Remove everything this agent put on the ports, release maps and programs."""
        for ifname in sorted(self.clsacts):
            try:
                self.detach(ifname)
            except OSError as exc:
                print(f"detach {ifname}: {exc}", file=sys.stderr)
        for ifname in sorted(self.pacers):
            try:
                self._tc(root_qdisc_deletion(socket.if_nametoindex(ifname)), f"pacer on {ifname}",
                         tolerate=(2, 22))
            except OSError as exc:
                print(f"pacer {ifname}: {exc}", file=sys.stderr)
        self.pacers.clear()
        for fd in self.progs:
            os.close(fd)
        self.progs.clear()
        for array in self.maps.values():
            array.close()
        self.maps.clear()


def _exit_on_signal(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def main() -> int:
    """Answer commands until the end of the input (or SIGTERM, SIGHUP), then clean up."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _exit_on_signal)
    agent = Agent()
    try:
        for line in sys.stdin:
            sys.stdout.write(agent.handle(line) + "\n")
            sys.stdout.flush()
    finally:
        agent.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
