"""What a test may do to the switch under test: restart it and flush its learned addresses
(VSwitch.restart / forget_addresses; no switch started: commands are recorded)."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import IO, Any

import pytest

from vsperf.host.workdir import RunContext
from vsperf.errors import CommandError, DeploymentError
from vsperf.lab.env import LabEnv
from vsperf.host.names import RunNames
from vsperf.lab.state import RunState
from vsperf.vswitch.base import ForwardingPlan, ForwardRule, SwitchPort, VSwitch
from vsperf.vswitch.host import SwitchHost
from vsperf.vswitch.linux_bridge import LinuxBridgeVSwitch
from vsperf.vswitch.ovs import NORMAL_FLOW, OvsVSwitch

PHY = (SwitchPort("phy0", "veth", "phy", ifname="p0"), SwitchPort("phy1", "veth", "phy", ifname="p1"))
PLAN = ForwardingPlan(PHY, (ForwardRule("phy0", "phy1"), ForwardRule("phy1", "phy0")))


class RecordingExecutor:
    """Records commands (with their namespace); fails those containing `fail`."""

    def __init__(self, fail: str = "") -> None:
        self.fail = fail
        self.calls: list[tuple[str | None, list[str]]] = []

    def run(self, argv: Sequence[str], *, netns: str | None = None, check: bool = True,
            timeout_s: float | None = 60.0, env: Mapping[str, str] | None = None,
            input_text: str | None = None) -> subprocess.CompletedProcess[str]:
        self.calls.append((netns, list(argv)))
        if self.fail and self.fail in argv:
            raise CommandError(list(argv), 1, "RTNETLINK answers: No such device")
        return subprocess.CompletedProcess(list(argv), 0, "", "")

    def spawn(self, argv: Sequence[str], *, netns: str | None = None, env: Mapping[str, str] | None = None,
              stdout: IO[bytes] | int | None = None, stderr: IO[bytes] | int | None = None
              ) -> subprocess.Popen[bytes]:
        raise AssertionError("not used")


def ctx(tmp_path: Path, executor: Any) -> RunContext:
    return RunContext("abc123", tmp_path, tmp_path, executor)


class PlainSwitch(VSwitch):
    """A switch that implements only what every switch must."""

    NAME = "plain"

    def version(self) -> str:
        return "1"

    def start(self, lab: SwitchHost) -> None:
        pass

    def configure(self, plan: ForwardingPlan) -> None:
        pass

    def stop(self) -> None:
        pass


def test_a_switch_without_the_hooks_says_it_cannot(tmp_path: Path) -> None:
    switch = PlainSwitch({}, ctx(tmp_path, RecordingExecutor()))
    with pytest.raises(DeploymentError, match="cannot be restarted"):
        switch.restart()
    with pytest.raises(DeploymentError, match="does not learn"):
        switch.forget_addresses()


def bridge(tmp_path: Path, executor: RecordingExecutor) -> LinuxBridgeVSwitch:
    switch = LinuxBridgeVSwitch({}, ctx(tmp_path, executor))
    switch._lab = SimpleNamespace(switch_netns="vspsw")  # type: ignore[assignment]
    switch._bridges = ["br0", "br1"]
    return switch


def test_linux_bridge_restart_takes_every_bridge_down_then_up(tmp_path: Path) -> None:
    executor = RecordingExecutor()
    bridge(tmp_path, executor).restart()
    assert executor.calls == [("vspsw", ["ip", "link", "set", "dev", name, state])
                              for state in ("down", "up") for name in ("br0", "br1")]


def test_linux_bridge_forget_flushes_each_fdb(tmp_path: Path) -> None:
    executor = RecordingExecutor()
    bridge(tmp_path, executor).forget_addresses()
    assert executor.calls == [("vspsw", ["ip", "link", "set", "dev", name, "type", "bridge", "fdb_flush"])
                              for name in ("br0", "br1")]


def test_linux_bridge_errors_are_deployment_errors(tmp_path: Path) -> None:
    with pytest.raises(DeploymentError, match="No such device"):
        bridge(tmp_path, RecordingExecutor(fail="down")).restart()
    with pytest.raises(DeploymentError, match="configure"):
        LinuxBridgeVSwitch({}, ctx(tmp_path, RecordingExecutor())).forget_addresses()


def test_ovs_needs_a_configured_bridge(tmp_path: Path) -> None:
    switch = OvsVSwitch({}, ctx(tmp_path, RecordingExecutor()))
    with pytest.raises(DeploymentError):
        switch.restart()
    with pytest.raises(DeploymentError, match="configure"):
        switch.forget_addresses()


@pytest.mark.parametrize(("mode", "expected"), [
    ("ports", ["idle_timeout=0,in_port=1,actions=output:2", "idle_timeout=0,in_port=2,actions=output:1"]),
    ("normal", [NORMAL_FLOW]),
])
def test_ovs_flow_mode(tmp_path: Path, mode: str, expected: list[str]) -> None:
    executor = RecordingExecutor()
    switch = OvsVSwitch({"VSWITCH_FLOW_MODE": mode}, ctx(tmp_path, executor))
    switch._dir, switch._bridge = tmp_path, "br0"
    switch._lab = LabEnv(ctx(tmp_path, executor), RunNames("abc123"), RunState("abc123", root=tmp_path / "state"))
    switch._program_flows(PLAN)
    assert (tmp_path / "flows.txt").read_text().splitlines() == expected
    assert [argv for _, argv in executor.calls] == [["ovs-ofctl", "del-flows", "br0"],
                                                    ["ovs-ofctl", "add-flows", "br0", str(tmp_path / "flows.txt")]]


def test_ovs_forget_flushes_the_bridge_fdb(tmp_path: Path) -> None:
    executor = RecordingExecutor()
    switch = OvsVSwitch({}, ctx(tmp_path, executor))
    switch._dir, switch._bridge = tmp_path, "br0"
    switch.forget_addresses()
    argv = executor.calls[0][1]
    assert argv[0] == "ovs-appctl" and argv[-2:] == ["fdb/flush", "br0"]
    assert str(tmp_path / "ovs-vswitchd.ctl") in argv
