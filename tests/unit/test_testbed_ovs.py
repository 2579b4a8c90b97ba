"""The testbed's private OVS: its directory, its flows, and the one thing it refuses."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import IO, cast

import pytest

from vsperf.errors import DeploymentError
from vsperf.executor import Executor, Process
from vsperf.testbed.journal import PortJournal
from vsperf.testbed.model import Testbed, TestbedHost
from vsperf.testbed.ovs import NETDEV_IF, RemoteOvs, ovs_dir, p2p_flows
from vsperf.testbed.session import TestbedSession


class HostWithOvs:
    """A host where another OVS userspace datapath already runs (its interface exists)."""

    host = "dut"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def run(self, argv: Sequence[str], *, netns: str | None = None, check: bool = True,
            timeout_s: float | None = 60.0, env: Mapping[str, str] | None = None,
            input_text: str | None = None) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(argv))
        return subprocess.CompletedProcess(list(argv), 0, "", "")

    def spawn(self, argv: Sequence[str], *, netns: str | None = None, env: Mapping[str, str] | None = None,
              stdout: IO[bytes] | int | None = None, stderr: IO[bytes] | int | None = None,
              stdin: int | None = None) -> Process:
        raise AssertionError("not here")

    def put(self, local: Path, remote: PurePosixPath | str, *, mode: int | None = None) -> None:
        raise AssertionError("not here")

    def get(self, remote: PurePosixPath | str, local: Path) -> None:
        raise AssertionError("not here")


def test_another_userspace_ovs_on_the_host_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    host = HostWithOvs()
    testbed = Testbed("lab.yaml", (TestbedHost("dut"),), "dut", "dut", ())
    session = TestbedSession(testbed, cast(dict[str, Executor], {"dut": host}), PortJournal.create(tmp_path, "abc123"))
    with pytest.raises(DeploymentError, match=rf"^host dut: another Open vSwitch .*\({NETDEV_IF} exists\)"):
        RemoteOvs(session, "dut", "abc123").start()
    assert host.calls == [["ip", "link", "show", "dev", NETDEV_IF]] and not session.journal.path.exists()


def test_directory_and_flows() -> None:
    assert ovs_dir("abc123") == PurePosixPath("/tmp/vsperf-abc123-ovs")
    assert p2p_flows() == ["priority=1,in_port=1,actions=output:2", "priority=1,in_port=2,actions=output:1"]
    with pytest.raises(ValueError):
        p2p_flows(3)
