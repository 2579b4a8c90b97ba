"""--integration without test names leaves out, with a warning, the tests that cannot run here."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from vsperf.errors import ConfigError
from vsperf.run.leave_out import checked, leave_out


def attempt(items: Sequence[str]) -> list[str]:
    for item in items:
        if item.startswith("bad"):
            raise ConfigError(f"{item} needs NICS")
    return [i.upper() for i in items]


def test_tolerant_leaves_out_and_warns(caplog: pytest.LogCaptureFixture) -> None:
    assert leave_out(["a", "bad1", "b"], attempt, str, tolerant=True, what="its settings cannot run") == ["A", "B"]
    assert "left out bad1: its settings cannot run (bad1 needs NICS)" in caplog.text


def test_strict_or_nothing_left_raises() -> None:
    with pytest.raises(ConfigError, match="bad1 needs NICS"):
        leave_out(["a", "bad1"], attempt, str, tolerant=False, what="x")
    with pytest.raises(ConfigError, match="bad1 needs NICS"):
        leave_out(["bad1", "bad2"], attempt, str, tolerant=True, what="x")


def test_a_check_as_an_attempt() -> None:
    def check(items: Sequence[str]) -> None:
        if "x" in items:
            raise ConfigError("no x")
    assert leave_out(["a", "x"], checked(check), str, tolerant=True, what="w") == ["a"]
