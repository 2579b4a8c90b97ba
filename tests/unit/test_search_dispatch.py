"""run_traffic: the traffic type chooses the search; settings configure it."""

from __future__ import annotations

import pytest
from dutsim import SimDut

from vsperf.errors import ConfigError
from vsperf.search.dispatch import TRAFFIC_TYPES, run_traffic
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
    out = run_traffic(
        SimDut(LINE_64 * 0.5, buffer_frames=1000), traffic, {"TRAFFICGEN_DURATION": 2}, seen.append
    )
    assert out.metrics["type"] == traffic_type
    assert isinstance(out.metrics[metric], int | float)
    assert tuple(seen) == out.trials and seen


def test_settings_reach_the_search() -> None:
    traffic = Traffic(frame_size_bytes=64)
    settings = {
        "TRAFFICGEN_DURATION": 7,
        "TRAFFICGEN_RFC2544_TESTS": 2,
        "TRAFFICGEN_RFC2544_RESOLUTION_PERCENT": 5,
    }
    out = run_traffic(SimDut(LINE_64 * 0.5), traffic, settings)
    assert {t.duration_s for t in out.trials} == {7.0}
    assert len(out.details["repetitions"]) == 2
    assert out.details["search"]["resolution_percent"] == 5.0


def test_continuous_uses_the_traffic_frame_rate_and_burst_its_size() -> None:
    cont = run_traffic(SimDut(LINE_64), Traffic(traffic_type="rfc2544_continuous", frame_rate_percent=20), {})
    assert cont.metrics["tx_rate_percent"] == pytest.approx(20.0)
    bst = run_traffic(SimDut(LINE_64), Traffic(traffic_type="burst", burst_frames=321), {})
    assert bst.metrics["tx_frames"] == 321


def test_back2back_gets_throughput_for_rfc9004() -> None:
    traffic = Traffic(traffic_type="rfc2544_back2back")
    out = run_traffic(
        SimDut(LINE_64 * 0.5, buffer_frames=100),
        traffic,
        {"TRAFFICGEN_DURATION": 1},
        throughput_fps=LINE_64 * 0.5,
    )
    assert "b2b_corrected_buffer_time_s" in out.metrics


def test_invalid_settings_fail_before_any_trial() -> None:
    dut = SimDut(LINE_64)
    with pytest.raises(ConfigError, match="TRAFFICGEN_LOSSRATE"):
        run_traffic(dut, Traffic(), {"TRAFFICGEN_LOSSRATE": 200})
    assert dut.calls == []


def test_unknown_traffic_type() -> None:
    with pytest.raises(ConfigError, match="unknown traffic_type 'rfc2544_latency'"):
        run_traffic(SimDut(1.0), Traffic(traffic_type="rfc2544_latency"), {})  # type: ignore[arg-type]
    assert "burst" in TRAFFIC_TYPES
