"""What a test asks of a testbed's DUT host besides forwarding: its CPU/memory Load (VSPERF's
phy2phy_cpu_load, ...) and its Frame Modification (the VLAN the switch pushes).

Frame Modification follows the lab's rule (`vsperf.lab.topology.check_frame_modification`):
vlan, with VSWITCH_VLAN_ID; the testbed's deployment gives it to the lab's switch classes as
the lab does (a push on every rule towards a generator port) and tells the generator to expect
the tag on its ports.

The load generator classes (`vsperf.loadgen`) run their commands through the executor of their
`RunContext` and their processes on a `vsperf.loadgen.base.LoadHost`. On a testbed both are the
DUT host's: its executor (SSH, or this machine for a host `local`) and `TestbedLoadHost`, which
starts the processes through `TestbedSession.spawn` (recorded in the run's journal by PID and
start time) and stops them through `TestbedSession.stop_process`. A run killed with SIGKILL
leaves them in the journal: the next run with the testbed stops them (its group: the workers
too) before its checks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from vsperf.executor import Process
from vsperf.lab.cpus import online_cpu_count
from vsperf.lab.topology import check_frame_modification
from vsperf.loadgen.stressng import StressNgLoad
from vsperf.plan import PlannedTest
from vsperf.testbed.session import TestbedSession

# Load generators that run on a testbed's DUT host -> the programs they need there (program ->
# Debian package); `getconf` tells the host's CPU count (the load's workers).
LOADGEN_PROGRAMS: dict[str, Mapping[str, str]] = {
    StressNgLoad.NAME: {**StressNgLoad.PROGRAMS, "getconf": "libc-bin"},
}


def load_unsupported(pt: PlannedTest) -> str:
    """Why the test's Load cannot run on a testbed ("" when it can, or it has none)."""
    if not pt.test.load or pt.loadgen in LOADGEN_PROGRAMS:
        return ""
    return f"load generator {pt.loadgen} (only {', '.join(LOADGEN_PROGRAMS)} runs on a testbed's DUT host)"


def load_programs(pt: PlannedTest) -> Mapping[str, str]:
    """Programs the test's Load needs on the DUT host (program -> Debian package)."""
    if not pt.test.load or pt.simulated or pt.loadgen is None:
        return {}
    return LOADGEN_PROGRAMS.get(pt.loadgen, {})


def frame_modification_vlan(pt: PlannedTest) -> int | None:
    """The VLAN id the switch pushes for the test's Frame Modification (None: none); ConfigError
    for one the lab cannot apply either."""
    if check_frame_modification(pt.test.frame_modification) != "vlan":
        return None
    return int(pt.settings["VSWITCH_VLAN_ID"])


class TestbedLoadHost:
    """The DUT host of a testbed session, as the host of a load generator's processes."""

    __test__ = False

    def __init__(self, session: TestbedSession) -> None:
        self.session = session
        self.name: str | None = session.testbed.dut_host

    @property
    def _host(self) -> str:
        return self.session.testbed.dut_host

    def cpu_count(self) -> int:
        """Online CPUs of the DUT host (`getconf _NPROCESSORS_ONLN`, what os.cpu_count reads here)."""
        return online_cpu_count(self.session.dut)

    def spawn(self, label: str, argv: Sequence[str]) -> Process:
        """Start `argv` on the DUT host, recorded in the run's journal before this returns."""
        return self.session.spawn(self._host, label, argv)

    def stop(self, proc: Process, *, timeout_s: float) -> int | None:
        """Stop it by PID and forget it (a lost host's stays in the journal for the next run)."""
        return self.session.stop_process(self._host, proc, timeout_s=timeout_s)
