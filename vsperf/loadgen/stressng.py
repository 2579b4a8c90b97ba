"""`stress-ng` as VSPERF's load generator: CPU (pattern c), memory (m), both (cm) or I/O (i)."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from typing import Any

from vsperf.deployment import ComponentInfo
from vsperf.errors import DeploymentError, PrerequisiteError
from vsperf.executor import Process
from vsperf.loadgen.base import LoadGenerator

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

    _proc: Process | None = None

    def check_prerequisites(self) -> None:
        if shutil.which("stress-ng") is None:
            raise PrerequisiteError("stress-ng is missing: apt-get install stress-ng")

    def _version(self) -> str:
        proc = self.ctx.executor.run(["stress-ng", "--version"], check=False)
        words = (proc.stdout or proc.stderr).split()
        return words[2] if len(words) > 2 else "unknown"

    def start(self) -> None:
        self.check_prerequisites()
        argv = stress_ng_argv(dict(self.load), os.cpu_count() or 1)
        self._proc = self.ctx.executor.spawn(argv)
        try:
            self._proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            log.info("stress-ng load started (pid %d): %s", self._proc.pid, " ".join(argv[1:]))
            return
        raise DeploymentError(f"stress-ng exited at once (code {self._proc.returncode}): {' '.join(argv)}")

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        # Signals go to its process group (stress-ng and its workers), on whichever host it runs.
        proc.terminate()
        try:
            proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def pids(self) -> dict[str, int]:
        return {"stress-ng": self._proc.pid} if self._proc else {}

    def component(self) -> ComponentInfo:
        details = {k: str(v) for k, v in self.load.items()}
        return ComponentInfo("loadgen", self.NAME, self._version(), details)
