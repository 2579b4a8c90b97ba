"""The interface of a load generator backend (VSPERF's Load: CPU or memory stress on the DUT)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from vsperf.host.host import Host
from vsperf.lifecycle import Started
from vsperf.results.model import ComponentInfo


class LoadGenerator(Started):
    """Starts a load in `__enter__` (before traffic) and stops it in `__exit__` (after).

    Its processes run on `host` (the DUT host: this machine on the local lab, a testbed's DUT
    host otherwise; `Host.probe()` for a check of its prerequisites), started through it so that
    the run's journal records them: teardown, and the next run after a SIGKILL of vsperf, stops
    one the load generator did not (a load runs in a session of its own: nothing else would)."""

    NAME: ClassVar[str]
    ALIASES: ClassVar[tuple[str, ...]] = ()

    def __init__(self, load: Mapping[str, Any], settings: Mapping[str, Any], host: Host) -> None:
        self.load = load
        self.settings = settings
        self.host = host

    def check_prerequisites(self) -> None:
        """Raise PrerequisiteError naming what to install on the host."""

    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def stop(self) -> None: ...

    @abstractmethod
    def component(self) -> ComponentInfo:
        """What the report says about the load."""

    def pids(self) -> dict[str, int]:
        return {}
