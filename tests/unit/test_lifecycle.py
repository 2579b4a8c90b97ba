"""vsperf.lifecycle.Started: what a failed start made is removed at once, and stop runs on leaving."""

from __future__ import annotations

import pytest

from vsperf.lifecycle import Started


class Thing(Started):
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.events: list[str] = []

    def start(self) -> None:
        self.events.append("start")
        if self.fail:
            raise OSError("half made")

    def stop(self) -> None:
        self.events.append("stop")


def test_stop_runs_on_leaving_and_on_an_error_inside() -> None:
    with Thing() as thing:
        assert thing.events == ["start"]
    assert thing.events == ["start", "stop"]
    inner = Thing()
    with pytest.raises(ValueError), inner:
        raise ValueError("boom")
    assert inner.events == ["start", "stop"]


def test_a_failed_start_is_stopped_and_raises() -> None:
    thing = Thing(fail=True)
    with pytest.raises(OSError, match="half made"), thing:
        pytest.fail("the body never runs")
    assert thing.events == ["start", "stop"]


class Interrupted(Started):
    """A start stopped by a signal, whose stop then fails on what the start left half-done."""

    def start(self) -> None:
        raise KeyboardInterrupt

    def stop(self) -> None:
        raise RuntimeError("cannot join thread before it is started")


def test_a_failing_stop_never_hides_why_the_start_failed(caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(KeyboardInterrupt), Interrupted():
        pytest.fail("the body never runs")
    assert "Interrupted: stopping after a failed start (KeyboardInterrupt) failed too: cannot join thread" \
        in caplog.text
