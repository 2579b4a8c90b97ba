"""The interface of a load generator backend."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from vsperf.context import RunContext
from vsperf.deployment import ComponentInfo
from vsperf.lifecycle import Started


class LoadGenerator(Started):
    """Starts a load in `__enter__` (before traffic) and stops it in `__exit__` (after)."""

    NAME: ClassVar[str]
    ALIASES: ClassVar[tuple[str, ...]] = ()

    def __init__(self, load: Mapping[str, Any], settings: Mapping[str, Any], ctx: RunContext) -> None:
        self.load = load
        self.settings = settings
        self.ctx = ctx

    def check_prerequisites(self) -> None:
        """Raise PrerequisiteError naming what to install."""

    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def stop(self) -> None: ...

    @abstractmethod
    def component(self) -> ComponentInfo:
        """What the report says about the load."""

    def pids(self) -> dict[str, int]:
        return {}
