"""The interface of a statistics collector, and running several around one traffic phase.

A collector is a context manager around the traffic phase of one frame size: `start()` in
`__enter__`, `stop()` in `__exit__`, then `statistics()` returns what it measured as
group -> statistic -> value (e.g. "Process: ovs-vswitchd" -> "%CPU" -> 199.93). A value may
itself be a mapping (row -> column -> value) when the group is a table with several rows,
e.g. "System CPU" -> "0" -> "%usr". The runner stores these in results.json
(`FrameSizeResult.statistics`) and the report shows one table per group.

One collector instance serves every frame size of a test: each `with collector:` measures one
phase and `statistics()` describes the last one.
"""

from __future__ import annotations

import logging
from abc import abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

from vsperf.executor import Executor
from vsperf.host.workdir import RunContext
from vsperf.lifecycle import Started
from vsperf.registry import Registry
from vsperf.results.model import ComponentInfo
from vsperf.traffic.ports import GenPort

log = logging.getLogger(__name__)

Statistics = dict[str, dict[str, Any]]


@dataclass(frozen=True)
class CollectorTarget:
    """What the collectors of a test watch."""

    pids: Mapping[str, int] = field(default_factory=dict)  # DUT and load processes, name -> PID
    process_names: tuple[str, ...] = ()  # further processes found by name (COLLECTOR_PROCESSES)
    ports: tuple[GenPort, ...] = ()  # the traffic generator's ports (interface in a namespace)
    # On a testbed: the executors of the host the DUT runs on (its pids are that host's) and of
    # the generator's host (its ports are there). None: this machine, read directly.
    dut_host: Executor | None = None
    gen_host: Executor | None = None
    # The same PIDs read again now (the deployment's `dut_pids()` and the load's): a collector
    # whose process exited asks it whether the DUT restarted that daemon (rfc2544_reset).
    # None: the PIDs never change.
    current_pids: Callable[[], Mapping[str, int]] | None = field(default=None, compare=False)


class Collector(Started):
    """A statistics collector backend, registered by NAME (see `vsperf --list-collectors`)."""

    NAME: ClassVar[str]
    ALIASES: ClassVar[tuple[str, ...]] = ()
    # True when the collector reads through `reads_host()` (so it works on a testbed); a
    # collector that only reads this machine is refused on a testbed before anything is deployed.
    REMOTE: ClassVar[bool] = False

    def __init__(self, settings: Mapping[str, Any], ctx: RunContext, target: CollectorTarget) -> None:
        self.settings = settings
        self.ctx = ctx
        self.target = target

    def check_prerequisites(self) -> None:
        """Raise PrerequisiteError naming what to install; called before anything is created."""

    @abstractmethod
    def start(self) -> None:
        """Take the first reading of a traffic phase (and start sampling, if the collector does)."""

    @abstractmethod
    def stop(self) -> None:
        """Take the last reading of the phase; safe to call when `start` failed or twice."""

    @abstractmethod
    def statistics(self) -> Statistics:
        """What the last phase measured: group -> statistic (or row -> column) -> value."""

    def version(self) -> str:
        """Version of what the collector reads with, for the report."""
        return "n/a"

    def reads_host(self) -> Executor | None:
        """The executor of the host the collector reads (None: this machine, read directly);
        the DUT host's by default."""
        return self.target.dut_host

    def component(self) -> ComponentInfo:
        """What the report's Test Environment says about the collector (and which host it read)."""
        host = self.reads_host()
        if host is None:
            return ComponentInfo("collector", self.NAME, self.version(), {})
        return ComponentInfo("collector", self.NAME, f"{self.version()} on host {host.host}", {"host": host.host})


def collector_names(setting: str | Sequence[str] | None) -> list[str]:
    """The COLLECTOR setting as a list of names (VSPERF gave one name as a string)."""
    if setting is None:
        return []
    if isinstance(setting, str):
        return [setting]
    return [str(name) for name in setting]


def build_collectors(
    names: Sequence[str], settings: Mapping[str, Any], registry: Registry[Any], ctx: RunContext,
    target: CollectorTarget,
) -> list[Collector]:
    """One instance of each collector of `names` (registry names, as the plan resolved them from
    the COLLECTOR setting), in that order, each given the test's settings for its own."""
    return [registry.get(name).cls(settings, ctx, target) for name in names]


@dataclass
class Phase:
    """The statistics of one traffic phase; filled in when `collecting` exits."""

    statistics: Statistics = field(default_factory=dict)


@contextmanager
def collecting(collectors: Sequence[Collector]) -> Iterator[Phase]:
    """Run `collectors` around the body; `Phase.statistics` holds what they measured after it.

    Observability never fails a measurement: a collector that cannot start or stop is logged
    (the warning shows in the report's anomalies) and left out; exceptions of the body propagate
    after every started collector has stopped.
    """
    phase = Phase()
    started: list[Collector] = []
    for collector in collectors:
        try:
            collector.__enter__()
        except Exception as exc:
            log.warning("collector %s could not start, its statistics are missing: %s", collector.NAME, exc)
        else:
            started.append(collector)
    try:
        yield phase
    finally:
        for collector in reversed(started):
            try:
                collector.__exit__(None, None, None)
            except Exception as exc:
                log.warning("collector %s could not stop cleanly: %s", collector.NAME, exc)
        for collector in started:
            try:
                stats = collector.statistics()
            except Exception as exc:
                log.warning("collector %s gave no statistics: %s", collector.NAME, exc)
                continue
            for group, values in stats.items():
                phase.statistics[group] = values
