"""Where a benchmark runs: its two endpoints (the generator ports' namespaces, or loopback)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vsperf.executor import Executor
from vsperf.traffic.ports import GenPort

LOOPBACK_IPV4 = "127.0.0.1"


@dataclass(frozen=True)
class Endpoint:
    """One end of a benchmark: a namespace (None: the root namespace) and its IPv4 address."""

    netns: str | None
    ipv4: str


@dataclass(frozen=True)
class BenchEnv:
    """What a benchmark needs from the run: a way to run commands and the deployment's ports.

    Without ports (no lab: a simulated or absent deployment) both ends are loopback.
    """

    executor: Executor
    work_dir: Path
    ports: Sequence[GenPort] = ()
    mtu_bytes: int = 1500  # IP MTU of the ports
    dut_ports: Sequence[tuple[str | None, str]] = ()  # (netns, ifname) of the DUT's ports facing them

    def endpoints(self) -> tuple[Endpoint, Endpoint]:
        """(client/sender, server/receiver): generator port 0 sends to generator port 1."""
        if len(self.ports) < 2:
            return Endpoint(None, LOOPBACK_IPV4), Endpoint(None, LOOPBACK_IPV4)
        return Endpoint(self.ports[0].netns, self.ports[0].ipv4), Endpoint(self.ports[1].netns, self.ports[1].ipv4)

    @property
    def where(self) -> str:
        """The path the benchmark's traffic takes, for results and the report."""
        if len(self.ports) < 2:
            return "loopback"
        return f"{self.ports[0].ifname}@{self.ports[0].netns} -> {self.ports[1].ifname}@{self.ports[1].netns}"

    def set_offloads(self, enabled: bool) -> str:
        """Turn the generator ports' transmit checksum and segmentation offloads on or off;
        returns what the results record. Off, the namespaces' kernel stacks hand the switch
        finished, MTU-sized frames, as a NIC without offloads does: a switch that takes frames
        from its veth with AF_XDP or DPDK (ovs afxdp, ovs-dpdk) never completes a partial
        checksum nor splits a TCP super-frame, and its far end would drop them."""
        if len(self.ports) < 2:
            return "loopback (no ports)"
        state = "on" if enabled else "off"
        for port in self.ports:
            self.executor.run(["ethtool", "-K", port.ifname, "tx", state, "tso", state], netns=port.netns)
        return f"tx checksum and TSO {state} on the generator ports"

