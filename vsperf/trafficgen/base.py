"""The interface every traffic generator backend implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from vsperf.context import RunContext
from vsperf.deployment import GenPort
from vsperf.search.measurer import TrialResult
from vsperf.traffic import Traffic


class TrafficGenerator(ABC):
    """A traffic generator backend: a context manager and a `Measurer`.

    `start(ports)` connects to (or launches) the generator on the ports the deployment gives
    it; `stop()` releases everything it started. `trial` and `burst` implement
    `vsperf.search.measurer.Measurer`.
    """

    NAME: ClassVar[str]
    ALIASES: ClassVar[tuple[str, ...]] = ()
    # True when the generator answers from a model instead of sending frames: the runner then
    # deploys nothing and every result says the DUT was simulated.
    SIMULATED: ClassVar[bool] = False

    def __init__(self, settings: Mapping[str, Any], ctx: RunContext) -> None:
        self.settings = settings
        self.ctx = ctx

    def check_prerequisites(self) -> None:  # noqa: B027 - optional hook
        """Raise PrerequisiteError naming what to install or do; called before anything is created."""

    def start(self, ports: Sequence[GenPort]) -> None:  # noqa: B027 - optional hook
        """Prepare to send on `ports` (two ports: 0 -> 1 and, bidirectionally, 1 -> 0)."""

    def stop(self) -> None:  # noqa: B027 - optional hook
        """Release every resource started by `start`."""

    @abstractmethod
    def version(self) -> str:
        """Version of the generator, for the report."""

    @abstractmethod
    def trial(self, traffic: Traffic, rate_fps: float, duration_s: float) -> TrialResult:
        """See `Measurer.trial`."""

    @abstractmethod
    def burst(self, traffic: Traffic, frames: int) -> TrialResult:
        """See `Measurer.burst`."""

    def __enter__(self) -> TrafficGenerator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
