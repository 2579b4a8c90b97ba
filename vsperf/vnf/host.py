"""Where a namespace VNF is built: the host-side operations `vsperf.vnf.netns.NetnsVnf` needs.

The netns VNF is a namespace with two veths towards the switch and a loopback (a kernel bridge)
between them. What differs between the local lab and a testbed's DUT host is how those are
created and recorded for cleanup, never what is created:

- `vsperf.vnf.netns.LabVnfHost`: the local lab (netlink on this machine, the run's state file);
- `vsperf.testbed.vnf_host.TestbedVnfHost`: a testbed's DUT host, every command (`ip netns add`,
  `ip link add ... type veth`, ...) through that host's executor, each namespace and link
  recorded in the run's journal on the controller before it exists.

Names are the host's (`VnfNames`): they carry the run id and fit an interface name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from vsperf.executor import Executor


@dataclass(frozen=True)
class VnfNames:
    """Names of VNF `index`'s namespace, links and loopback bridge on its host."""

    netns: str
    switch_ifs: tuple[str, str]  # switch end of port 0 and port 1 (in the switch's namespace)
    inner_ifs: tuple[str, str]  # VNF end of port 0 and port 1 (in `netns`)
    bridge: str  # loopback bridge inside `netns`


class VnfHost(Protocol):
    """The host a namespace VNF is built on (see the module docstring)."""

    @property
    def executor(self) -> Executor:
        """The host's executor (commands of the VNF, e.g. its version)."""
        ...

    @property
    def switch_netns(self) -> str | None:
        """The namespace of the switch (None: the host's own): the switch ends of the veths go there."""
        ...

    @property
    def supports_processes(self) -> bool:
        """True when the host can run the VNF's own processes (the testpmd loopback)."""
        ...

    def vnf_names(self, index: int) -> VnfNames:
        """The names of VNF `index` on this host."""
        ...

    def add_netns(self, name: str) -> None:
        """Record, then create namespace `name` (IPv6 off, loopback up)."""
        ...

    def add_veth(self, inner: str, netns: str, outer: str, *, mtu_bytes: int) -> None:
        """Record, then create veth `outer` (in the switch's namespace) <-> `inner` (in `netns`), both up."""
        ...

    def add_bridge(self, name: str, netns: str, members: tuple[str, ...]) -> None:
        """Record, then create bridge `name` in `netns` (no STP, no forward delay) with `members`, up."""
        ...

    def remove(self, names: VnfNames) -> None:
        """Delete the namespace (with its bridge and veths) and forget every record of it."""
        ...
