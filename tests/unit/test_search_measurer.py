"""The optional measurer capabilities and the error for a generator that lacks one."""

from __future__ import annotations

import pytest
from dutsim import SimDut
from dutsim_events import EventDut, FakeDutControl

from vsperf.search.measurer import (
    FLAG_RX_EXCEEDS_TX,
    FLAG_UNDER_DELIVERY,
    AddressMeasurer,
    AddressTrialResult,
    DutControl,
    Measurer,
    RecoveryMeasurer,
    RecoveryTrialResult,
    ResetMeasurer,
    ResetTrialResult,
    TrialResult,
    generator_name,
    missing_capability,
)
from vsperf.traffic import Traffic
from vsperf.trafficgen.dummy.backend import DummyTrafficGenerator


def test_capabilities_are_separate_protocols() -> None:
    plain, events = SimDut(1.0), EventDut(1.0)
    assert isinstance(plain, Measurer) and not isinstance(plain, RecoveryMeasurer)
    for proto in (RecoveryMeasurer, ResetMeasurer, AddressMeasurer):
        assert isinstance(events, proto)
        assert hasattr(DummyTrafficGenerator, next(n for n in vars(proto) if n.endswith("_trial")))
    assert isinstance(FakeDutControl(), DutControl)


def test_missing_capability_names_generator_and_traffic_type() -> None:
    error = missing_capability(SimDut(1.0), "rfc2544_reset", "reset_trial")
    assert str(error).startswith("generator SimDut cannot run rfc2544_reset trials (it has no reset_trial)")

    class Named:
        NAME = "trafgen"

    assert generator_name(Named()) == "trafgen"


def test_results_refuse_negative_times() -> None:
    trial = SimDut(1e6).trial(Traffic(), 10.0, 1.0)
    with pytest.raises(ValueError):
        RecoveryTrialResult(trial, trial, last_loss_after_drop_s=-1.0, resolution_s=0.0)
    with pytest.raises(ValueError):
        ResetTrialResult(trial, reset_at_s=0.0, gap_s=-1.0, recovered=True, resolution_s=0.0)
    with pytest.raises(ValueError):
        AddressTrialResult(0, trial, trial, flooded_frames=0)


def test_measured_fills_frame_size_line_rate_and_delivery_flags() -> None:
    traffic = Traffic(frame_size_bytes=128)
    rate = TrialResult.measured("rate", traffic, 1000.0, 2.0, 1000, 1001, 900.0, flags=("own",))
    assert (rate.kind, rate.frame_size_bytes, rate.line_rate_fps) == ("rate", 128, traffic.line_rate_fps)
    assert (rate.requested_rate_fps, rate.duration_s, rate.actual_tx_rate_fps) == (1000.0, 2.0, 900.0)
    assert rate.flags == (FLAG_UNDER_DELIVERY, FLAG_RX_EXCEEDS_TX, "own")  # the generator's own flags last
    burst = TrialResult.measured("any other kind", traffic, 10.0, 1.0, 10, 10, 10.0, line_rate_fps=10.0)
    assert (burst.kind, burst.line_rate_fps, burst.flags) == ("burst", 10.0, ())


def test_measured_judges_delivery_against_what_the_generator_was_asked() -> None:
    traffic = Traffic()
    asked = TrialResult.measured("rate", traffic, 200.0, 1.0, 100, 100, 100.0, asked_rate_fps=100.0)
    assert asked.flags == ()
    short = TrialResult.measured("rate", traffic, 100.0, 1.0, 99, 99, 100.0, sent_short=True)
    assert short.flags == (FLAG_UNDER_DELIVERY,)
