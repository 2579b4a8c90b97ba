"""Namespaces, veth pairs and kernel bridges through netlink (pyroute2), recorded as created.

Every creation records the resource in the run's state *right after* it exists, so a kill
at any moment leaves a state file that names it. Removal tolerates things already gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from pyroute2 import IPRoute, netns
from pyroute2.netlink.exceptions import NetlinkError

from vsperf.errors import CommandError, DeploymentError
from vsperf.executor import Executor
from vsperf.lab.state import Resource, RunState

_IFF_NOARP = 0x80
_NUD_PERMANENT = 0x80
NETNS_DIR = "/run/netns"


_CLONE_NEWNET = 0x40000000
_NETLINK_ROUTE = 0
_T = TypeVar("_T")


def in_netns(ns: str, opener: Callable[[], _T]) -> _T:
    """`opener()` called from a short-lived thread that entered namespace `ns` (setns changes
    only the calling thread; a socket opened there keeps that namespace); its OSError, or the
    namespace's, is raised here."""
    result: dict[str, Any] = {}

    def enter_and_open() -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            nsfd = os.open(os.path.join(NETNS_DIR, ns), os.O_RDONLY)
            try:
                if libc.setns(nsfd, _CLONE_NEWNET) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, f"setns({ns}): {os.strerror(err)}")
            finally:
                os.close(nsfd)
            result["value"] = opener()
        except OSError as exc:
            result["error"] = exc

    worker = threading.Thread(target=enter_and_open, name=f"netns-{ns}")
    worker.start()
    worker.join()
    if "error" in result:
        raise result["error"]
    value: _T = result["value"]
    return value


def _netlink_fd_in(ns: str) -> int:
    """A NETLINK_ROUTE socket that lives in namespace `ns`, as a bare file descriptor.

    pyroute2's own netns support forks a child process per socket (and per namespace it
    creates); a forked copy of vsperf would inherit its signal handlers and run its cleanup
    code when pyroute2 stops the child. Instead the socket is opened `in_netns`.
    """
    return in_netns(ns, lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_ROUTE).detach())


def open_ipr(ns: str | None) -> Any:
    """An IPRoute socket in namespace `ns` (None: the root one); the caller closes it."""
    try:
        return IPRoute(fileno=_netlink_fd_in(ns)) if ns else IPRoute()
    except OSError as exc:
        raise DeploymentError(f"network namespace {ns} is not available: {exc}") from exc


@contextlib.contextmanager
def ipr(ns: str | None) -> Iterator[Any]:
    """An IPRoute socket in namespace `ns` (None: the root one). Never creates the namespace."""
    sock = open_ipr(ns)
    try:
        yield sock
    finally:
        sock.close()


def netns_exists(name: str) -> bool:
    """True when the named namespace exists."""
    return os.path.exists(os.path.join(NETNS_DIR, name))


def list_netns() -> list[str]:
    """Names of every named network namespace."""
    try:
        return sorted(os.listdir(NETNS_DIR))
    except FileNotFoundError:
        return []


def create_netns(state: RunState, executor: Executor, name: str) -> str:
    """Create namespace `name` with IPv6 off (no router solicitations, no ND: no chatter)."""
    if netns_exists(name):
        raise DeploymentError(f"network namespace {name} exists already (left by another run?)")
    # Recorded first: a kill between the two steps must not leave an unrecorded namespace
    # (removing a namespace that was never created is a no-op).
    state.add(Resource("netns", name))
    try:
        # `ip netns add` rather than pyroute2's netns.create, which forks a copy of vsperf.
        executor.run(["ip", "netns", "add", name])
    except CommandError as exc:
        raise DeploymentError(f"cannot create network namespace {name}: {exc}") from exc
    executor.run(
        ["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"],
        netns=name,
    )
    with ipr(name) as sock:
        sock.link("set", index=sock.link_lookup(ifname="lo")[0], state="up")
    return name


def netns_pids(name: str) -> list[int]:
    """PIDs of the processes inside namespace `name`."""
    return list(netns.ns_pids().get(name, []))


def delete_netns(name: str) -> bool:
    """Delete namespace `name`; False when it did not exist."""
    if not netns_exists(name):
        return False
    try:
        netns.remove(name)
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            raise
        return False
    return True


def _index(sock: Any, ifname: str) -> int:
    found = sock.link_lookup(ifname=ifname)
    if not found:
        raise DeploymentError(f"interface {ifname} not found")
    return int(found[0])


@dataclass(frozen=True)
class LinkEnd:
    """One end of a veth pair: its name, namespace and MAC address."""

    ifname: str
    netns: str | None
    mac: str


def create_veth(
    state: RunState, a: str, a_ns: str | None, b: str, b_ns: str | None, *, mtu_bytes: int, queues: int = 1
) -> tuple[LinkEnd, LinkEnd]:
    """Create veth pair `a` (in `a_ns`) <-> `b` (in `b_ns`), both up with `mtu_bytes` and `queues`
    rx and tx queues each (veth's numrxqueues/numtxqueues; the kernel's default is one)."""
    counts = {"num_rx_queues": queues, "num_tx_queues": queues} if queues > 1 else {}
    with ipr(a_ns) as sock:
        peer: dict[str, Any] = {"ifname": b, **counts}
        if b_ns != a_ns:
            peer["net_ns_fd"] = b_ns if b_ns else "/proc/1/ns/net"
        # Deleting one end deletes the pair: one record covers both (recorded before it exists).
        state.add(Resource("link", a, netns=a_ns))
        try:
            sock.link("add", ifname=a, kind="veth", peer=peer, **counts)
        except NetlinkError as exc:
            raise DeploymentError(f"cannot create veth {a} <-> {b}: {exc}") from exc
        sock.link("set", index=_index(sock, a), mtu=mtu_bytes, state="up")
    with ipr(b_ns) as sock:
        sock.link("set", index=_index(sock, b), mtu=mtu_bytes, state="up")
    return LinkEnd(a, a_ns, link_mac(a, a_ns)), LinkEnd(b, b_ns, link_mac(b, b_ns))


def link_mac(ifname: str, ns: str | None) -> str:
    """MAC address of `ifname` in `ns`."""
    with ipr(ns) as sock:
        link = sock.get_links(_index(sock, ifname))[0]
        return str(link.get("address") or link.get_attr("IFLA_ADDRESS"))


def set_mtu(ifname: str, ns: str | None, mtu_bytes: int) -> None:
    """Set the MTU of `ifname`."""
    with ipr(ns) as sock:
        sock.link("set", index=_index(sock, ifname), mtu=mtu_bytes)


def configure_host(
    ifname: str, ns: str | None, ipv4: str, prefix_len: int, peer_ipv4: str, peer_mac: str
) -> None:
    """Address `ifname` and pin its peer's neighbour entry; ARP off: the port never chatters."""
    with ipr(ns) as sock:
        index = _index(sock, ifname)
        sock.link("set", index=index, flags=_IFF_NOARP, mask=_IFF_NOARP)
        sock.addr("add", index=index, address=ipv4, prefixlen=prefix_len)
        if peer_ipv4:
            sock.neigh("add", dst=peer_ipv4, lladdr=peer_mac, ifindex=index, state=_NUD_PERMANENT)


def delete_link(ifname: str, ns: str | None) -> bool:
    """Delete `ifname` in `ns`; False when it (or its namespace) is gone already."""
    if ns and not netns_exists(ns):
        return False
    with ipr(ns) as sock:
        found = sock.link_lookup(ifname=ifname)
        if not found:
            return False
        try:
            sock.link("del", index=found[0])
        except NetlinkError as exc:
            if exc.code == errno.ENODEV:
                return False
            raise
    return True


def link_names(ns: str | None) -> list[str]:
    """Names of every interface in `ns`."""
    with ipr(ns) as sock:
        return [str(link.get("ifname") or link.get_attr("IFLA_IFNAME")) for link in sock.get_links()]


@dataclass(frozen=True)
class LinkCounters:
    """Kernel counters of one interface (frames)."""

    rx_packets: int
    tx_packets: int
    rx_dropped: int
    tx_dropped: int


def link_counters(ifname: str, ns: str | None) -> LinkCounters:
    """The 64-bit counters of `ifname`."""
    with ipr(ns) as sock:
        return _counters(sock.get_links(_index(sock, ifname))[0])


def _counters(link: Any) -> LinkCounters:
    stats = link.get_attr("IFLA_STATS64") or link.get_attr("IFLA_STATS")
    return LinkCounters(
        int(stats["rx_packets"]), int(stats["tx_packets"]), int(stats["rx_dropped"]), int(stats["tx_dropped"])
    )


class LinkStatsReader:
    """Reads one interface's counters through a netlink socket kept open (0.5 ms a read)."""

    def __init__(self, ifname: str, ns: str | None) -> None:
        self._sock = open_ipr(ns)
        self._index = _index(self._sock, ifname)
        self.ifname = ifname

    def read(self) -> LinkCounters:
        return _counters(self._sock.get_links(self._index)[0])

    def close(self) -> None:
        self._sock.close()


# --- kernel bridges ------------------------------------------------------------------------


def create_bridge(state: RunState, name: str, ns: str | None, *, vlan_filtering: bool = False) -> None:
    """Create bridge `name` (no STP, forwarding at once) and bring it up."""
    with ipr(ns) as sock:
        kwargs: dict[str, Any] = {"br_stp_state": 0, "br_forward_delay": 0}
        if vlan_filtering:
            kwargs["br_vlan_filtering"] = 1
        state.add(Resource("link", name, netns=ns))
        try:
            sock.link("add", ifname=name, kind="bridge", **kwargs)
        except NetlinkError as exc:
            if vlan_filtering and exc.code == errno.EOPNOTSUPP:
                raise DeploymentError(
                    "this kernel cannot tag frames in a Linux bridge (CONFIG_BRIDGE_VLAN_FILTERING is off)"
                ) from exc
            raise DeploymentError(f"cannot create bridge {name}: {exc}") from exc
        sock.link("set", index=_index(sock, name), state="up")


def enslave(ifname: str, bridge: str, ns: str | None) -> None:
    """Attach `ifname` to `bridge`."""
    with ipr(ns) as sock:
        sock.link("set", index=_index(sock, ifname), master=_index(sock, bridge))


_BRIDGE_VLAN_INFO_PVID = 0x2
_BRIDGE_VLAN_INFO_UNTAGGED = 0x4


def bridge_port_vlan(ifname: str, ns: str | None, vid: int, *, pvid: bool, untagged: bool) -> None:
    """Make `ifname` a member of VLAN `vid` (replacing the default VLAN 1)."""
    flags = (_BRIDGE_VLAN_INFO_PVID if pvid else 0) | (_BRIDGE_VLAN_INFO_UNTAGGED if untagged else 0)
    with ipr(ns) as sock:
        index = _index(sock, ifname)
        with contextlib.suppress(NetlinkError):
            sock.vlan_filter("del", index=index, vlan_info={"vid": 1})
        sock.vlan_filter("add", index=index, vlan_info={"vid": vid, "flags": flags})


def kernel_release() -> str:
    """The running kernel's release, e.g. '6.1.0-18-amd64'."""
    return os.uname().release


def run_sysctl(executor: Executor, ns: str | None, *assignments: str) -> None:
    """Set sysctls inside `ns` (they are per namespace for net.*)."""
    try:
        executor.run(["sysctl", "-q", "-w", *assignments], netns=ns)
    except CommandError as exc:
        raise DeploymentError(f"cannot set {' '.join(assignments)} in {ns}: {exc}") from exc
