"""Physical (existing) interfaces: checked before use, their state recorded, restored after.

vsperf never creates, renames or deletes a testbed's interfaces. What it may change on one
(admin state, MTU, addresses, an XDP program) is read first with `ip -j`, through the host's
executor, and `restore_port` puts exactly that back. Everything goes through the executor, so
the same code serves this machine and an SSH host.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass
from typing import Any

from vsperf.errors import CommandError, DeploymentError, UserError
from vsperf.executor import Executor

log = logging.getLogger(__name__)


class PortError(UserError):
    """A testbed port is missing, has no link, or is in use by something else."""


@dataclass(frozen=True)
class PortState:
    """What vsperf may change on an interface, as it was."""

    interface: str
    admin_up: bool  # `ip link set up`
    carrier: bool  # LOWER_UP: a link partner is there
    mtu_bytes: int
    addresses: tuple[str, ...]  # "198.18.0.1/30", "2001:db8::1/64" (not kernel-made link-local ones)
    xdp_attached: bool
    master: str | None  # a bridge, bond or OVS datapath it is enslaved to

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PortState:
        return cls(**{**data, "addresses": tuple(data["addresses"])})


def _ip_json(executor: Executor, argv: list[str], netns: str | None) -> list[dict[str, Any]]:
    proc = executor.run(["ip", "-j", *argv], netns=netns, check=False, timeout_s=10)
    if proc.returncode != 0:
        raise CommandError(["ip", "-j", *argv], proc.returncode, proc.stderr)
    data = json.loads(proc.stdout or "[]")
    return data if isinstance(data, list) else []


def _missing(executor: Executor, interface: str, netns: str | None) -> PortError:
    names = [link.get("ifname", "") for link in _ip_json(executor, ["link", "show"], netns)]
    shown = ", ".join(n for n in names if n and n != "lo") or "none"
    return PortError(f"host {executor.host}: no interface {interface!r} (interfaces there: {shown}); "
                     f"fix the testbed file's ports")


def interface_mac(executor: Executor, interface: str) -> str:
    """The MAC address of `interface` on the executor's host; DeploymentError naming the host
    when it has none."""
    out = executor.run(["ip", "-j", "link", "show", "dev", interface], timeout_s=10).stdout
    links = json.loads(out or "[]")
    if not links or "address" not in links[0]:
        raise DeploymentError(f"host {executor.host}: no MAC address for interface {interface}")
    return str(links[0]["address"])


def read_port(executor: Executor, interface: str, *, netns: str | None = None) -> PortState:
    """The current state of `interface` on the executor's host; PortError when it is missing."""
    proc = executor.run(["ip", "-j", "-d", "addr", "show", "dev", interface], netns=netns, check=False,
                        timeout_s=10)
    if proc.returncode != 0:
        raise _missing(executor, interface, netns)
    links = json.loads(proc.stdout or "[]")
    if not links:
        raise _missing(executor, interface, netns)
    link = links[0]
    flags = set(link.get("flags", []))
    addresses = tuple(
        f"{a['local']}/{a['prefixlen']}" for a in link.get("addr_info", [])
        if a.get("family") in ("inet", "inet6") and not (a.get("family") == "inet6" and a.get("scope") == "link")
    )
    return PortState(
        interface=interface,
        admin_up="UP" in flags,
        carrier="LOWER_UP" in flags,
        mtu_bytes=int(link.get("mtu", 0)),
        addresses=addresses,
        xdp_attached="xdp" in link,
        master=link.get("master"),
    )


def check_port(executor: Executor, interface: str, *, netns: str | None = None) -> PortState:
    """The port's state, after refusing one vsperf must not use: missing, enslaved to a bridge,
    bond or switch, or carrying an XDP program someone else attached. (Whether it has a link
    depends on its partner too: see `check_cable`.)"""
    state = read_port(executor, interface, netns=netns)
    where = f"host {executor.host}: interface {interface}"
    if state.master:
        raise PortError(f"{where} is attached to {state.master}; release it or pick another port")
    if state.xdp_attached:
        raise PortError(f"{where} has an XDP program attached by someone else; detach it first "
                        f"(ip link set dev {interface} xdp off)")
    return state


def check_cable(dut_host: str, dut: PortState, gen_host: str, gen: PortState) -> None:
    """Refuse a cable whose two ends are both up but have no link (unplugged, broken, or
    cabled to another port than the testbed file says)."""
    if dut.admin_up and gen.admin_up and not (dut.carrier and gen.carrier):
        raise PortError(f"host {dut_host}: interface {dut.interface} and host {gen_host}: interface "
                        f"{gen.interface} are up but have no link; check the cable and the testbed file")


def prepare_port(executor: Executor, state: PortState, *, mtu_bytes: int | None = None,
                 netns: str | None = None) -> None:
    """Bring the port up (and set its MTU) for a test; `state` was recorded before."""
    argv = ["ip", "link", "set", "dev", state.interface]
    if mtu_bytes is not None and mtu_bytes != state.mtu_bytes:
        argv += ["mtu", str(mtu_bytes)]
    executor.run([*argv, "up"], netns=netns)


def restore_port(executor: Executor, original: PortState, *, netns: str | None = None) -> list[str]:
    """Put back what vsperf may have changed on the port; the list says what was changed back."""
    now = read_port(executor, original.interface, netns=netns)
    dev = ["dev", original.interface]
    done: list[str] = []
    if now.xdp_attached and not original.xdp_attached:
        executor.run(["ip", "link", "set", *dev, "xdp", "off"], netns=netns)
        done.append("XDP program detached")
    for address in now.addresses:
        if address not in original.addresses:
            executor.run(["ip", "addr", "del", address, *dev], netns=netns)
            done.append(f"address {address} removed")
    for address in original.addresses:
        if address not in now.addresses:
            executor.run(["ip", "addr", "add", address, *dev], netns=netns)
            done.append(f"address {address} put back")
    if now.mtu_bytes != original.mtu_bytes:
        executor.run(["ip", "link", "set", *dev, "mtu", str(original.mtu_bytes)], netns=netns)
        done.append(f"MTU {now.mtu_bytes} -> {original.mtu_bytes}")
    if now.admin_up != original.admin_up:
        executor.run(["ip", "link", "set", *dev, "up" if original.admin_up else "down"], netns=netns)
        done.append("set " + ("up" if original.admin_up else "down"))
    for what in done:
        log.info("host %s: %s: %s", executor.host, original.interface, what)
    return done
