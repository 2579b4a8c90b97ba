"""What every generator does with a trial before sending it (vsperf.trafficgen.base)."""

from __future__ import annotations

import pytest

from vsperf.errors import TrafficGenError
from vsperf.trafficgen.base import burst_shares, check_burst, check_rate_trial, rate_shares


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
