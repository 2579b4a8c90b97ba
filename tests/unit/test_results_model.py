"""The results records: JSON conversion, validation, metric ordering."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import pytest

from vsperf.results.model import (
    ComponentInfo,
    FrameSizeResult,
    RunResults,
    TestResult,
    jsonable,
    metric_columns,
    traffic_protocol,
)
from vsperf.search.measurer import LatencyStats, TrialResult
from vsperf.search.outcome import SearchOutcome


def _trial(flags: tuple[str, ...] = (), latency: LatencyStats | None = None) -> TrialResult:
    return TrialResult(
        kind="rate",
        frame_size_bytes=64,
        requested_rate_fps=1_000_000.0,
        duration_s=10.0,
        tx_frames=10_000_000,
        rx_frames=9_999_990,
        actual_tx_rate_fps=999_000.5,
        line_rate_fps=29_761_904.76,
        latency=latency,
        flags=flags,
        per_second=({"tx_fps": 1e6, "rx_fps": 999_999.0},),
        purpose="search",
    )


def _test(**changes: object) -> TestResult:
    fields: dict[str, object] = {
        "index": 0,
        "name": "phy2phy_tput",
        "description": "LTD.Throughput.RFC2544.PacketLossRatio",
        "deployment": "p2p",
        "traffic_type": "rfc2544_throughput",
        "bidir": True,
        "frame_modification": None,
        "components": (ComponentInfo("vswitch", "ovs", "3.1.0", {"datapath": "netdev"}),),
        "parameters": {"TRAFFIC": {"traffic_type": "rfc2544_throughput"}},
        "status": "passed",
        "error": None,
        "started_at": "2024-05-11T07:36:56+00:00",
        "finished_at": "2024-05-11T07:40:00+00:00",
    }
    fields.update(changes)
    return TestResult(**fields)  # type: ignore[arg-type]


@dataclass(frozen=True)
class _Point:
    x_m: float
    y_m: float


def test_jsonable_makes_plain_json_data() -> None:
    data = jsonable(
        {"t": (1, 2), "nan": math.nan, "inf": -math.inf, "p": Path("/tmp/x"), "d": _Point(1.0, 2.5), 3: {4}}
    )
    assert data == {
        "t": [1, 2],
        "nan": None,
        "inf": None,
        "p": "/tmp/x",
        "d": {"x_m": 1.0, "y_m": 2.5},
        "3": [4],
    }
    json.dumps(data, allow_nan=False)


def test_frame_size_result_round_trips_trials_and_metrics() -> None:
    latency = LatencyStats(
        min_ns=1000.0, avg_ns=2500.5, max_ns=9000.0, percentiles_ns={"p99": 8000.0}, samples=7
    )
    outcome = SearchOutcome(
        metrics={"throughput_rx_fps": 999_000.5, "min_latency_ns": None, "b2b_frames": 21713},
        trials=(_trial(), _trial(flags=("generator_under_delivery",), latency=latency)),
        details={"search": "binary", "bounds_fps": (1.0, 2.0)},
        anomalies=("search hit its upper bound",),
    )
    record = FrameSizeResult.from_outcome(64, outcome)
    back = FrameSizeResult.from_dict(json.loads(json.dumps(record.to_dict())))
    assert back == record
    assert back.trials[1].latency == latency
    assert back.details["bounds_fps"] == [1.0, 2.0]
    assert back.flagged_trials == ((2, back.trials[1]),)


def test_frame_size_result_rejects_non_positive_size() -> None:
    with pytest.raises(ValueError, match="packet size"):
        FrameSizeResult(packet_size=0, metrics={})


def test_statuses_are_validated() -> None:
    with pytest.raises(ValueError, match="test status 'done'"):
        _test(status="done")
    with pytest.raises(ValueError, match="run status 'ok'"):
        RunResults(1, "0.1.0", "abc", "ok", "2024-05-11T07:36:56+00:00", None, (), False, {}, {}, {})


def test_test_result_round_trip_keeps_components_and_parameters() -> None:
    test = _test(results=(FrameSizeResult(64, {"throughput_rx_fps": 1.5}),), frame_modification="vlan")
    back = TestResult.from_dict(json.loads(json.dumps(test.to_dict())))
    assert back == test
    assert back.component("vswitch") == ComponentInfo("vswitch", "ovs", "3.1.0", {"datapath": "netdev"})
    assert back.component("vnf") is None
    assert back.packet_sizes == (64,)


def test_metric_columns_follow_vsperf_order_then_first_seen() -> None:
    results = [
        FrameSizeResult(
            64, {"latency_p99_ns": 1.0, "throughput_rx_fps": 2.0, "type": "x", "tx_rate_fps": 3.0}
        ),
        FrameSizeResult(128, {"b2b_frames": 5, "extra_key": 1, "packet_size": 128}),
    ]
    assert metric_columns(results) == [
        "tx_rate_fps",
        "throughput_rx_fps",
        "b2b_frames",
        "latency_p99_ns",
        "extra_key",
    ]


def test_traffic_protocol_prefers_the_test_parameters() -> None:
    settings = {"TRAFFIC": {"l3": {"proto": "udp"}}}
    assert traffic_protocol(_test(), settings) == "udp"
    assert traffic_protocol(_test(parameters={"TRAFFIC": {"l3": {"proto": "tcp"}}}), settings) == "tcp"
    assert traffic_protocol(_test(parameters={}), {}) is None
