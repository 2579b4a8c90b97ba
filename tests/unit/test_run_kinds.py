"""run_traffic: the traffic type chooses the search; settings configure it."""

from __future__ import annotations

import pytest
from dutsim import SimDut
from dutsim_events import EventDut, FakeDutControl
from settings_util import make_settings, run_from_settings

from vsperf.errors import ConfigError, TrafficGenError
from vsperf.run.kinds import TRAFFIC_TYPES
from vsperf.search.measurer import TrialResult
from vsperf.traffic import Traffic

LINE_64 = Traffic(frame_size_bytes=64).line_rate_fps


@pytest.mark.parametrize(
    ("traffic_type", "metric"),
    [
        ("rfc2544_throughput", "throughput_rx_fps"),
        ("rfc2544_back2back", "b2b_frames"),
        ("rfc2544_continuous", "throughput_rx_fps"),
        ("burst", "tx_frames"),
    ],
)
def test_each_traffic_type_runs_its_search(traffic_type: str, metric: str) -> None:
    traffic = Traffic(traffic_type=traffic_type, frame_size_bytes=64)  # type: ignore[arg-type]
    seen: list[TrialResult] = []
    out = run_from_settings(
        SimDut(LINE_64 * 0.5, buffer_frames=1000), traffic, make_settings({"TRAFFICGEN_DURATION": 2}), seen.append
    )
    assert out.metrics["type"] == traffic_type
    assert isinstance(out.metrics[metric], int | float)
    assert tuple(seen) == out.trials and seen


def test_settings_reach_the_search() -> None:
    traffic = Traffic(frame_size_bytes=64)
    settings = make_settings({
        "TRAFFICGEN_DURATION": 7,
        "TRAFFICGEN_RFC2544_TESTS": 2,
        "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT": 5,
    })
    out = run_from_settings(SimDut(LINE_64 * 0.5), traffic, settings)
    assert {t.duration_s for t in out.trials} == {7.0}
    assert len(out.details["repetitions"]) == 2
    assert out.details["search"]["resolution_percent"] == 5.0


def test_continuous_uses_the_traffic_frame_rate_and_burst_its_size() -> None:
    continuous = Traffic(traffic_type="rfc2544_continuous", frame_rate_percent=20)
    cont = run_from_settings(SimDut(LINE_64), continuous, make_settings({}))
    assert cont.metrics["tx_rate_percent"] == pytest.approx(20.0)
    bst = run_from_settings(SimDut(LINE_64), Traffic(traffic_type="burst", burst_frames=321), make_settings({}))
    assert bst.metrics["tx_frames"] == 321


def test_back2back_gets_throughput_for_rfc9004() -> None:
    traffic = Traffic(traffic_type="rfc2544_back2back")
    out = run_from_settings(
        SimDut(LINE_64 * 0.5, buffer_frames=100),
        traffic,
        make_settings({"TRAFFICGEN_DURATION": 1}),
        throughput_fps=LINE_64 * 0.5,
    )
    assert "b2b_corrected_buffer_time_s" in out.metrics


def test_invalid_settings_fail_before_any_trial() -> None:
    dut = SimDut(LINE_64)
    with pytest.raises(ConfigError, match="TRAFFICGEN_LOSSRATE"):
        run_from_settings(dut, Traffic(), make_settings({"TRAFFICGEN_LOSSRATE": 200}))
    assert dut.calls == []


def test_unknown_traffic_type() -> None:
    with pytest.raises(ConfigError, match="unknown traffic_type 'rfc2544_teleport'"):
        run_from_settings(SimDut(1.0), Traffic(traffic_type="rfc2544_teleport"), make_settings({}))  # type: ignore[arg-type]
    assert "burst" in TRAFFIC_TYPES


# ---- traffic types beyond VSPERF's four (issue 6) ----

NEW_TYPES = {
    "rfc2544_latency": "avg_latency_ns",
    "rfc2544_frame_loss": "frame_loss_percent",
    "rfc2544_recovery": "recovery_time_s",
    "rfc2544_reset": "reset_time_s",
    "rfc9004_back2back": "b2b_corrected_buffer_time_s",
    "rfc2889_forwarding": "max_forwarding_rate_fps",
    "rfc2889_caching": "caching_capacity_addresses",
    "rfc2889_learning": "address_learning_rate_fps",
}
QUICK = {
    "TRAFFICGEN_DURATION": 2, "TRAFFICGEN_LATENCY_REPETITIONS": 2, "TRAFFICGEN_RECOVERY_REPETITIONS": 1,
    "TRAFFICGEN_RESET_REPETITIONS": 1, "TRAFFICGEN_RFC9004_TESTS": 2, "TRAFFICGEN_RFC2889_MAX_ADDRESSES": 2000,
    "TRAFFICGEN_RFC2889_LEARNING_ADDRESSES": 500,
}


@pytest.mark.parametrize(("traffic_type", "metric"), sorted(NEW_TYPES.items()))
def test_new_traffic_types_run_through_dispatch(traffic_type: str, metric: str) -> None:
    seen: list[TrialResult] = []
    dut = EventDut(LINE_64 * 0.5, buffer_frames=1000, table_size=1000, reset_s=0.5)
    traffic = Traffic(traffic_type=traffic_type, frame_size_bytes=64)  # type: ignore[arg-type]
    out = run_from_settings(dut, traffic, make_settings(QUICK), seen.append, dut=FakeDutControl())
    assert out.metrics["type"] == traffic_type and traffic_type in TRAFFIC_TYPES
    assert isinstance(out.metrics[metric], int | float), out.metrics
    assert tuple(seen) == out.trials and seen
    assert out.details["trial_count"] == len(out.trials)


def test_dependent_tests_measure_throughput_first_unless_given() -> None:
    traffic = Traffic(traffic_type="rfc2544_latency", frame_size_bytes=64)
    measured = run_from_settings(EventDut(LINE_64 * 0.5), traffic, make_settings({**QUICK, "TRAFFICGEN_SEARCH": "mlr"}))
    assert measured.trials[0].purpose.startswith("throughput: ")
    assert measured.details["throughput"]["algorithm"] == "mlr"
    given = run_from_settings(EventDut(LINE_64 * 0.5), traffic, make_settings(QUICK), throughput_fps=LINE_64 * 0.25)
    assert given.metrics["tx_rate_percent"] == pytest.approx(25.0)
    assert all(t.purpose.startswith("latency") for t in given.trials)


@pytest.mark.parametrize("traffic_type", ["rfc2544_recovery", "rfc2544_reset", "rfc2889_caching"])
def test_missing_capability_fails_before_any_trial(traffic_type: str) -> None:
    dut = SimDut(LINE_64 * 0.5)
    with pytest.raises(TrafficGenError, match=f"cannot run {traffic_type} trials"):
        run_from_settings(dut, Traffic(traffic_type=traffic_type), make_settings(QUICK))  # type: ignore[arg-type]
    assert dut.calls == []


def test_throughput_algorithm_by_setting_and_invalid_new_settings() -> None:
    ndr_pdr = make_settings({"TRAFFICGEN_SEARCH": "ndr_pdr", "TRAFFICGEN_DURATION": 5})
    out = run_from_settings(SimDut(LINE_64 * 0.5), Traffic(), ndr_pdr)
    assert out.details["search"]["algorithm"] == "ndr_pdr"
    dut = SimDut(LINE_64)
    with pytest.raises(ConfigError, match="TRAFFICGEN_LATENCY_DURATION_S"):
        run_from_settings(dut, Traffic(traffic_type="rfc2544_latency"),
                          make_settings({"TRAFFICGEN_LATENCY_DURATION_S": 0}))
    with pytest.raises(ConfigError, match="TRAFFICGEN_SEARCH"):
        run_from_settings(dut, Traffic(), make_settings({"TRAFFICGEN_SEARCH": "fast"}))
    assert dut.calls == []
