"""The objects and actions a TestSteps list may name: VSPERF's, each with the arguments it takes,
and why vsperf refuses the few it does not run.

A step is `[object, action, arg...]` (`['vswitch', 'add_flow', 'int_br0', {...}]`); `sleep`, `wait`
and `log` take their arguments right after the object. VSPERF's `tools` actions are matched
ignoring case (VSPERF called them title-cased: `assert` runs `Assert`). Step VNFs are `vnf`,
`vnf1`, `vnf2`, ... (started and stopped by the steps); `VNF0`, `VNF1`, ... are the VNFs the
test's deployment started (pvp, pvvp), which steps may use but not start or stop.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from vsperf.config.vsperf_compat import VPP_MISSING

STEP_VNF_RE = re.compile(r"vnf(\d*)|vnf_[A-Za-z0-9_]+")  # fullmatch: vnf, vnf1, vnf_trex
SCENARIO_VNF_RE = re.compile(r"VNF(\d+)")
EXEC_PYTHON_REFUSED = ("it runs Python code from the test definition; vsperf never runs code from its "
                       "inputs (use tools exec_shell, tools eval or tools assert)")


# Settings a `settings setValue` step may not set: what they choose, vsperf does not do.
REFUSED_SETTINGS = {
    "TRAFFICGEN_IXNET_TCL_SCRIPT": ("it picks the IxNetwork Tcl script that builds the Ixia's frames (upstream's "
                                    "checksum tests send random IP or UDP checksums with it); vsperf drives an Ixia "
                                    "through OTG, and its generators send valid checksums"),
}


@dataclass(frozen=True)
class Action:
    """An action of an object: its argument count bounds, or why it is refused."""

    min_args: int
    max_args: int
    refused: str = ""  # why vsperf does not run it ("" when it does)


def _a(min_args: int, max_args: int | None = None, refused: str = "") -> Action:
    return Action(min_args, min_args if max_args is None else max_args, refused)


_VPP_ACTION = _a(1, 2, f"a VPP command ({VPP_MISSING})")

ACTIONS: dict[str, dict[str, Action]] = {
    "vswitch": {
        "add_switch": _a(1, 2), "del_switch": _a(1), "add_phy_port": _a(1), "add_vport": _a(1),
        "del_port": _a(2), "add_flow": _a(2, 3), "del_flow": _a(1, 2), "dump_flows": _a(1),
        "add_connection": _a(3, 4), "del_connection": _a(1, 3), "dump_connections": _a(1), "get_ports": _a(1),
        "add_tunnel_port": _a(2, 4), "add_route": _a(3), "set_tunnel_arp": _a(3), "restart": _a(0),
        "enable_stp": _a(1), "disable_stp": _a(1), "enable_rstp": _a(1), "disable_rstp": _a(1),
        "run_vppctl": _VPP_ACTION,
    },
    "vnf": {"start": _a(0), "stop": _a(0), "execute": _a(1, 2), "execute_and_wait": _a(1, 3)},
    "VNF": {"execute": _a(1, 2), "execute_and_wait": _a(1, 3),
            "start": _a(0, 0, "the deployment started this VNF: a step may not start or stop it"),
            "stop": _a(0, 0, "the deployment started this VNF: a step may not start or stop it")},
    "trafficgen": {"send_traffic": _a(0, 1), "get_results": _a(0),
                   "send_traffic_async": _a(1, 2, "asynchronous traffic with a callback needs Python code"),
                   "stop_traffic": _a(0, 0, "there is no asynchronous traffic to stop")},
    "settings": {"getValue": _a(1), "setValue": _a(2), "resetValue": _a(1)},
    "namespace": {"create_namespace": _a(1), "delete_namespace": _a(1), "assign_port_to_namespace": _a(2, 3),
                  "add_ip_to_namespace_eth": _a(4), "reset_port_to_root": _a(2)},
    "veth": {"add_veth_port": _a(2), "del_veth_port": _a(2), "bring_up_eth_port": _a(1, 2)},
    "tools": {"assert": _a(1), "eval": _a(1), "exec_shell": _a(1, 2), "exec_shell_background": _a(1),
              "exec_python": _a(1, 1, EXEC_PYTHON_REFUSED)},
    "log": {"debug": _a(1), "info": _a(1), "warning": _a(1), "error": _a(1)},
}
# Objects without an action: their arguments follow the object.
BARE_OBJECTS: dict[str, Action] = {
    "sleep": _a(1), "wait": _a(0),
    "pdb": _a(0, 0, "it starts Python's debugger; run vsperf under pdb yourself instead"),
}


def object_kind(name: str) -> str | None:
    """The table entry of object `name` (`vnf2` -> `vnf`, `VNF0` -> `VNF`), None when unknown."""
    if name in ACTIONS or name in BARE_OBJECTS:
        return name
    if STEP_VNF_RE.fullmatch(name):
        return "vnf"
    if SCENARIO_VNF_RE.fullmatch(name):
        return "VNF"
    return None


def known_objects() -> list[str]:
    return sorted([*ACTIONS, *BARE_OBJECTS, "vnf1", "VNF0"])


def closest(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def find_action(kind: str, action: str) -> tuple[str, Action] | None:
    """The canonical name and entry of `action` of object kind `kind` (tools: any case)."""
    table = ACTIONS[kind]
    if action in table:
        return action, table[action]
    if kind == "tools" and action.lower() in table:
        return action.lower(), table[action.lower()]
    return None
