"""VSPERF's --mode values besides normal (vsperf.cli.modes): the one test of --mode trafficgen,
VSPERF's result.csv, and the hold of trafficgen-off/-pause until Enter or SIGTERM. The modes
end to end, through the command: tests/unit/test_cli_vsperf_options.py."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from vsperf.cli.modes import (
    HOLDS,
    MODES,
    VSPERF_RESULT_CSV,
    hold_until_enter_or_sigterm,
    trafficgen_mode_test,
    write_trafficgen_csv,
)
from vsperf.config import load_settings
from vsperf.signals import stop_signals_raise


def test_modes_are_vsperfs_and_two_of_them_hold() -> None:
    assert MODES == ("normal", "trafficgen", "trafficgen-off", "trafficgen-pause")
    assert HOLDS == {"trafficgen-off": "off", "trafficgen-pause": "pause"}


def test_mode_trafficgen_sends_the_traffic_setting_at_its_l2_framesize() -> None:
    settings = load_settings(env={}, test_params="TRAFFIC={'l2': {'framesize': 512}}")
    test = trafficgen_mode_test(settings)
    assert (test.name, test.deployment) == ("trafficgen", "p2p")
    assert test.parameters == {"TRAFFICGEN_PKT_SIZES": [512]}


def test_vsperfs_result_csv_is_the_trafficgen_tests_csv(tmp_path: Path) -> None:
    assert write_trafficgen_csv(tmp_path) is None  # nothing measured: nothing written
    assert not (tmp_path / VSPERF_RESULT_CSV).exists()
    (tmp_path / "result_0_trafficgen_p2p.csv").write_text("type,packet_size\nrfc2544_throughput,512\n")
    (tmp_path / "result_1_phy2phy_tput_p2p.csv").write_text("other\n")
    written = write_trafficgen_csv(tmp_path)
    assert written == tmp_path / VSPERF_RESULT_CSV
    assert written.read_text() == "type,packet_size\nrfc2544_throughput,512\n"


def test_a_hold_without_a_terminal_ends_at_sigterm(capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", None)  # no terminal: only SIGTERM can end the wait
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM))
    with stop_signals_raise():  # as in the runner, where SIGTERM raises Terminated
        timer.start()
        hold_until_enter_or_sigterm("p2p is deployed")
    err = capsys.readouterr().err.splitlines()
    assert err == ["p2p is deployed", "Send SIGTERM to continue...", "vsperf: SIGTERM received: going on"]
