"""Two sshd "hosts" cabled together, shared by the testbed tests (test_testbed_ssh.py,
test_testbed_run.py): each host a network namespace with its own sshd, reached from the
controller over a veth; the hosts joined by veth pairs the test creates (the "physical NICs").
The ports' state is read directly in the namespaces, never through vsperf."""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

from sshd_hosts import SshdServer, make_host_netns, remove_netns, start_sshd

from vsperf.host.ports import PortState

HOSTS = ("a", "b")


def ip(*argv: str) -> None:
    """`ip ARGV` on this machine; a failure raises."""
    subprocess.run(["ip", *argv], check=True, capture_output=True)


@contextlib.contextmanager
def cabled_hosts(base: Path, tag: str, ns: dict[str, str], ctl: dict[str, tuple[str, str]],
                 cables: Sequence[tuple[str, str]], a0_address: str) -> Iterator[dict[str, SshdServer]]:
    """Hosts a and b (namespaces `ns`, controller/host addresses `ctl`) with sshd on port 2222,
    cabled by `cables` (A end, B end). A's first cable end is up with `a0_address`, B's ends
    are up, A's second end is down. Everything is removed at the end, by name and PID."""
    servers: dict[str, SshdServer] = {}
    try:
        for host in HOSTS:
            make_host_netns(ns[host], f"{tag}c{host}", *ctl[host])
            servers[host] = start_sshd(base / host, f"host{host}", address=ctl[host][1], port=2222, netns=ns[host])
        for a_if, b_if in cables:
            ip("link", "add", a_if, "netns", ns["a"], "type", "veth", "peer", "name", b_if, "netns", ns["b"])
        ip("-n", ns["a"], "addr", "add", a0_address, "dev", cables[0][0])
        for netns, ifname in ((ns["a"], cables[0][0]), (ns["b"], cables[0][1]), (ns["b"], cables[1][1])):
            ip("-n", netns, "link", "set", ifname, "up")
        yield servers
    finally:
        for srv in servers.values():
            srv.stop()
        for host in HOSTS:
            remove_netns(ns[host], f"{tag}c{host}")


def state_in(ns: str, ifname: str) -> PortState:
    """A port's state read directly in its namespace (not through vsperf's executor)."""
    out = subprocess.run(["ip", "-n", ns, "-j", "-d", "addr", "show", "dev", ifname], capture_output=True,
                         text=True, check=True).stdout
    link = json.loads(out)[0]
    flags = set(link["flags"])
    addrs = tuple(f"{a['local']}/{a['prefixlen']}" for a in link.get("addr_info", [])
                  if not (a["family"] == "inet6" and a.get("scope") == "link"))
    return PortState(ifname, "UP" in flags, "LOWER_UP" in flags, link["mtu"], addrs, "xdp" in link,
                     link.get("master"))


def cable_states(ns: dict[str, str], cables: Sequence[tuple[str, str]]) -> dict[str, PortState]:
    """The state of every cable end, by interface name."""
    return {a: state_in(ns["a"], a) for a, _ in cables} | {b: state_in(ns["b"], b) for _, b in cables}


def links_in(ns: str) -> set[str]:
    """Names of every interface of namespace `ns`."""
    out = subprocess.run(["ip", "-n", ns, "-j", "link", "show"], capture_output=True, text=True, check=True).stdout
    return {link["ifname"] for link in json.loads(out)}
