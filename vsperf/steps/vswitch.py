"""The `vswitch` object of TestSteps on Open vSwitch (ovs and ovs-dpdk): VSPERF's actions on the
test's private OVS instance, each followed, unless the step starts with '!', by VSPERF's check
of its effect (the bridge is in `ovs-vsctl show`, the flow in `ovs-ofctl dump-flows`, ...).

Bridges keep the names the steps give them (`int_br0`): the switch runs in the run's own
namespace (step-driven tests deploy on the local lab), so they meet nothing else of the machine,
and the run's release deletes them with the namespace whatever happens. `add_phy_port` attaches
the next generator port's switch end, `add_vport` the next port of a step VNF (VNF i gets virtual
ports 2i and 2i+1, VSPERF's order): the VNF backend of the test makes both when its first one is
asked for.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vsperf.deploy.base import Deployment
from vsperf.errors import DeploymentError
from vsperf.steps.macros import StepError
from vsperf.vnf.base import Vnf
from vsperf.vswitch.base import SwitchPort
from vsperf.vswitch.ovs import OvsVSwitch

_IFNAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,15}")
VSPERF_PORT_NAMES = ("dpdk", "dpdkvhostuser", "dpdkvhostuserclient")  # port types named type + count
_KEEP_IN_CHECK = ("idle_timeout", "hard_timeout", "cookie")  # not shown as given by dump-flows


def flow_text(flow: Mapping[str, Any]) -> str:
    """VSPERF's flow dictionary in ovs-ofctl syntax: 'k=v,...' then 'actions=a,b' (no actions:
    a match, for del-flows and dump-flows)."""
    fields = [f"{key}={value}" if value != "" else str(key) for key, value in flow.items() if key != "actions"]
    if "actions" in flow:
        actions = flow["actions"]
        text = ",".join(str(a) for a in actions) if isinstance(actions, list | tuple) else str(actions)
        fields.append(f"actions={text}")
    return ",".join(fields)


def _match(flow: Mapping[str, Any]) -> str:
    return flow_text({k: v for k, v in flow.items() if k not in ("actions", *_KEEP_IN_CHECK)})


@dataclass
class StepVswitch:
    """VSPERF's vswitch actions on `switch` (its daemons started by the deployment)."""

    switch: OvsVSwitch
    deployment: Deployment
    netns: str | None  # where the switch runs on its host
    phy_ports: Sequence[SwitchPort]  # the generator ports' switch ends, in order
    make_vnf: Callable[[int], Vnf]  # step VNF i, constructed (not created)
    mtu_bytes: int = 1500
    vnf_offset: int = 0  # step VNF i is VNF vnf_offset + i of the host's names (after the deployment's)
    bridges: list[str] = field(default_factory=list)
    vnfs: dict[int, Vnf] = field(default_factory=dict)
    _next_phy: int = 0
    _next_vport: int = 0
    _tunnels: int = 0

    # --- helpers ------------------------------------------------------------------------------

    def _bridge(self, name: str) -> str:
        if not isinstance(name, str) or not _IFNAME_RE.fullmatch(name):
            raise StepError(f"bridge name {name!r}: 1-15 letters, digits, '_', '.' or '-'")
        return name

    def _ofport(self, iface: str) -> int:
        text = self.switch.vsctl("get", "Interface", iface, "ofport").strip()
        if not text.lstrip("-").isdigit() or int(text) < 1:
            error = self.switch.vsctl("get", "Interface", iface, "error").strip()
            raise StepError(f"port {iface} is not attached ({error or 'ofport ' + text})")
        return int(text)

    def _ports(self, bridge: str) -> dict[str, int]:
        names = self.switch.vsctl("list-ifaces", bridge).split()
        return {name: self._ofport(name) for name in names}

    def _attach(self, bridge: str, port: SwitchPort, iface: str, index: int) -> tuple[str, int]:
        port_type, options = self.switch.interface_config(port, index)
        if port_type in VSPERF_PORT_NAMES:  # OVS-DPDK: VSPERF's names (dpdk0, dpdkvhostuserclient0), its tests use them
            taken = self.switch.vsctl("--bare", "--columns=name", "find", "Interface", f"type={port_type}").split()
            iface = f"{port_type}{len(taken)}"
        self.switch.vsctl("add-port", bridge, iface, "--", "set", "Interface", iface, f"type={port_type}",
                          f"mtu_request={self.mtu_bytes}", *[f"options:{k}={v}" for k, v in options.items()])
        return iface, self._ofport(iface)

    def show(self) -> str:
        return self.switch.vsctl("show")

    def port_number(self, bridge: str, port: str) -> str:
        """A port given by name (as add_phy_port returned it) or by number, as an OpenFlow number."""
        if str(port).isdigit() or str(port) in ("LOCAL", "local"):
            return str(port)
        ports = self._ports(bridge)
        if port not in ports:
            raise StepError(f"bridge {bridge} has no port {port!r} (it has {', '.join(ports) or 'none'})")
        return str(ports[port])

    # --- VSPERF's actions ---------------------------------------------------------------------

    def add_switch(self, name: str, params: Sequence[str] | None = None) -> None:
        bridge = self._bridge(name)
        extra = [a for p in (params or []) for a in ("--", "set", "bridge", bridge, str(p))]
        self.switch.vsctl("add-br", bridge, "--", "set", "bridge", bridge, "datapath_type=netdev", *extra)
        self.switch.ofctl("del-flows", bridge)
        self.bridges.append(bridge)

    def del_switch(self, name: str) -> None:
        bridge = self._bridge(name)
        self.switch.ofctl("del-flows", bridge)
        self.switch.vsctl("del-br", bridge)
        if bridge in self.bridges:
            self.bridges.remove(bridge)

    def add_phy_port(self, bridge: str) -> tuple[str, int]:
        if self._next_phy >= len(self.phy_ports):
            raise StepError(f"no physical port left: the deployment has {len(self.phy_ports)} generator ports")
        port = self.phy_ports[self._next_phy]
        self._next_phy += 1
        return self._attach(self._bridge(bridge), port, port.ifname, self._next_phy - 1)

    def add_vport(self, bridge: str) -> tuple[str, int]:
        number = self._next_vport
        self._next_vport += 1
        index, side = divmod(number, 2)
        vnf = self.vnfs.get(index)
        if vnf is None:
            vnf = self.vnfs[index] = self.make_vnf(index)
            vnf.create(self.vnf_offset + index, self.mtu_bytes, self.netns)
        port = vnf.ports[side]
        iface = port.ifname or f"dpdkvhostuser{number}"
        return self._attach(self._bridge(bridge), port, iface, 2 + number)

    def add_tunnel_port(self, bridge: str, remote_ip: str, tunnel_type: str = "vxlan",
                        params: Sequence[str] | None = None) -> tuple[str, int]:
        name = f"{tunnel_type}{self._tunnels}"
        self._tunnels += 1
        self.switch.vsctl("add-port", self._bridge(bridge), name, "--", "set", "Interface", name,
                          f"type={tunnel_type}", f"options:remote_ip={remote_ip}",
                          *[str(p) for p in params or []])
        return name, self._ofport(name)

    def del_port(self, bridge: str, port: str) -> None:
        self.switch.vsctl("del-port", self._bridge(bridge), str(port))

    def get_ports(self, bridge: str) -> list[tuple[str, int]]:
        return list(self._ports(self._bridge(bridge)).items())

    def add_flow(self, bridge: str, flow: Mapping[str, Any], cache: str = "off") -> None:
        if not isinstance(flow, Mapping):
            raise StepError(f"add_flow takes a flow dictionary, got {type(flow).__name__}")
        self.switch.ofctl("add-flow", self._bridge(bridge), flow_text(flow))

    def del_flow(self, bridge: str, flow: Mapping[str, Any] | None = None) -> None:
        match = _match(flow or {})
        self.switch.ofctl("del-flows", self._bridge(bridge), *([match] if match else []))

    def dump_flows(self, bridge: str) -> str:
        return self.switch.ofctl("dump-flows", self._bridge(bridge))

    def add_connection(self, bridge: str, port1: str, port2: str, traffic: Any = None) -> None:
        if traffic:
            raise StepError("add_connection with per-stream flows (a traffic argument) is not supported; use "
                            "add_flow")
        self.add_flow(bridge, {"in_port": self.port_number(bridge, port1),
                               "actions": [f"output:{self.port_number(bridge, port2)}"], "idle_timeout": "0"})

    def del_connection(self, bridge: str, port1: str | None = None, port2: str | None = None) -> None:
        self.del_flow(bridge, {"in_port": self.port_number(bridge, port1)} if port1 else None)

    def dump_connections(self, bridge: str) -> str:
        return self.dump_flows(bridge)

    def add_route(self, bridge: str, network: str, destination: str) -> None:
        self.switch.appctl("ovs-vswitchd", "ovs/route/add", str(network), str(destination))

    def set_tunnel_arp(self, ip_addr: str, mac_addr: str, bridge: str) -> None:
        self.switch.appctl("ovs-vswitchd", "tnl/neigh/set", self._bridge(bridge), str(ip_addr), str(mac_addr))

    def restart(self) -> None:
        try:
            self.switch.restart_daemon()
        except DeploymentError as exc:
            raise StepError(str(exc)) from exc

    def _set_bridge(self, bridge: str, key: str, value: str) -> None:
        self.switch.vsctl("set", "bridge", self._bridge(bridge), f"{key}={value}")

    def enable_stp(self, bridge: str) -> None:
        self._set_bridge(bridge, "stp_enable", "true")

    def disable_stp(self, bridge: str) -> None:
        self._set_bridge(bridge, "stp_enable", "false")

    def enable_rstp(self, bridge: str) -> None:
        self._set_bridge(bridge, "rstp_enable", "true")

    def disable_rstp(self, bridge: str) -> None:
        self._set_bridge(bridge, "rstp_enable", "false")

    # --- VSPERF's checks (validate_<action>): False or StepError when the effect is missing ------

    def check(self, action: str, result: Any, args: Sequence[Any]) -> bool:
        """VSPERF's check of `action`'s effect (True for actions it did not check)."""
        bridge = str(args[0]) if args else ""
        show = self.show
        if action == "add_switch":
            return re.search(rf'Bridge ["\']?{re.escape(bridge)}["\']?', show()) is not None
        if action == "del_switch":
            return re.search(rf'Bridge ["\']?{re.escape(bridge)}["\']?\n', show() + "\n") is None
        if action in ("add_phy_port", "add_vport", "add_tunnel_port"):
            return re.search(rf'Interface ["\']?{re.escape(str(result[0]))}["\']?', show()) is not None
        if action == "del_port":
            return re.search(rf'Port ["\']?{re.escape(str(args[1]))}["\']?\n', show() + "\n") is None
        if action == "add_flow":
            return self.flow_present(bridge, args[1])
        if action == "del_flow":
            return not args[1:] or not args[1] or not self.flow_present(bridge, args[1])
        if action == "add_connection":
            return self.flow_present(bridge, {"in_port": self.port_number(bridge, args[1]),
                                              "actions": [f"output:{self.port_number(bridge, args[2])}"]})
        if action == "del_connection":
            return len(args) < 2 or not self.flow_present(bridge, {"in_port": self.port_number(bridge, args[1])})
        if action in ("enable_stp", "disable_stp", "enable_rstp", "disable_rstp"):
            key = "rstp_enable" if "rstp" in action else "stp_enable"
            value = self.switch.vsctl("get", "bridge", bridge, key).strip()
            return value == ("true" if action.startswith("enable") else "false")
        return True

    def flow_present(self, bridge: str, flow: Mapping[str, Any]) -> bool:
        """Whether a flow matching `flow` (and doing its actions) is in `bridge`'s table."""
        match = _match(flow)
        dump = self.switch.ofctl("dump-flows", bridge, *([match] if match else []))
        lines = [line for line in dump.splitlines() if "actions=" in line]
        if "actions" not in flow:
            return bool(lines)
        wanted = flow["actions"] if isinstance(flow["actions"], list | tuple) else [flow["actions"]]
        return any(all(str(a).lower() in line.lower().split("actions=", 1)[1] for a in wanted) for line in lines)
