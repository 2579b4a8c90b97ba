"""A TestSteps list is checked as a whole: VSPERF's syntax read, every mistake one line naming the step."""

from __future__ import annotations

import pytest

from vsperf.errors import ConfigError
from vsperf.steps.model import parse_steps, step_vnfs


def error(steps: list[object]) -> str:
    with pytest.raises(ConfigError) as info:
        parse_steps("t", steps)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_vsperf_syntax() -> None:
    steps = parse_steps("t", [
        ["vswitch", "add_switch", "int_br0"],
        ["#port", "vswitch", "add_phy_port", "int_br0"],
        ["!vswitch", "add_flow", "int_br0", {"in_port": "#STEP[port][1]", "actions": ["output:#STEP[-1][1]"]}],
        ["tools", "Exec_Shell", "ovs-vsctl show", "|Bridge (\\S+)"],
        ["tools", "Assert", "len(#STEP[-1]) == 1"],
        ["vnf2", "start"], ["VNF0", "execute_and_wait", "ip a"], ["sleep", "1"], ["wait"], ["log", "info", "x"],
        ["vnf1", "stop"],
    ])
    assert [s.index for s in steps] == list(range(11))
    assert (steps[1].label, steps[1].obj, steps[1].action, steps[1].args) == ("port", "vswitch", "add_phy_port",
                                                                              ("int_br0",))
    assert not steps[2].check and steps[0].check
    assert (steps[3].action, steps[3].regex, steps[3].args) == ("exec_shell", "Bridge (\\S+)", ("ovs-vsctl show",))
    assert steps[4].action == "assert" and steps[5].kind == "vnf" and steps[6].kind == "VNF"
    assert (steps[7].kind, steps[7].action, steps[7].args) == ("sleep", "", ("1",))
    assert step_vnfs(steps) == ["vnf2", "vnf1"]  # VNF i: the order of first appearance, VSPERF's


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ([["vswich", "add_switch", "b"]], "test t: step 0 [\"vswich\", \"add_switch\", \"b\"]: unknown object "
                                          "'vswich' (did you mean 'vswitch'?)"),
        ([["vswitch", "add_swich", "b"]], "step 0 [\"vswitch\", \"add_swich\", \"b\"]: unknown action 'add_swich' "
                                          "of vswitch (did you mean 'add_switch'?)"),
        ([["vswitch", "add_switch", "b"], ["vswitch", "del_port", "b", "#STEP[5][0]"]],
         "step 1 [\"vswitch\", \"del_port\", \"b\", \"#STEP[5][0]\"]: #STEP[5] refers to step 5, which does not "
         "come before step 1"),
        ([["vswitch", "del_port", "b", "#STEP[0][0]"]], "#STEP[0] refers to step 0, which does not come before step 0"),
        ([["vswitch", "add_switch", "b"], ["tools", "assert", "#STEP[-2]"]],
         "#STEP[-2] refers to a step before the first"),
        ([["vswitch", "del_port", "b", "#STEP[nolabel][0]"]],
         "#STEP[nolabel] names no earlier step (labels so far: none)"),
        ([["#p", "vswitch", "add_switch", "b"], ["#p", "vswitch", "add_switch", "c"]],
         "label #p is already the label of step 0"),
        ([["#1", "vswitch", "add_switch", "b"]], "label #1 must start with a letter"),
        ([["vswitch", "add_switch"]], "vswitch add_switch takes 1..2 argument(s), got 0"),
        ([["vswitch", "dump_flows", "a", "b"]], "vswitch dump_flows takes 1 argument(s), got 2"),
        ([["tools", "exec_python", "import os"]], "vsperf does not run tools exec_python: it runs Python code"),
        ([["vswitch", "run_vppctl", ["show"]]], "a VPP command (VPP is not packaged"),
        ([["settings", "setValue", "TRAFFICGEN_IXNET_TCL_SCRIPT", "x.tcl"]],
         "vsperf does not set TRAFFICGEN_IXNET_TCL_SCRIPT: it picks the IxNetwork Tcl script"),
        ([["VNF0", "start"]], "the deployment started this VNF"),
        ([["pdb"]], "starts Python's debugger"),
        ([["tools", "exec_shell", "echo 'open"]], "tools exec_shell: No closing quotation in \"echo 'open\""),
        ([["tools", "exec_shell", " "]], "tools exec_shell: an empty command"),
        ([["tools", "exec_shell", ["ls"]]], "tools exec_shell takes a command line (a string)"),
        ([["VNF0", "execute_and_wait", "echo \"x"]], "VNF0 execute_and_wait: No closing quotation"),
        ([["tools", "exec_shell", "x", "|(unclosed"]], "the filter |(unclosed is not a valid regular expression"),
        (["vswitch"], "a step is a list [object, action, arguments...]"),
        ([[]], "a step starts with an object name"),
        ([["vswitch"]], "vswitch needs an action (add_connection,"),
        ("nope", "TestSteps must be a list of steps"),
    ],
)
def test_every_mistake_names_the_step(steps: list[object], message: str) -> None:
    assert message in error(steps)


def test_shell_syntax_is_the_commands_to_use() -> None:
    commands = ["ovs-vsctl show | grep br", 'echo $((1+`wc -l $_LOG | cut -d" " -f1`))',
                "tcpdump -c 5 -w d.pcap 2>/dev/null &", "sed -n '#STEP[-1][0],$ p' $_LOG; true"]
    steps = parse_steps("t", [["tools", "exec_shell", "true"], *[["tools", "exec_shell", c] for c in commands]])
    assert [step.args[0] for step in steps[1:]] == commands


def test_macros_in_exec_shell_are_not_shell_syntax() -> None:
    steps = parse_steps("t", [["tools", "exec_shell", "sudo $TOOLS['ovs-vsctl'] show", "|(dpdk\\d)$"],
                              ["tools", "exec_shell", "ip link set #STEP[-1][0] up"]])
    assert steps[1].args == ("ip link set #STEP[-1][0] up",)
