"""The `dummy` traffic generator: a simulated DUT that answers every trial from a model.

It sends nothing and needs nothing (no root, no ports): each trial is computed at once by
`vsperf.dut_model` from the TRAFFICGEN_DUMMY_DUT setting, so a whole test run, its searches
and its report can be exercised anywhere. Every result of a run with it is marked simulated
(`SIMULATED = True`); its latencies come from the model, not from a clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from vsperf import __version__
from vsperf.context import RunContext
from vsperf.dut_model import MODEL_VERSION, DutModel, model_from_settings, simulate_burst, simulate_rate_trial
from vsperf.errors import TrafficGenError
from vsperf.search.measurer import TrialResult
from vsperf.traffic import Traffic
from vsperf.trafficgen.base import GenPort, TrafficGenerator


class DummyTrafficGenerator(TrafficGenerator):
    """Simulated DUT (no traffic sent): answers trials from the TRAFFICGEN_DUMMY_DUT model."""

    NAME: ClassVar[str] = "dummy"
    ALIASES: ClassVar[tuple[str, ...]] = ("Dummy",)
    SIMULATED: ClassVar[bool] = True

    def __init__(self, settings: Mapping[str, Any], ctx: RunContext) -> None:
        super().__init__(settings, ctx)
        self.model: DutModel = model_from_settings(settings.get("TRAFFICGEN_DUMMY_DUT"))
        # Counts trials so each draws its own capacity noise: the same seed and the same
        # sequence of trials give the same answers.
        self._trial_index = 0
        self.ports: tuple[GenPort, ...] = ()

    def version(self) -> str:
        return f"simulated DUT model {MODEL_VERSION} (vsperf {__version__})"

    def start(self, ports: Sequence[GenPort]) -> None:
        """Nothing to start; the ports (if any) are kept only for display."""
        self.ports = tuple(ports)

    def stop(self) -> None:
        self.ports = ()

    def _next_index(self) -> int:
        self._trial_index += 1
        return self._trial_index

    def trial(self, traffic: Traffic, rate_fps: float, duration_s: float) -> TrialResult:
        try:
            return simulate_rate_trial(self.model, traffic, rate_fps, duration_s, self._next_index())
        except ValueError as exc:
            raise TrafficGenError(f"dummy: {exc}") from exc

    def burst(self, traffic: Traffic, frames: int) -> TrialResult:
        try:
            return simulate_burst(self.model, traffic, frames, self._next_index())
        except ValueError as exc:
            raise TrafficGenError(f"dummy: {exc}") from exc
