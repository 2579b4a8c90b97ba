"""tools, namespace and veth of TestSteps: commands run through a shell on the host's executor
(`sudo` runs its command), with the environment that points the OVS programs at the test's own
instance."""

from __future__ import annotations

import subprocess
from pathlib import PurePosixPath
from types import SimpleNamespace
from typing import Any, cast

import pytest
from recorded_host import RecordedHost

from vsperf.executor import Command
from vsperf.host.host import Host
from vsperf.steps.macros import StepError
from vsperf.steps.model import check_command
from vsperf.steps.tools import StepTools, shell_argv
from vsperf.vswitch.ovs import OvsVSwitch

OVS = cast(OvsVSwitch, SimpleNamespace(
    rundir=PurePosixPath("/tmp/vsperf-ab12-ovs"),
    ctl_socket=lambda daemon: PurePosixPath(f"/tmp/vsperf-ab12-ovs/{daemon}.ctl"),
    env=lambda: {"OVS_RUNDIR": "/tmp/vsperf-ab12-ovs"}))


def shell(command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(shell_argv(command), capture_output=True, text=True, timeout=10, check=False,
                          env={"PATH": "/usr/bin:/bin"})


def test_a_command_runs_through_a_shell_with_sudo_running_its_command() -> None:
    assert shell('echo $((1+`printf "a\\nb\\n" | wc -l`))').stdout == "3\n"
    assert shell("sudo echo a; sudo -E -n -- printf 'b c' | tr b x").stdout == "a\nx c"
    assert shell("x=1 && sudo sh -c 'echo in' > /dev/null; sudo false || echo failed").stdout == "failed\n"
    assert shell("sudo false").returncode == 1


def test_a_command_is_checked_before_it_runs() -> None:
    assert check_command("ovs-vsctl show | grep br && echo $((1+2)) 2>/dev/null &") == ""
    assert check_command("  ") == "an empty command"
    assert check_command(["ls"]) == "takes a command line (a string)"
    assert "No closing quotation" in check_command("echo 'open")


class EnvHost(RecordedHost):
    """Keeps each command's environment too."""

    def __init__(self, answers: dict[tuple[str, ...], list[str]]) -> None:
        super().__init__("local", answers)
        self.envs: list[dict[str, str] | None] = []

    def _complete(self, cmd: Command, timeout_s: float | None,
                  input_text: str | None) -> subprocess.CompletedProcess[str]:
        self.envs.append(dict(cmd.env) if cmd.env is not None else None)
        return super()._complete(cmd, timeout_s, input_text)


def tools(answers: dict[tuple[str, ...], list[str]]) -> tuple[StepTools, EnvHost]:
    executor = EnvHost(answers)
    host = cast(Host, SimpleNamespace(executor=executor,
                                      run=lambda argv, netns=None, **_: executor.run(argv, netns=netns).stdout))
    return StepTools(host, "vspab12s", OVS), executor


def test_exec_shell_runs_sh_in_the_switch_namespace_with_the_instances_environment() -> None:
    listing = tuple(shell_argv("sudo ovs-vsctl list-br | sort"))
    step, executor = tools({listing: ["br1\nint_br0\n"]})
    assert step.exec_shell("sudo ovs-vsctl list-br | sort", "(int_\\w+)") == ["int_br0"]
    assert executor.commands == [(listing, "vspab12s")]
    assert listing[:2] == ("sh", "-c") and listing[2].endswith("\nsudo ovs-vsctl list-br | sort")
    assert executor.envs == [{"OVS_RUNDIR": "/tmp/vsperf-ab12-ovs"}]
    with pytest.raises(StepError, match="the command exited with 1: No such file or directory"):
        step.exec_shell("ip link show nothing")
    with pytest.raises(StepError, match="an empty command"):
        step.exec_shell(" ")
    assert len(executor.commands) == 2


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
