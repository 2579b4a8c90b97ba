"""Simulated recovery, reset and address trials of the dummy generator's DUT model."""

from __future__ import annotations

import pytest
from settings_util import dut_model, make_settings, run_from_settings

from vsperf.errors import ConfigError, TrafficGenError
from vsperf.host.host import Host
from vsperf.traffic import Traffic
from vsperf.trafficgen.dummy.backend import DummyTrafficGenerator
from vsperf.trafficgen.dummy.events import (
    learned_addresses,
    simulate_address_trial,
    simulate_recovery_trial,
    simulate_reset_trial,
)

T64 = Traffic(frame_size_bytes=64)
LINE = T64.line_rate_fps
MODEL = dut_model(capacity_fps=0.4 * LINE, recovery_s=0.5, reset_s=2.0, mac_table_size=1000,
                 learning_rate_fps=10_000.0)


def test_recovery_after_overload_dates_the_stall() -> None:
    r = simulate_recovery_trial(MODEL, T64, 0.44 * LINE, 60, 0.22 * LINE, 10, 1)
    assert r.overload.loss_frames > 0
    assert r.last_loss_after_drop_s == pytest.approx(0.5, abs=2 * r.resolution_s)
    assert r.recovery.loss_frames == pytest.approx(0.5 * 0.22 * LINE, abs=1)
    calm = simulate_recovery_trial(MODEL, T64, 0.3 * LINE, 60, 0.15 * LINE, 10, 1)  # no overload
    assert (calm.last_loss_after_drop_s, calm.recovery.loss_frames) == (0.0, 0)
    with pytest.raises(ValueError):
        simulate_recovery_trial(MODEL, T64, 0.44 * LINE, 60, 0.0, 10, 1)


def test_reset_gap_and_frame_loss_agree() -> None:
    called: list[bool] = []
    r = simulate_reset_trial(MODEL, T64, 0.1 * LINE, 20, 5, 1, lambda: called.append(True))
    assert called == [True] and r.recovered
    assert r.gap_s == pytest.approx(2.0, abs=2 * r.resolution_s)
    assert r.trial.loss_frames / r.trial.actual_tx_rate_fps == pytest.approx(2.0, abs=r.resolution_s)
    late = simulate_reset_trial(MODEL, T64, 0.1 * LINE, 6, 5, 1)
    assert not late.recovered and late.gap_s == pytest.approx(1.0, abs=2 * late.resolution_s)
    with pytest.raises(ValueError):
        simulate_reset_trial(MODEL, T64, 0.1 * LINE, 5, 5, 1)


def test_addresses_learned_up_to_the_table_and_the_learning_rate() -> None:
    assert learned_addresses(MODEL, 500, 1000.0) == 500
    assert learned_addresses(MODEL, 5000, 1000.0) == 1000
    assert learned_addresses(MODEL, 500, 20_000.0) == 250
    forgot: list[bool] = []
    r = simulate_address_trial(MODEL, T64, 2000, 1000.0, 1000.0, 1, lambda: forgot.append(True))
    assert (r.flooded_frames, r.test.loss_frames, forgot) == (1000, 0, [True])
    assert r.learning.duration_s == pytest.approx(2.0)


def test_model_settings_for_the_events() -> None:
    model = dut_model(recovery_s=1, reset_s=0.5, mac_table_size=10, learning_rate_fps=5)
    assert (model.recovery_s, model.reset_s, model.mac_table_size, model.learning_rate_fps) == (1.0, 0.5, 10, 5.0)
    with pytest.raises(ConfigError, match="learning_rate_fps"):
        dut_model(learning_rate_fps=0)


def gen(dut: dict[str, object]) -> DummyTrafficGenerator:
    return DummyTrafficGenerator(make_settings(TRAFFICGEN_DUMMY_DUT=dut), Host.probe())


@pytest.mark.parametrize(
    ("traffic_type", "key", "expected"),
    [
        ("rfc2544_recovery", "recovery_time_s", 0.25),
        ("rfc2544_reset", "reset_time_s", 1.5),
        ("rfc2889_caching", "caching_capacity_addresses", 300),
    ],
)
def test_dummy_generator_answers_the_new_traffic_types(traffic_type: str, key: str, expected: float) -> None:
    dut = {"capacity_fps": 2.9e6, "recovery_s": 0.25, "reset_s": 1.5, "mac_table_size": 300}
    settings = make_settings(TRAFFICGEN_THROUGHPUT_PERCENT=10, TRAFFICGEN_RFC2889_MAX_ADDRESSES=1000,
                             TRAFFICGEN_RECOVERY_REPETITIONS=1, TRAFFICGEN_RESET_REPETITIONS=1)
    out = run_from_settings(gen(dut), Traffic(traffic_type=traffic_type), settings)  # type: ignore[arg-type]
    assert out.metrics[key] == pytest.approx(expected, abs=1e-5)


def test_dummy_reports_bad_trial_arguments_as_generator_errors() -> None:
    with pytest.raises(TrafficGenError, match="dummy"):
        gen({}).reset_trial(T64, 1000.0, 1.0, 2.0, None)
    with pytest.raises(TrafficGenError, match="dummy"):
        gen({}).address_trial(T64, 0, 1.0, 1.0, None)
    with pytest.raises(TrafficGenError, match="dummy"):
        gen({}).recovery_trial(T64, 1.0, 1.0, -1.0, 1.0)
