"""Warm starts: their frames, rates and the setting that makes them."""

from __future__ import annotations

import pytest

from vsperf.traffic.warmup import WarmStart, warm_start_from_setting


def test_a_lead_in_sends_its_rate_for_its_duration() -> None:
    warm = WarmStart("lead-in", 0.1, 10.0)
    assert warm.start_rate_fps(100_000) == 10_000 and warm.frames(100_000) == 1000
    assert warm.describe() == "a 0.1 s lead-in at 10 % of the trial's rate"


def test_a_ramp_sends_its_mean_rate() -> None:
    warm = WarmStart("ramp", 0.2, 20.0)
    assert warm.frames(100_000) == round(0.2 * (20_000 + 100_000) / 2)
    assert "ramp from 20 % to 100 %" in warm.describe()


def test_the_setting() -> None:
    assert warm_start_from_setting({"mode": "off", "duration_s": 1, "rate_percent": 5}) is None
    assert warm_start_from_setting({"mode": "ramp", "duration_s": 1, "rate_percent": 5}) == WarmStart("ramp", 1, 5)


@pytest.mark.parametrize(("duration", "percent"), [(0.0, 10.0), (1.0, 0.0), (1.0, 101.0)])
def test_bad_values(duration: float, percent: float) -> None:
    with pytest.raises(ValueError):
        WarmStart("lead-in", duration, percent)
