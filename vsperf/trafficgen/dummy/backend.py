"""The `dummy` traffic generator: a simulated DUT that answers every trial from a model.

It sends nothing and needs nothing (no root, no ports): each trial is computed at once by
`vsperf.trafficgen.dummy.model` from the TRAFFICGEN_DUMMY_DUT setting, so a whole test run, its searches
and its report can be exercised anywhere. Every result of a run with it is marked simulated
(`SIMULATED = True`); its latencies come from the model, not from a clock.

It also answers the optional capabilities (recovery, reset and RFC 2889 address trials) from
`vsperf.trafficgen.dummy.events`: the model is the DUT, so it resets and forgets addresses itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, ParamSpec, TypeVar

from vsperf import __version__
from vsperf.errors import TrafficGenError
from vsperf.host.host import Host
from vsperf.search.measurer import (
    AddressTrialResult,
    DutAction,
    RecoveryTrialResult,
    ResetTrialResult,
    TrialResult,
)
from vsperf.traffic import Traffic
from vsperf.traffic.ports import GenPort
from vsperf.trafficgen.base import TrafficGenerator
from vsperf.trafficgen.dummy.events import simulate_address_trial, simulate_recovery_trial, simulate_reset_trial
from vsperf.trafficgen.dummy.model import (
    MODEL_VERSION,
    DutModel,
    model_from_settings,
    simulate_burst,
    simulate_rate_trial,
)

P = ParamSpec("P")
R = TypeVar("R")


def _simulated(simulate: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """What the model answers; a value it refuses (ValueError) is the generator's TrafficGenError."""
    try:
        return simulate(*args, **kwargs)
    except ValueError as exc:
        raise TrafficGenError(f"dummy: {exc}") from exc


class DummyTrafficGenerator(TrafficGenerator):
    """Simulated DUT (no traffic sent): answers trials from the TRAFFICGEN_DUMMY_DUT model."""

    NAME: ClassVar[str] = "dummy"
    ALIASES: ClassVar[tuple[str, ...]] = ("Dummy",)
    SIMULATED: ClassVar[bool] = True
    FRAME_MIX: ClassVar[bool] = True

    def __init__(self, settings: Mapping[str, Any], host: Host) -> None:
        super().__init__(settings, host)
        self.model: DutModel = model_from_settings(settings["TRAFFICGEN_DUMMY_DUT"])
        # Trials that last their duration: a run that holds its testbed (and its lease) as long as
        # a real one, e.g. to exercise the testbed locks (vsperf.pool) without traffic.
        self.wall_clock = bool(settings["TRAFFICGEN_DUMMY_DUT"].get("wall_clock", False))
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
        if self.wall_clock:
            time.sleep(duration_s)
        return _simulated(simulate_rate_trial, self.model, traffic, rate_fps, duration_s, self._next_index())

    def burst(self, traffic: Traffic, frames: int) -> TrialResult:
        return _simulated(simulate_burst, self.model, traffic, frames, self._next_index())

    def recovery_trial(
        self, traffic: Traffic, overload_fps: float, overload_s: float, recovery_fps: float, recovery_s: float
    ) -> RecoveryTrialResult:
        return _simulated(
            simulate_recovery_trial,
            self.model, traffic, overload_fps, overload_s, recovery_fps, recovery_s, self._next_index(),
        )

    def reset_trial(
        self, traffic: Traffic, rate_fps: float, duration_s: float, reset_at_s: float, reset: DutAction | None
    ) -> ResetTrialResult:
        return _simulated(
            simulate_reset_trial, self.model, traffic, rate_fps, duration_s, reset_at_s, self._next_index(), reset
        )

    def address_trial(
        self, traffic: Traffic, addresses: int, learning_rate_fps: float, test_rate_fps: float, forget: DutAction | None
    ) -> AddressTrialResult:
        return _simulated(
            simulate_address_trial,
            self.model, traffic, addresses, learning_rate_fps, test_rate_fps, self._next_index(), forget,
        )
