"""tools, namespace and veth of TestSteps: programs run through the host's executor, never a shell,
the OVS programs pointed at the test's own instance."""

from __future__ import annotations

from pathlib import PurePosixPath
from types import SimpleNamespace
from typing import Any, cast

import pytest
from recorded_host import RecordedHost

from vsperf.host.host import Host
from vsperf.steps.macros import StepError
from vsperf.steps.tools import StepTools, ovs_argv
from vsperf.vswitch.ovs import OvsVSwitch

OVS = cast(OvsVSwitch, SimpleNamespace(
    rundir=PurePosixPath("/tmp/vsperf-ab12-ovs"),
    ctl_socket=lambda daemon: PurePosixPath(f"/tmp/vsperf-ab12-ovs/{daemon}.ctl"),
    env=lambda: {"OVS_RUNDIR": "/tmp/vsperf-ab12-ovs"}))


def test_ovs_programs_reach_the_tests_own_instance() -> None:
    argv, env = ovs_argv(["ovs-vsctl", "show"], OVS)
    assert argv == ["ovs-vsctl", "--db=unix:/tmp/vsperf-ab12-ovs/db.sock", "show"]
    assert env == {"OVS_RUNDIR": "/tmp/vsperf-ab12-ovs"}
    assert ovs_argv(["ovs-appctl", "dpif-netdev/pmd-rxq-show"], OVS)[0] == [
        "ovs-appctl", "-t", "/tmp/vsperf-ab12-ovs/ovs-vswitchd.ctl", "dpif-netdev/pmd-rxq-show"]
    assert ovs_argv(["ovs-appctl", "-t", "ovsdb-server", "x"], OVS)[0] == [
        "ovs-appctl", "-t", "/tmp/vsperf-ab12-ovs/ovsdb-server.ctl", "x"]
    assert ovs_argv(["ip", "link"], OVS) == (["ip", "link"], {})
    assert ovs_argv(["ovs-vsctl", "show"], None) == (["ovs-vsctl", "show"], {})


def tools(answers: dict[tuple[str, ...], list[str]]) -> tuple[StepTools, RecordedHost]:
    executor = RecordedHost("local", answers)
    host = cast(Host, SimpleNamespace(executor=executor,
                                      run=lambda argv, netns=None, **_: executor.run(argv, netns=netns).stdout))
    return StepTools(host, "vspab12s", OVS), executor


def test_exec_shell_runs_one_program_in_the_switch_namespace() -> None:
    step, executor = tools({("ovs-vsctl", "--db=unix:/tmp/vsperf-ab12-ovs/db.sock", "list-br"): ["int_br0\nbr1\n"]})
    assert step.exec_shell("sudo ovs-vsctl list-br", "(int_\\w+)") == ["int_br0"]
    assert step.exec_shell("ovs-vsctl list-br") == "int_br0\nbr1\n"
    assert executor.commands[0] == (("ovs-vsctl", "--db=unix:/tmp/vsperf-ab12-ovs/db.sock", "list-br"), "vspab12s")
    with pytest.raises(StepError, match="ip exited with 1: No such file or directory"):
        step.exec_shell("ip link show nothing")


def test_assert_and_eval_compute_without_running_code() -> None:
    step, _ = tools({})
    assert step.assert_("len(['a']) == 1 and 3 > 1")
    assert step.eval("'a/b.ko'.split('/')[-1]") == "b.ko"
    with pytest.raises(StepError, match="condition '2 > 3' is not true"):
        step.assert_("2 > 3")
    with pytest.raises(StepError, match="cannot evaluate \"__import__\\('os'\\)\": a call"):
        step.eval("__import__('os')")


def test_lab_addresses_only_in_the_benchmarking_range() -> None:
    step, executor = tools({("ip", "-n", "ns1", "addr", "add", "198.18.5.1/24", "dev", "v0"): [""]})
    step.add_ip_to_namespace_eth("v0", "ns1", "198.18.5.1", 24)
    with pytest.raises(StepError, match=r"address 10\.0\.0\.1 is outside 198\.18\.0\.0/15"):
        step.add_ip_to_namespace_eth("v0", "ns1", "10.0.0.1", 24)
    assert len(executor.commands) == 1


def test_a_simulated_dut_has_no_host() -> None:
    step = StepTools(None, None)
    with pytest.raises(StepError, match="the DUT is simulated"):
        step.exec_shell("ip link")
    assert step.check("eval", None, cast(Any, [])) is False
