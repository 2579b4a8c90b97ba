"""A testbed's DUT host as the host of the lab's switch classes: its names, directories, files and
daemons (journaled by PID and start time, stopped only while they are the same process)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import IO, cast

import pytest
from vsperf.testbed.journal import PortJournal
from vsperf.testbed.session import TestbedSession
from vsperf.testbed.switch_host import RemoteDaemon, TestbedSwitchHost, host_bridge_name, host_dir

from vsperf.errors import DeploymentError
from vsperf.executor import Executor, Process
from vsperf.testbed.model import Testbed, TestbedHost

# /proc/PID/stat of a daemon whose command name has a space and a parenthesis; start time 4242
STAT = "4321 (ovs vswitchd) S 1 4321 4321 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 4242 0 0\n"


class Host:
    """A recording executor with a file system (dict) and one process (4321, started at 4242)."""

    host = "dut"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.files: dict[str, str] = {"/tmp/vsperf-abc123-ovs/x.pid": "4321\n", "/proc/4321/stat": STAT}
        self.modes: dict[str, int | None] = {}

    def run(self, argv: Sequence[str], *, netns: str | None = None, check: bool = True,
            timeout_s: float | None = 60.0, env: Mapping[str, str] | None = None,
            input_text: str | None = None) -> subprocess.CompletedProcess[str]:
        args = list(argv)
        self.calls.append(args)
        if args[0] == "cat":
            found = args[1] in self.files
            return subprocess.CompletedProcess(args, 0 if found else 1, self.files.get(args[1], ""), "")
        return subprocess.CompletedProcess(args, 0, "", "")

    def spawn(self, argv: Sequence[str], *, netns: str | None = None, env: Mapping[str, str] | None = None,
              stdout: IO[bytes] | int | None = None, stderr: IO[bytes] | int | None = None,
              stdin: int | None = None) -> Process:
        raise AssertionError("not here")

    def put(self, local: Path, remote: PurePosixPath | str, *, mode: int | None = None) -> None:
        self.files[str(remote)] = local.read_text()
        self.modes[str(remote)] = mode

    def get(self, remote: PurePosixPath | str, local: Path) -> None:
        raise AssertionError("not here")


def _host(tmp_path: Path) -> tuple[TestbedSwitchHost, Host]:
    host = Host()
    testbed = Testbed("lab.yaml", (TestbedHost("dut"),), "dut", "dut", ())
    session = TestbedSession(testbed, cast(dict[str, Executor], {"dut": host}), PortJournal.create(tmp_path, "abc123"))
    return TestbedSwitchHost(session, "dut", "abc123"), host


def test_names_and_directories_carry_the_run_id() -> None:
    assert host_bridge_name("abc123") == "vsperfabc123b0" and host_bridge_name("abc123", 1) == "vsperfabc123b1"
    assert host_dir("abc123", "ovs") == Path("/tmp/vsperf-abc123-ovs")
    with pytest.raises(ValueError):
        host_dir("abc123", "../etc")


def test_files_and_directories_are_the_hosts_and_removed_at_teardown(tmp_path: Path) -> None:
    switch_host, host = _host(tmp_path)
    d = switch_host.track_dir(switch_host.work_path("ovs"))
    switch_host.write_file(d / "flows.txt", "in_port=1,actions=output:2\n")
    assert host.files["/tmp/vsperf-abc123-ovs/flows.txt"] == "in_port=1,actions=output:2\n"
    assert host.modes["/tmp/vsperf-abc123-ovs/flows.txt"] == 0o600
    switch_host.remove_dirs()
    assert host.calls == [["mkdir", "-p", "-m", "700", "--", str(d)], ["rm", "-rf", "--", str(d)]]
    assert switch_host.switch_netns is None and not switch_host.owns_phy_ports


def test_a_daemon_is_journaled_by_pid_and_start_time_and_stopped_only_while_it_is_that_process(
        tmp_path: Path) -> None:
    switch_host, host = _host(tmp_path)
    daemon = switch_host.adopt("ovs-vswitchd", Path("/tmp/vsperf-abc123-ovs/x.pid"))
    assert isinstance(daemon, RemoteDaemon) and (daemon.pid, daemon.start_ticks) == (4321, 4242)
    journal = json.loads(switch_host.session.journal.path.read_text())
    assert [(p["host"], p["pid"], p["label"]) for p in journal["processes"]] == [("dut", 4321, "ovs-vswitchd")]
    assert daemon.alive()
    host.files["/proc/4321/stat"] = STAT.replace(" 4242 ", " 999 ")  # the PID was reused
    assert not daemon.alive()
    host.calls.clear()
    switch_host.stop(daemon)
    assert [c for c in host.calls if c[0] == "sh"] == []  # not signalled: not our process any more
    assert not switch_host.session.journal.path.exists()


def test_a_live_daemon_is_signalled_with_its_start_time_checked(tmp_path: Path) -> None:
    switch_host, host = _host(tmp_path)
    daemon = switch_host.adopt("ovsdb-server", Path("/tmp/vsperf-abc123-ovs/x.pid"))
    host.calls.clear()
    switch_host.stop(daemon, timeout_s=0.0)
    signals = [c for c in host.calls if c[0] == "sh"]
    assert signals and "4242" in signals[0][2] and "kill -15 -4321" in signals[0][2]


def test_a_daemon_without_a_pid_file_is_a_deployment_error(tmp_path: Path) -> None:
    switch_host = _host(tmp_path)[0]
    with pytest.raises(DeploymentError, match=r"host dut: ovs-vswitchd did not write a live PID"):
        switch_host.adopt("ovs-vswitchd", Path("/tmp/vsperf-abc123-ovs/missing.pid"), timeout_s=0.0)
