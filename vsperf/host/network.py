"""Network namespaces, veth pairs, bridges and taps on a host, made with `ip` through its executor.

Each creation is in the run's journal before it exists (a kill at any moment leaves a journal
that names it) and in commands.log (a user can replay it). Removal tolerates things already gone.
The same commands serve this machine and an SSH host: `ip -n NS ...` works on both.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vsperf.errors import CommandError, DeploymentError
from vsperf.host.journal import Entry, EntryKind

if TYPE_CHECKING:
    from vsperf.host.host import Host


@dataclass(frozen=True)
class LinkEnd:
    """One end of a veth pair: its name, namespace (None: the host's own) and MAC address."""

    ifname: str
    netns: str | None
    mac: str


def _ip(netns: str | None, *args: str) -> list[str]:
    return ["ip", *(("-n", netns) if netns else ()), *args]


def _gone(exc: CommandError) -> bool:
    """True when `ip` failed because the interface or namespace does not exist (any more)."""
    text = str(exc).lower()
    return any(s in text for s in ("cannot find device", "does not exist", "no such file", "not found"))


class Network:
    """The namespaces and links of one host (`Host.net`)."""

    def __init__(self, host: Host) -> None:
        self.host = host

    def _run(self, argv: list[str], *, netns: str | None = None) -> str:
        return self.host.run(argv, netns=netns, timeout_s=30.0)

    def _record_new(self, kind: EntryKind, name: str, netns: str | None = None) -> Entry | None:
        """Record `name` before it is made; the entry to forget if making it fails, or None when
        the journal listed it already (one this run made earlier, still to be removed: a failed
        second attempt must not make the first one unrecorded)."""
        entry = Entry(kind, self.host.name, name, netns=netns)
        known = self.host.journal is not None and any(e.same(entry) for e in self.host.journal)
        self.host.record(kind, name, netns=netns)
        return None if known else entry

    def _forget_new(self, entry: Entry | None) -> None:
        if entry is not None:
            self.host.forget(entry)

    # --- namespaces -------------------------------------------------------------------------------

    def add_netns(self, name: str) -> None:
        """Record, then create namespace `name`: IPv6 off (no router solicitations, no neighbour
        discovery: no frames of its own on a port), loopback up."""
        entry = self._record_new("netns", name)
        try:
            self._run(["ip", "netns", "add", name])
        except DeploymentError as exc:
            self._forget_new(entry)  # not ours: it existed already (or could not be made)
            raise DeploymentError(f"cannot create network namespace {name}: {exc}") from exc
        self._run(["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                   "net.ipv6.conf.default.disable_ipv6=1"], netns=name)
        self._run(_ip(name, "link", "set", "dev", "lo", "up"))

    def del_netns(self, name: str) -> None:
        """Delete namespace `name` (with its interfaces and what still runs in it) and forget it."""
        delete_netns(self.host.executor, name)
        self.host.forget(Entry("netns", self.host.name, name))

    # --- links ------------------------------------------------------------------------------------

    def record_link(self, name: str, netns: str | None) -> Entry:
        """Record interface `name` that something else (a switch) is about to create: deleted at
        teardown, and by the next run after a kill."""
        return self.host.record("link", name, netns=netns)

    def forget_link(self, name: str, netns: str | None) -> None:
        """Interface `name` has been deleted."""
        self.host.forget(Entry("link", self.host.name, name, netns=netns))

    def add_veth(self, a: str, a_ns: str | None, b: str, b_ns: str | None, *, mtu_bytes: int,
                 queues: int = 1) -> tuple[LinkEnd, LinkEnd]:
        """Create veth pair `a` (in `a_ns`) <-> `b` (in `b_ns`), both up with `mtu_bytes` and
        `queues` rx and tx queues each (the kernel's default is one). The pair is made in `b`'s
        namespace and `a` moved into its own at once (a namespace is named, never "the root one":
        an SSH host may itself live in a namespace). One record covers the pair: deleting either
        end deletes both."""
        if a_ns is None and b_ns is not None:
            raise DeploymentError(f"veth {a} <-> {b}: put the end in the host's own namespace second (b), "
                                  f"it cannot be moved there by name")
        counts = ["numtxqueues", str(queues), "numrxqueues", str(queues)] if queues > 1 else []
        mtu = ["mtu", str(mtu_bytes)]
        peer_ns = ["netns", a_ns] if a_ns and a_ns != b_ns else []
        entry = self._record_new("link", b, b_ns)
        try:
            self._run(_ip(b_ns, "link", "add", b, *mtu, *counts, "type", "veth", "peer", "name", a, *mtu, *counts,
                          *peer_ns))
        except DeploymentError as exc:
            self._forget_new(entry)
            raise DeploymentError(f"cannot create veth {a} <-> {b}: {exc}") from exc
        self._run(_ip(b_ns, "link", "set", "dev", b, "up"))
        self._run(_ip(a_ns, "link", "set", "dev", a, "up"))
        return LinkEnd(a, a_ns, self.mac(a, a_ns)), LinkEnd(b, b_ns, self.mac(b, b_ns))

    def add_bridge(self, name: str, netns: str | None, members: tuple[str, ...] = (), *,
                   vlan_filtering: bool = False) -> None:
        """Record, then create kernel bridge `name` (no STP, forwarding at once), up, with `members`."""
        options = ["stp_state", "0", "forward_delay", "0", *(["vlan_filtering", "1"] if vlan_filtering else [])]
        entry = self._record_new("link", name, netns)
        try:
            self._run(_ip(netns, "link", "add", "name", name, "type", "bridge", *options))
        except DeploymentError as exc:
            self._forget_new(entry)
            if vlan_filtering and "not supported" in str(exc).lower():
                raise DeploymentError("this kernel cannot tag frames in a Linux bridge "
                                      "(CONFIG_BRIDGE_VLAN_FILTERING is off)") from exc
            raise DeploymentError(f"cannot create bridge {name}: {exc}") from exc
        for member in members:
            self.enslave(member, name, netns)
        self._run(_ip(netns, "link", "set", "dev", name, "up"))

    def enslave(self, ifname: str, bridge: str, netns: str | None) -> None:
        """Attach `ifname` to `bridge`."""
        self._run(_ip(netns, "link", "set", "dev", ifname, "master", bridge))

    def bridge_vlan(self, ifname: str, netns: str | None, vid: int, *, pvid: bool, untagged: bool) -> None:
        """Make bridge port `ifname` a member of VLAN `vid` (replacing the default VLAN 1)."""
        ns = ["-n", netns] if netns else []
        self.host.executor.run(["bridge", *ns, "vlan", "del", "dev", ifname, "vid", "1"], check=False, timeout_s=10)
        flags = [*(["pvid"] if pvid else []), *(["untagged"] if untagged else [])]
        self._run(["bridge", *ns, "vlan", "add", "dev", ifname, "vid", str(vid), *flags])

    def add_tap(self, name: str, netns: str | None, *, mtu_bytes: int) -> None:
        """Record, then create tap device `name` in `netns`, up (a guest's NIC)."""
        entry = self._record_new("link", name, netns)
        try:
            self._run(_ip(netns, "tuntap", "add", "dev", name, "mode", "tap"))
        except DeploymentError as exc:
            self._forget_new(entry)
            raise DeploymentError(f"cannot create tap {name}: {exc}") from exc
        self._run(_ip(netns, "link", "set", "dev", name, "mtu", str(mtu_bytes), "up"))

    def del_link(self, name: str, netns: str | None) -> bool:
        """Delete interface `name` (a veth deletes its pair) and forget it; False when it was gone."""
        existed = delete_link(self.host.executor, name, netns)
        self.forget_link(name, netns)
        return existed

    # --- addresses and facts ----------------------------------------------------------------------

    def mac(self, ifname: str, netns: str | None) -> str:
        """MAC address of `ifname`."""
        return str(self.link(ifname, netns).get("address", ""))

    def link(self, ifname: str, netns: str | None) -> dict[str, Any]:
        """`ip -j link show dev IFNAME` (DeploymentError when it does not exist)."""
        data = json.loads(self._run(_ip(netns, "-j", "link", "show", "dev", ifname)) or "[]")
        if not data:
            raise DeploymentError(f"interface {ifname} not found")
        return dict(data[0])

    def set_mtu(self, ifname: str, netns: str | None, mtu_bytes: int) -> None:
        self._run(_ip(netns, "link", "set", "dev", ifname, "mtu", str(mtu_bytes)))

    def configure_port(self, ifname: str, netns: str | None, ipv4: str, prefix_len: int, peer_ipv4: str,
                       peer_mac: str) -> None:
        """Address `ifname` and pin its peer's neighbour entry; ARP off: the port never chatters."""
        self._run(_ip(netns, "link", "set", "dev", ifname, "arp", "off"))
        self._run(_ip(netns, "addr", "add", f"{ipv4}/{prefix_len}", "dev", ifname))
        if peer_ipv4:
            self._run(_ip(netns, "neigh", "replace", peer_ipv4, "lladdr", peer_mac, "dev", ifname, "nud", "permanent"))


def delete_link(executor: Any, name: str, netns: str | None) -> bool:
    """`ip link del` of `name` through `executor`; False when it (or its namespace) was gone."""
    try:
        executor.run(_ip(netns, "link", "del", "dev", name), timeout_s=30.0)
    except CommandError as exc:
        if _gone(exc):
            return False
        raise
    return True


def delete_netns(executor: Any, name: str) -> bool:
    """Delete namespace `name` through `executor`, first stopping what still runs inside it
    (whatever runs in a namespace vsperf created is vsperf's: a generator or loopback whose owner
    never got to stop it would outlive its interfaces). False when it was gone."""
    pids = executor.run(["ip", "netns", "pids", name], check=False, timeout_s=10.0)
    if pids.returncode != 0:
        return False
    for pid in pids.stdout.split():
        if pid.isdigit():
            executor.run(["kill", "-KILL", pid], check=False, timeout_s=10.0)
    try:
        executor.run(["ip", "netns", "del", name], timeout_s=30.0)
    except CommandError as exc:
        if _gone(exc):
            return False
        raise
    return True
