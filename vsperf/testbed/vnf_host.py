"""A testbed's DUT host as the host of the namespace VNF (vsperf.vnf.host.VnfHost).

The netns VNF (`vsperf.vnf.netns.NetnsVnf`) builds the same namespace, veths and loopback bridge
on a testbed's DUT host as on the local lab, here with `ip` commands through the host's executor
(SSH, or this machine for a host `local`):

- the namespace `vst<RUNID>v<i>` and the switch ends of its veths (`vst<RUNID>v<i>s<k>`, in the
  host's own namespace, where the switch runs) are recorded in the run's journal on the
  controller before they exist, so the next run deletes them when this one could not (a
  SIGKILL, a lost host); the VNF ends and the bridge live inside the namespace and go with it;
- the prefix `vst` (not the lab's `vsp`) keeps them apart from what a local lab on the same
  host creates and sweeps.

Only the kernel-bridge loopback runs here (`supports_processes` is False: no testpmd loopback).
"""

from __future__ import annotations

from vsperf.errors import CommandError, DeploymentError
from vsperf.executor import Executor
from vsperf.lab.names import check_run_id
from vsperf.testbed.session import TestbedSession
from vsperf.vnf.host import VnfNames

PREFIX = "vst"  # testbed VNF names: PREFIX + run id + role; 15 characters at most


def host_vnf_names(run_id: str, index: int) -> VnfNames:
    """The names of VNF `index` of run `run_id` on a testbed host."""
    base = f"{PREFIX}{check_run_id(run_id)}v{index}"
    return VnfNames(base, (f"{base}s0", f"{base}s1"), (f"{base}i0", f"{base}i1"), f"{base}b")


class TestbedVnfHost:
    """The DUT host of a testbed run, as `vsperf.vnf.host.VnfHost`."""

    __test__ = False
    switch_netns: str | None = None  # the switch runs in the host's own namespace
    supports_processes = False

    def __init__(self, session: TestbedSession, host: str, run_id: str) -> None:
        self.session = session
        self.host = host
        self.run_id = run_id

    @property
    def executor(self) -> Executor:
        """The host's executor."""
        return self.session.executors[self.host]

    def vnf_names(self, index: int) -> VnfNames:
        return host_vnf_names(self.run_id, index)

    def _run(self, argv: list[str], *, netns: str | None = None, check: bool = True) -> None:
        try:
            self.executor.run(argv, netns=netns, check=check, timeout_s=20.0)
        except CommandError as exc:
            raise DeploymentError(f"host {self.host}: {exc}") from exc

    def add_netns(self, name: str) -> None:
        self.session.journal.record_netns(self.host, name)
        self._run(["ip", "netns", "add", name])
        # No IPv6 (no router solicitations, no ND: no frames of its own on the loop), loopback up.
        self._run(["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1",
                   "net.ipv6.conf.default.disable_ipv6=1"], netns=name)
        self._run(["ip", "link", "set", "dev", "lo", "up"], netns=name)

    def add_veth(self, inner: str, netns: str, outer: str, *, mtu_bytes: int) -> None:
        # One record covers the pair: deleting either end deletes both.
        self.session.journal.record_link(self.host, outer)
        mtu = str(mtu_bytes)
        self._run(["ip", "link", "add", outer, "mtu", mtu, "type", "veth", "peer", "name", inner, "mtu", mtu,
                   "netns", netns])
        self._run(["ip", "link", "set", "dev", outer, "up"])
        self._run(["ip", "link", "set", "dev", inner, "up"], netns=netns)

    def add_bridge(self, name: str, netns: str, members: tuple[str, ...]) -> None:
        # Inside the VNF's namespace: deleted with it, no record of its own.
        self._run(["ip", "link", "add", "name", name, "type", "bridge", "stp_state", "0", "forward_delay", "0"],
                  netns=netns)
        for member in members:
            self._run(["ip", "link", "set", "dev", member, "master", name], netns=netns)
        self._run(["ip", "link", "set", "dev", name, "up"], netns=netns)

    def remove(self, names: VnfNames) -> None:
        # The veths first: deleting a pair is synchronous, while a namespace's interfaces go
        # with it in the kernel's own time (its switch ends would linger a moment).
        journal = self.session.journal
        for outer in names.switch_ifs:
            self._run(["ip", "link", "del", "dev", outer], check=False)
            journal.forget_link(self.host, outer)
        self._run(["ip", "netns", "del", names.netns])
        journal.forget_netns(self.host, names.netns)
