"""Host facts: this machine's environment (file reads against a fake tree, and the real host),
a testbed host's read through its executor, and ports' driver details from ethtool."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from recorded_host import RecordedHost

from vsperf import __version__
from vsperf.host.facts import HOST_FILES, collect_environment, describe_host, git_commit
from vsperf.remote.connection import HostLostError

KEYS = {
    "os",
    "kernel",
    "architecture",
    "cpu_model",
    "cpu_cores_logical",
    "cpu_cores_physical",
    "cpu_sockets",
    "memory_kb",
    "board",
    "hostname",
    "python",
    "vsperf_version",
    "vsperf_git_commit",
}
SHA = "22ffe5b07adeb514572dc3db8b435ef4107e348b"


def _put(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _cpuinfo(sockets: int, cores: int, threads: int) -> str:
    blocks = []
    n = 0
    for socket in range(sockets):
        for _ in range(threads):
            for core in range(cores):
                blocks.append(
                    f"processor\t: {n}\nmodel name\t: Intel(R) Xeon(R) CPU E5-2699 v3 @ 2.30GHz\n"
                    f"physical id\t: {socket}\ncore id\t\t: {core}\n"
                )
                n += 1
    return "\n".join(blocks)


def _fake_host(root: Path) -> None:
    _put(root, "etc/os-release", 'NAME="CentOS Linux"\nPRETTY_NAME="CentOS Linux 7 (Core)"\nID=centos\n')
    _put(root, "proc/sys/kernel/osrelease", "3.10.0-327.13.1.el7.x86_64\n")
    _put(root, "proc/sys/kernel/hostname", "pod3-node1\n")
    _put(root, "proc/cpuinfo", _cpuinfo(sockets=2, cores=18, threads=2))
    _put(root, "proc/meminfo", "MemTotal:       65696348 kB\nMemFree:  1 kB\n")
    _put(root, "sys/class/dmi/id/board_vendor", "Intel Corporation\n")
    _put(root, "sys/class/dmi/id/board_name", "S2600WTT\n")


def test_reads_the_host_files(tmp_path: Path) -> None:
    _fake_host(tmp_path)
    env = collect_environment(root=tmp_path)
    assert set(env) == KEYS
    assert env["os"] == "CentOS Linux 7 (Core)"
    assert env["kernel"] == "3.10.0-327.13.1.el7.x86_64"
    assert env["hostname"] == "pod3-node1"
    assert env["cpu_model"] == "Intel(R) Xeon(R) CPU E5-2699 v3 @ 2.30GHz"
    assert (env["cpu_cores_logical"], env["cpu_cores_physical"], env["cpu_sockets"]) == (72, 36, 2)
    assert env["memory_kb"] == 65696348
    assert env["board"] == "Intel Corporation S2600WTT"
    assert env["vsperf_version"] == __version__


def test_board_falls_back_to_the_system_and_ignores_placeholders(tmp_path: Path) -> None:
    _put(tmp_path, "sys/class/dmi/id/board_vendor", "To Be Filled By O.E.M.\n")
    _put(tmp_path, "sys/class/dmi/id/board_name", "Default string\n")
    _put(tmp_path, "sys/class/dmi/id/sys_vendor", "QEMU\n")
    _put(tmp_path, "sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)\n")
    assert collect_environment(root=tmp_path)["board"] == "QEMU Standard PC (Q35 + ICH9, 2009)"


def test_nothing_readable_is_unknown_not_an_error(tmp_path: Path) -> None:
    env = collect_environment(root=tmp_path / "empty")
    assert set(env) == KEYS
    assert env["os"] == "unknown"
    assert env["board"] == "unknown"
    assert env["memory_kb"] == "unknown"
    assert env["cpu_cores_physical"] == "unknown"
    assert isinstance(env["cpu_cores_logical"], int)  # os.cpu_count() still knows


def test_this_host() -> None:
    env = collect_environment()
    assert set(env) == KEYS
    assert isinstance(env["cpu_cores_logical"], int) and env["cpu_cores_logical"] >= 1
    assert env["kernel"] != "unknown"
    assert env["vsperf_git_commit"] is None or len(env["vsperf_git_commit"]) == 40


def test_git_commit_from_files(tmp_path: Path) -> None:
    assert git_commit(None, tmp_path) is None  # not a checkout
    _put(tmp_path, ".git/HEAD", "ref: refs/heads/main\n")
    assert git_commit(None, tmp_path) is None  # no commit yet
    _put(tmp_path, ".git/packed-refs", f"# pack-refs with: peeled\n{SHA} refs/heads/main\n")
    assert git_commit(None, tmp_path) == SHA
    other = "a" * 40
    _put(tmp_path, ".git/refs/heads/main", other + "\n")
    assert git_commit(None, tmp_path) == other
    _put(tmp_path, ".git/HEAD", SHA + "\n")  # detached
    assert git_commit(None, tmp_path) == SHA


class _Executor:
    def __init__(self, stdout: str = "", returncode: int = 0, error: Exception | None = None) -> None:
        self.stdout, self.returncode, self.error = stdout, returncode, error
        self.calls: list[list[str]] = []

    def run(
        self,
        argv: Sequence[str],
        *,
        netns: str | None = None,
        check: bool = True,
        timeout_s: float | None = 60.0,
        env: Mapping[str, str] | None = None,
        input_text: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(argv))
        if self.error:
            raise self.error
        return subprocess.CompletedProcess(list(argv), self.returncode, self.stdout, "")

    def spawn(self, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        raise AssertionError("sysinfo starts no process")


def test_git_commit_through_the_executor(tmp_path: Path) -> None:
    _put(tmp_path, ".git/HEAD", SHA + "\n")
    runner = _Executor(stdout="b" * 40 + "\n")
    assert git_commit(runner, tmp_path) == "b" * 40  # type: ignore[arg-type]
    assert runner.calls == [["git", "-C", str(tmp_path), "rev-parse", "HEAD"]]
    # git missing or failing: the files still say.
    assert git_commit(_Executor(error=FileNotFoundError("git")), tmp_path) == SHA  # type: ignore[arg-type]
    assert git_commit(_Executor(returncode=128), tmp_path) == SHA  # type: ignore[arg-type]


def test_port_details_from_ethtool() -> None:
    from vsperf.host.facts import parse_ethtool_driver, parse_ethtool_speed, port_details

    driver = "driver: ixgbe\nversion: 5.1.0-k\nfirmware-version: 0x61bd0001\nbus-info: 0000:05:00.0\n"
    assert parse_ethtool_driver(driver) == {
        "driver": "ixgbe", "driver_version": "5.1.0-k", "firmware": "0x61bd0001", "bus": "0000:05:00.0",
    }
    assert parse_ethtool_driver("driver: veth\nversion: 1.0\nfirmware-version: \nbus-info: \n") == {
        "driver": "veth", "driver_version": "1.0",
    }
    assert parse_ethtool_speed("Settings for g0:\n\tSpeed: 10000Mb/s\n\tDuplex: Full\n") == "10000Mb/s"
    assert parse_ethtool_speed("\tSpeed: Unknown!\n") is None

    class Missing:
        def run(self, argv: list[str], **kwargs: object) -> object:
            raise FileNotFoundError("ethtool")

    assert port_details(Missing(), "g0", "ns0") == {"driver": "unknown"}  # type: ignore[arg-type]


def test_a_hosts_facts_are_read_through_its_executor(tmp_path: Path) -> None:
    _fake_host(tmp_path)
    answers = {("cat", f"/{rel}"): [(tmp_path / rel).read_text()] for rel in HOST_FILES if (tmp_path / rel).exists()}
    answers[("ethtool", "-i", "ens1f0")] = ["driver: ixgbe\nversion: 5.1.0-k\nbus-info: 0000:05:00.0\n"]
    answers[("ethtool", "ens1f0")] = ["Settings for ens1f0:\n\tSpeed: 10000Mb/s\n"]
    dut = RecordedHost("dut", answers)
    info = describe_host(dut, ["ens1f0", "ens1f1"])
    assert info == {
        "os": "CentOS Linux 7 (Core)", "kernel": "3.10.0-327.13.1.el7.x86_64", "cpu_model":
        "Intel(R) Xeon(R) CPU E5-2699 v3 @ 2.30GHz", "cpu_cores_logical": 72, "cpu_cores_physical": 36,
        "cpu_sockets": 2, "memory_kb": 65696348, "board": "Intel Corporation S2600WTT", "hostname": "pod3-node1",
        "nics": [{"name": "ens1f0", "driver": "ixgbe", "driver_version": "5.1.0-k", "bus": "0000:05:00.0",
                  "speed": "10000Mb/s"},
                 {"name": "ens1f1", "driver": "unknown"}],  # ethtool knows nothing of it: said so
    }
    # every file through the host's executor, none of this machine's; nothing but reads
    assert [argv for argv, _ns in dut.commands][:len(HOST_FILES)] == [("cat", f"/{rel}") for rel in HOST_FILES]
    assert {argv[0] for argv, _ns in dut.commands} == {"cat", "ethtool"}


def test_a_host_that_answers_nothing_is_unknown_not_an_error() -> None:
    info = describe_host(RecordedHost("dut", {}), [])
    assert (info["os"], info["board"], info["memory_kb"], info["hostname"], info["nics"]) == (
        "unknown", "unknown", "unknown", "unknown", [])
    class Lost(RecordedHost):
        def run(self, *args: Any, **kwargs: Any) -> Any:
            raise HostLostError("lost the SSH connection to host dut")

    assert describe_host(Lost("dut", {}), [])["os"] == "unknown"  # a host lost meanwhile: said, not raised
    # nothing of this machine (the controller) is passed off as the host's
    assert (info["kernel"], info["cpu_model"], info["cpu_cores_logical"], info["cpu_cores_physical"]) == (
        "unknown", "unknown", "unknown", "unknown")
