"""The optional measurer capabilities and the error for a generator that lacks one."""

from __future__ import annotations

import pytest
from dutsim import SimDut
from dutsim_events import EventDut, FakeDutControl

from vsperf.search.measurer import (
    AddressMeasurer,
    AddressTrialResult,
    DutControl,
    Measurer,
    RecoveryMeasurer,
    RecoveryTrialResult,
    ResetMeasurer,
    ResetTrialResult,
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
