"""What the report says about each testbed host: OS, kernel, CPU, memory, board, and its ports
(driver, firmware, PCI address), as seed 001 shows them for VSPERF's one host.

The host's files are read through its executor (`cat`, logged, over SSH when remote) into a
small tree shaped like its /, and the same readers as for this machine (vsperf.sysinfo) parse
that tree: one parser for local and remote hosts.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from vsperf.errors import VsperfError
from vsperf.executor import CommandLog, Executor
from vsperf.lab.state import DEFAULT_STATE_ROOT
from vsperf.sysinfo import board, cpu_info, hostname, kernel_release, memory_kb, os_name, port_details
from vsperf.testbed.file import load_testbed
from vsperf.testbed.session import TestbedSession

# The files vsperf.sysinfo's readers look at (relative to the host's /).
HOST_FILES = (
    "etc/os-release", "proc/sys/kernel/osrelease", "proc/sys/kernel/hostname", "proc/cpuinfo",
    "proc/meminfo", "sys/class/dmi/id/board_vendor", "sys/class/dmi/id/board_name",
    "sys/class/dmi/id/product_name", "sys/class/dmi/id/sys_vendor",
)


def describe_host(executor: Executor, interfaces: list[str]) -> dict[str, Any]:
    """OS, kernel, CPU, memory, board and host name of the executor's host, and `interfaces`'
    driver, firmware, PCI address and speed. Never fails: what cannot be read says so."""
    with tempfile.TemporaryDirectory(prefix="vsperf-host-") as tmp:
        root = Path(tmp)
        for rel in HOST_FILES:
            try:
                proc = executor.run(["cat", f"/{rel}"], check=False, timeout_s=10)
            except VsperfError:  # a file that cannot be read is reported "unknown", not fatal
                continue
            if proc.returncode == 0:
                target = root / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(proc.stdout, encoding="utf-8")
        info: dict[str, Any] = {"os": os_name(root), "kernel": kernel_release(root)}
        info.update(cpu_info(root))
        info.update({"memory_kb": memory_kb(root), "board": board(root), "hostname": hostname(root)})
    info["nics"] = [{"name": ifname, **port_details(executor, ifname)} for ifname in interfaces]
    return info


def describe_testbed(session: TestbedSession) -> list[dict[str, Any]]:
    """One entry per host of the testbed: its name, its roles and `describe_host`."""
    testbed = session.testbed
    entries = []
    for host in testbed.hosts:
        roles = [r for r, name in (("DUT", testbed.dut_host), ("traffic generator", testbed.trafficgen_host))
                 if name == host.name]
        interfaces = [ifname for (name, ifname) in session.checked if name == host.name]
        where = "this machine" if host.ssh is None else host.ssh.label
        entries.append({"name": host.name, "roles": roles or ["unused"], "address": where,
                        **describe_host(session.executors[host.name], interfaces)})
    return entries


def testbed_environment(path: Path, *, run_id: str, command_log: CommandLog,
                        state_root: Path = DEFAULT_STATE_ROOT) -> list[dict[str, Any]]:
    """`describe_testbed` of the testbed file at `path` (its commands go to `command_log`)."""
    with TestbedSession.open(load_testbed(path), run_id=run_id, state_root=state_root,
                             command_log=command_log) as session:
        return describe_testbed(session)
