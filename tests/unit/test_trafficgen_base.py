"""The generator interface (vsperf.trafficgen.base): the host it runs on, its context, and what
every generator does with a trial before sending it."""

from __future__ import annotations

from typing import Any

import pytest
from settings_util import make_settings

from vsperf.backends import build_registries
from vsperf.errors import TrafficGenError
from vsperf.host.host import Host
from vsperf.search.measurer import TrialResult
from vsperf.traffic import Traffic
from vsperf.trafficgen.base import (
    TrafficGenerator,
    burst_shares,
    check_burst,
    check_rate_trial,
    rate_shares,
)


def test_rate_and_burst_checks_name_the_bad_value() -> None:
    check_rate_trial(1.0, 1.0)
    check_burst(1)
    with pytest.raises(TrafficGenError, match=r"positive rate and duration, got 0\.0 fps, 1\.0 s"):
        check_rate_trial(0.0, 1.0)
    with pytest.raises(TrafficGenError, match="at least one frame, got 0"):
        check_burst(0)


def test_rate_shares_split_evenly_with_at_least_one_frame() -> None:
    assert rate_shares(1000.0, 2.0, 2) == (500.0, [1000, 1000])
    assert rate_shares(0.1, 1.0, 2) == (0.05, [1, 1])


def test_burst_shares_give_the_remainder_to_the_first_direction() -> None:
    assert burst_shares(7, 2) == [4, 3]
    assert burst_shares(1, 2) == [1, 1]  # every direction sends at least one frame
    assert burst_shares(9, 1) == [9]


class Recording(TrafficGenerator):
    """A generator that records its lifecycle."""

    NAME = "recording"

    def __init__(self, settings: Any, host: Host) -> None:
        super().__init__(settings, host)
        self.stopped = 0

    def stop(self) -> None:
        self.stopped += 1

    def version(self) -> str:
        return "1"

    def trial(self, traffic: Traffic, rate_fps: float, duration_s: float) -> TrialResult:
        raise AssertionError("not sent")

    def burst(self, traffic: Traffic, frames: int) -> TrialResult:
        raise AssertionError("not sent")


def test_a_generator_runs_on_the_host_it_is_given_and_stops_on_leaving_its_context() -> None:
    host = Host.probe()
    gen = Recording(make_settings(), host)
    with gen:
        assert gen.host is host and gen.switch_on_host  # the local lab: the switch runs beside it
    assert gen.stopped == 1
    failing = Recording(make_settings(), host)
    with pytest.raises(RuntimeError), failing:
        raise RuntimeError("a trial failed")
    assert failing.stopped == 1  # stopped on the way out of an error too
    # ports are the generator host's interfaces unless a generator drives hardware locations
    assert not Recording.PORT_LOCATIONS and Recording.locations_problem(make_settings(), ["1;1;1"]) == ""


def test_every_built_in_generator_takes_the_host_it_runs_on() -> None:
    host = Host.probe()
    names = []
    for entry in build_registries().trafficgens:
        gen = entry.cls(make_settings(), host)
        assert gen.host is host
        names.append(entry.name)
        if entry.cls.PORT_LOCATIONS:  # OTG drives a hardware generator's port locations, TRex PCI addresses
            assert entry.name in ("otg", "trex")
    assert sorted(names) == ["dummy", "otg", "pktgen", "trafgen", "trex", "vsgen"]
