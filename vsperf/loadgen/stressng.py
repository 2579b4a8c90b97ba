"""`stress-ng` as VSPERF's load generator: CPU (pattern c), memory (m), both (cm) or I/O (i)."""

from __future__ import annotations

import logging
from typing import Any

from vsperf.errors import DeploymentError
from vsperf.host.process import HostProcess
from vsperf.loadgen.base import LoadGenerator
from vsperf.results.model import ComponentInfo

log = logging.getLogger(__name__)
STOP_TIMEOUT_S = 10.0


def stress_ng_argv(load: dict[str, Any], cpus: int) -> list[str]:
    """stress-ng arguments for VSPERF's Load: `load` % on all cores but `reserved` ones."""
    workers = max(1, cpus - int(load.get("reserved", 0)))
    percent = int(load.get("load", 100))
    pattern = str(load.get("pattern", "c"))
    argv = ["stress-ng", "--timeout", "0", "--metrics-brief"]
    if "c" in pattern:
        argv += ["--cpu", str(workers), "--cpu-load", str(percent)]
    if "m" in pattern:
        memory = int(load.get("load_memory", 10))
        argv += ["--vm", str(workers), "--vm-bytes", f"{memory}%", "--vm-keep"]
    if "i" in pattern:
        argv += ["--io", str(workers)]
    return argv


class StressNgLoad(LoadGenerator):
    """stress-ng CPU/memory load, started before and stopped after the traffic phase."""

    NAME = "stress-ng"
    ALIASES = ("stressng", "StressorVM")

    _proc: HostProcess | None = None

    def check_prerequisites(self) -> None:
        self.host.require("stress-ng", "apt-get install stress-ng")
        self.host.require("getconf", "apt-get install libc-bin")  # the host's CPU count: the load's workers

    def _version(self) -> str:
        proc = self.host.executor.run(["stress-ng", "--version"], check=False)
        words = (proc.stdout or proc.stderr).split()
        return words[2] if len(words) > 2 else "unknown"

    def start(self) -> None:
        argv = stress_ng_argv(dict(self.load), self.host.cpu_count())
        proc = self._proc = self.host.spawn(self.NAME, argv)
        code = proc.wait(0.5)
        if code is None:
            where = self.host.on
            log.info("stress-ng load started%s (pid %d): %s", where, proc.pid, " ".join(argv[1:]))
            return
        self.host.stop_process(proc, timeout_s=STOP_TIMEOUT_S)
        self._proc = None
        raise DeploymentError(f"stress-ng exited at once (code {code}): {' '.join(argv)}")

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            self.host.stop_process(proc, timeout_s=STOP_TIMEOUT_S)

    def pids(self) -> dict[str, int]:
        return {"stress-ng": self._proc.pid} if self._proc else {}

    def component(self) -> ComponentInfo:
        return ComponentInfo("loadgen", self.NAME, self._version(), {k: str(v) for k, v in self.load.items()})
