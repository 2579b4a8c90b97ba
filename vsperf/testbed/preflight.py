"""The testbed check the CLI runs before anything is created: file, hosts, keys, ports."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path

from vsperf.errors import PrerequisiteError, UserError
from vsperf.executor import CommandLog
from vsperf.lab.state import DEFAULT_STATE_ROOT
from vsperf.testbed.checks import missing_tools
from vsperf.testbed.file import load_testbed
from vsperf.testbed.model import Testbed
from vsperf.testbed.session import TestbedSession

log = logging.getLogger(__name__)


class TestbedUnsupportedError(UserError):
    """The testbed is valid and reachable, but what the run asks of it is not supported yet."""

    __test__ = False


def check_testbed(path: Path, *, run_id: str, unsupported: str | None = None,
                  dut_tools: Mapping[str, str] | None = None, gen_tools: Mapping[str, str] | None = None,
                  dut_problems: Callable[[TestbedSession], str | None] | None = None,
                  state_root: Path = DEFAULT_STATE_ROOT, dut_ports: bool = True) -> Testbed:
    """Load the testbed file, connect to every host (host keys verified), check every port and
    restore the ports of a killed earlier run; UserError (exit 2) on any problem.

    `unsupported`: why a planned test cannot run on a testbed yet (see
    `vsperf.testbed.checks.unsupported_on_testbed`); such a run is refused here, after the
    checks, before anything is created. `dut_tools`: programs the DUT host must have (program ->
    Debian package; see `vsperf.testbed.checks.dut_tools`); `gen_tools`: those of the generator
    host (`vsperf.testbed.checks.gen_tools`). `dut_problems`: why the DUT ports or host cannot
    serve the plan (`vsperf.testbed.checks.dut_problems`: PCI ports, hugepages). `dut_ports`
    False: the DUT's ports are not checked (--mode trafficgen: the user's DUT).
    """
    testbed = load_testbed(path)
    session = TestbedSession.open(testbed, run_id=run_id, state_root=state_root, command_log=CommandLog(None),
                                  dut_ports=dut_ports)
    try:
        hosts = ", ".join(f"{h.name} ({'this machine' if h.is_local else h.ssh.label if h.ssh else ''})"
                          for h in testbed.hosts)
        log.info("testbed %s: hosts %s reachable, %d port(s) checked", path, hosts, len(testbed.cables))
        missing = None if unsupported else (
            missing_tools(session, dut_tools or {})
            or missing_tools(session, gen_tools or {}, host=testbed.trafficgen_host)
            or (dut_problems(session) if dut_problems else None))
    finally:
        session.close()
    if unsupported:
        raise TestbedUnsupportedError(
            f"testbed {path}: hosts and ports checked, but {unsupported}; run without --testbed, "
            f"or with --trafficgen dummy")
    if missing:
        raise PrerequisiteError(f"testbed {path}: {missing}")
    return testbed
