"""Reading this machine's interfaces and namespaces through netlink (pyroute2), fast.

What the run creates goes through `vsperf.host.network` (`ip` through the host's executor, in
the journal and commands.log); this module only reads: interface counters polled around a trial
(0.5 ms a read with a socket kept open), MAC addresses, the named namespaces, and a socket opened
inside a namespace (`in_netns`).
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyroute2 import IPRoute, netns

from vsperf.errors import DeploymentError
from vsperf.executor import NETNS_DIR, in_netns

_NETLINK_ROUTE = 0


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


def netns_pids(name: str) -> list[int]:
    """PIDs of the processes inside namespace `name`."""
    return list(netns.ns_pids().get(name, []))


def _index(sock: Any, ifname: str) -> int:
    found = sock.link_lookup(ifname=ifname)
    if not found:
        raise DeploymentError(f"interface {ifname} not found")
    return int(found[0])


def link_mac(ifname: str, ns: str | None) -> str:
    """MAC address of `ifname` in `ns`."""
    with ipr(ns) as sock:
        link = sock.get_links(_index(sock, ifname))[0]
        return str(link.get("address") or link.get_attr("IFLA_ADDRESS"))


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


def kernel_release() -> str:
    """The running kernel's release, e.g. '6.1.0-18-amd64'."""
    return os.uname().release
