"""The Linux kernel bridge as the switch under test.

A learning bridge cannot be told "in_port=1 -> output:2", so the plan's rules are turned into
bridges that connect exactly the ports the rules connect: p2p is one bridge {phy0, phy1};
pvp is {phy0, vnf0.0} and {vnf0.1, phy1}; a chain of N VNFs N + 1 two-port bridges. A two-port
bridge forwards each frame to the other port whatever its addresses, like the flows would.
Rules that split one ingress port between several egress ports (pvpv) cannot be expressed
and are refused. VLAN push (Frame Modification "vlan") uses bridge VLAN filtering: untagged
frames enter the VLAN of the port's PVID and leave a generator port tagged.

Reset (`restart`): every bridge is taken down and up again (its ports stop forwarding and its
learned addresses go; with STP off and no forward delay they forward again as soon as it is up).
`forget_addresses` flushes the bridges' forwarding databases (`ip link set BR type bridge fdb_flush`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, ClassVar

from vsperf.errors import CommandError, DeploymentError, PrerequisiteError
from vsperf.executor import Executor
from vsperf.host.host import Host
from vsperf.vswitch.base import ForwardingPlan, PortKind, VSwitch

log = logging.getLogger(__name__)


def _built_with(config: str, option: str) -> bool:
    """Whether kernel config text `config` builds `option` in or as a module."""
    return f"\n{option}=y" in config or f"\n{option}=m" in config


def host_kernel_config_option(executor: Executor, option: str) -> bool | None:
    """Whether the running kernel of the executor's host (a testbed's DUT host, or this machine)
    was built with `option`: its /boot/config-$(uname -r), else its /proc/config.gz, read there
    (None: neither is readable)."""
    try:
        release = executor.run(["uname", "-r"], timeout_s=10).stdout.strip()
        for argv in (["cat", f"/boot/config-{release}"], ["gzip", "-dc", "/proc/config.gz"]):
            proc = executor.run(argv, check=False, timeout_s=30)
            if proc.returncode == 0 and proc.stdout:
                return _built_with(proc.stdout, option)
    except CommandError as exc:
        log.debug("host %s: kernel config not read: %s", executor.host, exc)
    return None


def bridge_groups(plan: ForwardingPlan) -> list[list[str]]:
    """Ports grouped into bridges: the connected components of the rules, in plan order.

    Raises DeploymentError when one ingress port forwards to several ports (a learning
    bridge would flood to all of them).
    """
    targets: dict[str, set[str]] = {}
    for rule in plan.rules:
        targets.setdefault(rule.in_port, set()).add(rule.out_port)
    split = {port: outs for port, outs in targets.items() if len(outs) > 1}
    if split:
        source, outs = next(iter(split.items()))
        raise DeploymentError(
            f"linux-bridge cannot split traffic from {source} between {', '.join(sorted(outs))}; "
            "use an OpenFlow switch (ovs) for this deployment"
        )
    parent = {p.name: p.name for p in plan.ports}

    def root(name: str) -> str:
        while parent[name] != name:
            name = parent[name]
        return name

    for rule in plan.rules:
        parent[root(rule.in_port)] = root(rule.out_port)
    groups: dict[str, list[str]] = {}
    for member in plan.ports:
        groups.setdefault(root(member.name), []).append(member.name)
    return [members for members in groups.values() if len(members) > 1]


class LinuxBridgeVSwitch(VSwitch):
    """Linux kernel bridge(s) connecting the ports as the deployment's flows would."""

    NAME: ClassVar[str] = "linux-bridge"
    TUNNEL_TYPES: ClassVar[tuple[str, ...]] = ("vxlan", "gre", "geneve")  # where the kernel has the device
    ALIASES: ClassVar[tuple[str, ...]] = ("LinuxBridge",)
    PORT_KINDS: ClassVar[frozenset[PortKind]] = frozenset({"veth"})
    SUPPORTS_MATCH: ClassVar[bool] = False

    def __init__(self, settings: Mapping[str, Any], host: Host) -> None:
        super().__init__(settings, host)
        self._netns: str | None = None
        self._started = False
        self._bridges: list[str] = []
        self._note = ""
        self._version = ""

    def check_prerequisites(self) -> None:
        if host_kernel_config_option(self.host.executor, "CONFIG_BRIDGE") is False:
            raise PrerequisiteError(f"{self._kernel()} has no bridge support (CONFIG_BRIDGE): use --vswitch ovs")

    def check_vlan_support(self) -> None:
        """PrerequisiteError when the switch host's kernel (a testbed's DUT host, or this
        machine) is known to lack bridge VLAN filtering."""
        if host_kernel_config_option(self.host.executor, "CONFIG_BRIDGE_VLAN_FILTERING") is False:
            raise PrerequisiteError(
                f"linux-bridge cannot push VLAN tags on {self._kernel()} (CONFIG_BRIDGE_VLAN_FILTERING is off): "
                "use --vswitch ovs for Frame Modification vlan"
            )

    def _kernel(self) -> str:
        """The switch host's kernel, for messages."""
        return "this kernel" if self.host.local else f"the kernel of host {self.host.name}"

    def version(self) -> str:
        """The release of the switch host's kernel (the bridge is part of it)."""
        if not self._version:
            try:
                self._version = self.host.kernel_release()
            except DeploymentError as exc:
                return f"unknown ({exc})"
        return self._version

    def bridges(self) -> tuple[str, ...]:
        return tuple(self._bridges)

    def details(self) -> dict[str, str]:
        info = {"bridges": " ".join(self._bridges) or "none"}
        if self._note:
            info["note"] = self._note
        return info

    def start(self, netns: str | None) -> None:
        # Nothing to launch: the bridge is part of the kernel.
        self._netns, self._started = netns, True

    def configure(self, plan: ForwardingPlan) -> None:
        self._require_started()
        net, ns = self.host.net, self._netns
        if any(rule.match for rule in plan.rules):
            # Pre-installed per-stream flows or flow_type IP: a bridge forwards every stream anyway.
            self._note = "per-stream/IP flows not applicable: the bridge forwards by MAC learning"
        push = {rule.out_port: rule.push_vlan_id for rule in plan.rules if rule.push_vlan_id is not None}
        vlan_ids = set(push.values())
        if len(vlan_ids) > 1:
            raise DeploymentError(f"linux-bridge can push one VLAN id per deployment, got {sorted(vlan_ids)}")
        for index, members in enumerate(bridge_groups(plan)):
            name = self.host.names.bridge(index)
            net.add_bridge(name, ns, vlan_filtering=bool(vlan_ids))
            self._bridges.append(name)  # only once it is ours: stop deletes no one else's bridge
            for member in members:
                port = plan.port(member)
                net.enslave(port.ifname, name, ns)
                if port.role == "phy" and port.tunable:
                    self._gro_on(port.ifname)
                if vlan_ids:
                    # PVID: untagged frames enter VLAN vid; they leave tagged where a push is asked.
                    net.bridge_vlan(port.ifname, ns, next(iter(vlan_ids)), pvid=True, untagged=member not in push)

    def _gro_on(self, ifname: str) -> None:
        """GRO on the switch end of a generator port's veth: with it, veth takes XDP frames (its
        NAPI path), so vsgen transmits XDP live frames into the bridge instead of falling back to
        AF_PACKET; the bridge still forwards every frame (UDP is not aggregated when forwarding)."""
        try:
            self.host.executor.run(["ethtool", "-K", ifname, "gro", "on"], netns=self._netns, timeout_s=10.0)
        except CommandError as exc:
            raise DeploymentError(f"linux-bridge: {exc}") from exc

    def _ip_link(self, *args: str) -> None:
        try:
            self.host.executor.run(["ip", "link", "set", "dev", *args], netns=self._netns, timeout_s=10.0)
        except CommandError as exc:
            raise DeploymentError(f"linux-bridge: {exc}") from exc

    def restart(self) -> None:
        """Take every bridge down, then up again (see the module docstring)."""
        if not self._bridges:
            raise DeploymentError("linux-bridge: no bridge to restart (configure() not called)")
        for name in self._bridges:
            self._ip_link(name, "down")
        for name in self._bridges:
            self._ip_link(name, "up")

    def forget_addresses(self) -> None:
        """Flush the learned (dynamic) entries of every bridge's forwarding database."""
        if not self._bridges:
            raise DeploymentError("linux-bridge: no bridge whose addresses to flush (configure() not called)")
        for name in self._bridges:
            self._ip_link(name, "type", "bridge", "fdb_flush")

    def stop(self) -> None:
        if not self._started:
            return
        for name in reversed(self._bridges):
            try:
                self.host.net.del_link(name, self._netns)
            except CommandError as exc:  # the journal keeps it: teardown's release retries it
                log.warning("could not delete bridge %s: %s", name, exc)
        self._bridges.clear()
        self._started = False

    def _require_started(self) -> None:
        if not self._started:
            raise DeploymentError("linux-bridge: configure() called before start()")
