"""The results of a run as frozen dataclasses: what results.json holds (schema_version 2).

Version 2 (frame mixes): a result's `packet_size` may be a frame mix's name (a string) as well as
bytes, and trials may carry `warm_frames`, `rx_frames_by_size`, `notes` and a latency `hdrh`;
version 1 files load unchanged (vsperf.results.load migrates them).

The runner builds these through `vsperf.results.writer.ResultsWriter`; the report and
`vsperf report DIR` read them back with `vsperf.results.load.load_results`. Every record has
`to_dict` (JSON-ready, fresh containers) and `from_dict` (raises KeyError, TypeError or
ValueError on a malformed record; `load_results` turns those into a ConfigError).
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, ClassVar

from vsperf.results.sizes import PacketSize, packet_size_from
from vsperf.results.steps import StepRecord
from vsperf.search.measurer import TrialResult
from vsperf.search.outcome import MetricValue, SearchOutcome

SCHEMA_VERSION = 2
RESULTS_FILENAME = "results.json"

RUN_STATUSES = ("running", "finished", "interrupted", "failed")
TEST_STATUSES = ("running", "passed", "failed", "interrupted")

# VSPERF's result keys in the order VSPERF's CSV files and reports list them; keys a search
# adds beyond these follow in the order they first appear.
VSPERF_METRIC_KEYS = (
    "tx_rate_fps",
    "throughput_rx_fps",
    "tx_rate_mbps",
    "throughput_rx_mbps",
    "tx_rate_percent",
    "throughput_rx_percent",
    "frame_loss_percent",
    "min_latency_ns",
    "max_latency_ns",
    "avg_latency_ns",
    "b2b_frames",
    "b2b_frame_loss_percent",
    "b2b_rx_fps",
    "b2b_tx_fps",
    "b2b_rx_percent",
    "b2b_tx_percent",
    "b2b_tx_count",
    "b2b_frame_loss_frames",
    "forwarding_rate_fps",
    "caching_capacity_addrs",
    "optimal_learning_rate_fps",
    "addr_learned_percent",
    "stream_count",
    "match_type",
    "pre-installed_flows",
    "guest_loopback",
    "tx_frames",
    "rx_frames",
    "tx_bytes",
    "rx_bytes",
    "payload_err",
    "seq_err",
    "imix_genome",
    "imix_avg_framesize",
)
# Per-row attributes VSPERF lists after the metrics; never treated as metrics themselves.
ROW_ATTRIBUTE_KEYS = ("type", "packet_size", "traffic_type")


@dataclass(frozen=True)
class ComponentInfo:
    """A deployed component as the report names it."""

    role: str  # "vswitch", "vnf", "dpdk", "trafficgen", ...
    name: str  # registry name, e.g. "ovs"
    version: str
    details: dict[str, str] = field(default_factory=dict)


def jsonable(value: Any) -> Any:
    """`value` as plain JSON data: tuples and sets become lists, paths and enums strings,
    dataclasses dicts, and NaN or infinite floats None (JSON has no spelling for them)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((jsonable(v) for v in value), key=repr)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value))
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if isinstance(value, PurePath):
        return str(value)
    return str(value)


def fields_dict(record: Any, **converted: Any) -> dict[str, Any]:
    """A dataclass record's fields by name, in their order: as they are (plain JSON values), or
    as given in `converted` for those that need turning into JSON data."""
    data = {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
    if not converted.keys() <= data.keys():
        raise ValueError(f"not fields of {type(record).__name__}: {sorted(converted.keys() - data.keys())}")
    return data | converted


def component_to_dict(component: ComponentInfo) -> dict[str, Any]:
    """A deployed component as results.json stores it."""
    return {
        "role": component.role,
        "name": component.name,
        "version": component.version,
        "details": {str(k): str(v) for k, v in component.details.items()},
    }


def component_from_dict(data: Mapping[str, Any]) -> ComponentInfo:
    """Inverse of `component_to_dict`."""
    details = data.get("details") or {}
    return ComponentInfo(
        role=str(data["role"]),
        name=str(data["name"]),
        version=str(data["version"]),
        details={str(k): str(v) for k, v in dict(details).items()},
    )


def _check_status(status: str, allowed: tuple[str, ...], what: str) -> None:
    if status not in allowed:
        raise ValueError(f"{what} status {status!r} is not one of {', '.join(allowed)}")


@dataclass(frozen=True)
class FrameSizeResult:
    """What one frame size of one test produced."""

    packet_size: PacketSize  # Ethernet frame size in bytes, FCS included, or a frame mix's name
    metrics: dict[str, MetricValue]  # VSPERF result keys -> numbers (None: not measured)
    details: dict[str, Any] = field(default_factory=dict)  # search parameters and per-repetition answers
    anomalies: tuple[str, ...] = ()  # plain-language findings of the search
    trials: tuple[TrialResult, ...] = ()  # every trial, in the order it ran
    # System statistics of the traffic phase from the collectors: group (e.g. "Process:
    # ovs-vswitchd") -> statistic (e.g. "%CPU") -> value. The report shows one table per group.
    statistics: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        packet_size_from(self.packet_size)  # ValueError unless bytes > 0 or a mix's name

    @classmethod
    def from_outcome(
        cls,
        packet_size: PacketSize,
        outcome: SearchOutcome,
        statistics: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> FrameSizeResult:
        """The record of a search outcome (metrics, details, statistics copied as JSON data)."""
        return cls(
            packet_size=packet_size,
            metrics=dict(jsonable(outcome.metrics)),
            details=dict(jsonable(outcome.details)),
            anomalies=tuple(str(a) for a in outcome.anomalies),
            trials=tuple(outcome.trials),
            statistics={str(group): dict(jsonable(stats)) for group, stats in (statistics or {}).items()},
        )

    @property
    def flagged_trials(self) -> tuple[tuple[int, TrialResult], ...]:
        """(1-based position, trial) of every trial that carries a flag."""
        return tuple((i, t) for i, t in enumerate(self.trials, start=1) if t.flags)

    def to_dict(self) -> dict[str, Any]:
        return {
            "packet_size": self.packet_size,
            "metrics": jsonable(self.metrics),
            "details": jsonable(self.details),
            "anomalies": list(self.anomalies),
            "trials": [jsonable(t.as_dict()) for t in self.trials],
            "statistics": jsonable(self.statistics),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FrameSizeResult:
        return cls(
            packet_size=packet_size_from(data["packet_size"]),
            metrics=dict(data.get("metrics") or {}),
            details=dict(data.get("details") or {}),
            anomalies=tuple(str(a) for a in data.get("anomalies") or ()),
            trials=tuple(TrialResult.from_dict(t) for t in data.get("trials") or ()),
            statistics={str(g): dict(stats) for g, stats in dict(data.get("statistics") or {}).items()},
        )


@dataclass(frozen=True)
class TestResult:
    """One test case of the run and its results, one entry per frame size measured."""

    __test__: ClassVar[bool] = False  # not a pytest test class despite its name

    index: int  # 0-based position in the run; also in the CSV file name
    name: str  # test case name, e.g. "phy2phy_tput"
    description: str
    deployment: str  # "p2p", "pvp", ...
    traffic_type: str  # TRAFFIC traffic_type, e.g. "rfc2544_throughput"
    bidir: bool
    frame_modification: str | None
    components: tuple[ComponentInfo, ...]  # what was deployed, with versions
    parameters: dict[str, Any]  # the test case's own Parameters (overrides of settings)
    status: str  # running | passed | failed | interrupted
    error: str | None
    started_at: str  # ISO 8601, UTC
    finished_at: str | None  # ISO 8601, UTC; None while running
    results: tuple[FrameSizeResult, ...] = ()
    headline_metric: str = ""  # the metric that sums the test up per frame size ("" before this field)
    duration_s: float | None = None  # wall time from its start to its end (None while running)
    steps: tuple[StepRecord, ...] = ()  # a step-driven test's steps that ran, in order (TestSteps)

    def __post_init__(self) -> None:
        _check_status(self.status, TEST_STATUSES, "test")
        if self.index < 0:
            raise ValueError(f"test index must not be negative, got {self.index}")

    @property
    def packet_sizes(self) -> tuple[PacketSize, ...]:
        """Frame sizes (and mixes) measured, in the order they ran."""
        return tuple(r.packet_size for r in self.results)

    def component(self, role: str) -> ComponentInfo | None:
        """The first component with `role` ("vswitch", "trafficgen", ...), if any."""
        return next((c for c in self.components if c.role == role), None)

    def to_dict(self) -> dict[str, Any]:
        return fields_dict(
            self,
            components=[component_to_dict(c) for c in self.components],
            parameters=jsonable(self.parameters),
            results=[r.to_dict() for r in self.results],
            steps=[s.to_dict() for s in self.steps],
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TestResult:
        modification = data.get("frame_modification")
        error = data.get("error")
        finished = data.get("finished_at")
        return cls(
            index=int(data["index"]),
            name=str(data["name"]),
            description=str(data.get("description") or ""),
            deployment=str(data["deployment"]),
            traffic_type=str(data["traffic_type"]),
            bidir=bool(data["bidir"]),
            frame_modification=None if modification is None else str(modification),
            components=tuple(component_from_dict(c) for c in data.get("components") or ()),
            parameters=dict(data.get("parameters") or {}),
            status=str(data["status"]),
            error=None if error is None else str(error),
            started_at=str(data["started_at"]),
            finished_at=None if finished is None else str(finished),
            results=tuple(FrameSizeResult.from_dict(r) for r in data.get("results") or ()),
            headline_metric=str(data.get("headline_metric") or ""),
            duration_s=None if data.get("duration_s") is None else float(data["duration_s"]),
            steps=tuple(StepRecord.from_dict(s) for s in data.get("steps") or ()),
        )


@dataclass(frozen=True)
class RunResults:
    """Everything one `vsperf` run measured, and the context needed to read it later."""

    schema_version: int
    vsperf_version: str
    run_id: str
    status: str  # running | finished | interrupted | failed
    started_at: str  # ISO 8601, UTC
    finished_at: str | None  # ISO 8601, UTC; None while running
    command_line: tuple[str, ...]
    simulated: bool  # True: the generator modelled the DUT, no frame was sent
    environment: dict[str, Any]  # see vsperf.host.facts.collect_environment (+ "nics" from the runner)
    settings: dict[str, Any]  # every setting in force for the run, by VSPERF name
    settings_sources: dict[str, str]  # setting name -> where its value came from
    tests: tuple[TestResult, ...] = ()

    def __post_init__(self) -> None:
        _check_status(self.status, RUN_STATUSES, "run")

    def to_dict(self) -> dict[str, Any]:
        return fields_dict(
            self,
            command_line=list(self.command_line),
            environment=jsonable(self.environment),
            settings=jsonable(self.settings),
            settings_sources={str(k): str(v) for k, v in self.settings_sources.items()},
            tests=[t.to_dict() for t in self.tests],
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunResults:
        finished = data.get("finished_at")
        return cls(
            schema_version=int(data["schema_version"]),
            vsperf_version=str(data["vsperf_version"]),
            run_id=str(data["run_id"]),
            status=str(data["status"]),
            started_at=str(data["started_at"]),
            finished_at=None if finished is None else str(finished),
            command_line=tuple(str(a) for a in data.get("command_line") or ()),
            simulated=bool(data["simulated"]),
            environment=dict(data.get("environment") or {}),
            settings=dict(data.get("settings") or {}),
            settings_sources={str(k): str(v) for k, v in dict(data.get("settings_sources") or {}).items()},
            tests=tuple(TestResult.from_dict(t) for t in data.get("tests") or ()),
        )


def as_number(value: Any) -> float | None:
    """A result value as a float, or None when it is not a number (text, None, a bool)."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def metric_columns(results: tuple[FrameSizeResult, ...] | list[FrameSizeResult]) -> list[str]:
    """Metric keys any of `results` has: VSPERF's order first, then others as first seen."""
    present: dict[str, None] = {}
    for result in results:
        for key in result.metrics:
            if key not in ROW_ATTRIBUTE_KEYS:
                present.setdefault(key, None)
    known = [k for k in VSPERF_METRIC_KEYS if k in present]
    return known + [k for k in present if k not in VSPERF_METRIC_KEYS]


def traffic_protocol(test: TestResult, settings: Mapping[str, Any]) -> str | None:
    """The L3 protocol of the test's frames (VSPERF's `traffic_type` column, e.g. "udp").

    The test case's own TRAFFIC parameters win over the run's TRAFFIC setting; None when
    neither says.
    """
    for source in (test.parameters.get("TRAFFIC"), settings.get("TRAFFIC")):
        if isinstance(source, Mapping):
            l3 = source.get("l3")
            if isinstance(l3, Mapping) and l3.get("proto"):
                return str(l3["proto"])
    return None
