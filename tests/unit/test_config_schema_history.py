"""The results store's settings (conf/12_history.yaml): defaults, and no password in HISTORY_DB."""

from __future__ import annotations

import pytest

from vsperf.config import load_settings
from vsperf.errors import ConfigError


def test_defaults() -> None:
    settings = load_settings(None, env={})
    assert settings["HISTORY"] is True and settings["HISTORY_DB"] == ""
    assert settings["HISTORY_TAGS"] == {} and settings["HISTORY_TREND_RUNS"] == 50
    assert settings["HISTORY_METRICS"][0] == "throughput_rx_fps" and settings["HISTORY_REPORT_URL"] == ""


def test_a_postgresql_url_without_password_is_taken() -> None:
    settings = load_settings(None, env={}, test_params="HISTORY_DB='postgresql://lab@db:5432/vsperf'")
    assert settings["HISTORY_DB"] == "postgresql://lab@db:5432/vsperf"


def test_a_password_is_refused_and_never_echoed() -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(None, env={}, test_params="HISTORY_DB='postgresql://lab:pa55word@db/vsperf'")
    assert "pa55word" not in str(caught.value) and "PGPASSWORD" in str(caught.value)


def test_the_trend_window_is_bounded() -> None:
    with pytest.raises(ConfigError, match="HISTORY_TREND_RUNS"):
        load_settings(None, env={}, test_params="HISTORY_TREND_RUNS=2")
