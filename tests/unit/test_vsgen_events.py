"""Reset gap and recovery time from the engine's evidence (vsperf.trafficgen.vsgen.events), and the
protocol's two-rate runs and receive times."""

from __future__ import annotations

from typing import Any

import pytest

from vsperf.traffic import Traffic
from vsperf.trafficgen.vsgen.events import PhaseCounts, last_loss_after_drop_s, phase_trial, phases, reset_gap
from vsperf.trafficgen.vsgen.protocol import RunRequest, RunResult, parse_result

T0 = 5_000_000_000  # CLOCK_MONOTONIC ns of the first frame


def run(dirs: list[dict[str, Any]], ports: list[dict[str, Any]]) -> RunResult:
    full_dirs = []
    for d in dirs:
        base = {"dir": 0, "tx_port": 0, "rx_port": 1, "path": "xdp-live", "ring_drops": 0, "streams": 1,
                "requested_fps": 1000.0, "frames_requested": 3000, "tx": 3000, "tx_time_s": 3.0,
                "achieved_fps": 1000.0, "cpu_s": 0.0, "rx": 3000, "dup": 0, "reorder": 0, "lost": 0,
                "excess": 0, "streams_with_loss": 0, "max_stream_loss": 0, "t_start_ns": T0}
        full_dirs.append({**base, **d})
    full_ports = []
    for p in ports:
        base = {"port": 1, "rx_mode": "native", "frames": 0, "dup": 0, "reorder": 0, "late": 0, "stale": 0,
                "foreign": 0, "other": 0, "tagged": 0, "lat_sum_ns": 0, "lat_min_ns": 0, "lat_max_ns": 0,
                "hist": []}
        full_ports.append({**base, **p})
    return parse_result({"ev": "result", "mode": "rate", "trial_tag": 1, "elapsed_s": 3.2, "cpu_s": 0.1,
                         "residual_s": 0.2, "stopped_by": "done", "dirs": full_dirs, "ports": full_ports})


def test_the_gap_around_a_reset_is_the_longest_silence() -> None:
    result = run([{"rx": 2900}], [{"first_ns": T0 + 50_000, "last_ns": T0 + 2_999_050_000,
                                   "gap_max_ns": 100_000_000, "gap_end_ns": T0 + 1_100_000_000}])
    gap = reset_gap(result, T0 + 1_000_000_000)
    assert gap.gap_s == pytest.approx(0.1)
    assert gap.recovered
    assert gap.reset_at_s == pytest.approx(1.0)


def test_a_dut_that_never_came_back_gives_a_lower_bound() -> None:
    result = run([{"rx": 1000}], [{"first_ns": T0 + 50_000, "last_ns": T0 + 999_050_000,
                                   "gap_max_ns": 1_100_000, "gap_end_ns": T0 + 500_000_000}])
    gap = reset_gap(result, T0 + 1_000_000_000)
    assert not gap.recovered
    assert gap.gap_s == pytest.approx(3.0 - 0.99905)


def test_nothing_received_is_silence_over_the_whole_stream() -> None:
    gap = reset_gap(run([{"rx": 0}], [{}]), T0 + 1_000_000_000)
    assert not gap.recovered and gap.gap_s == pytest.approx(3.0)


def test_the_longest_silence_of_any_direction_counts() -> None:
    result = run([{"dir": 0, "tx_port": 0, "rx_port": 1}, {"dir": 1, "tx_port": 1, "rx_port": 0}],
                 [{"port": 0, "last_ns": T0 + 2_999_000_000, "gap_max_ns": 7_000_000},
                  {"port": 1, "last_ns": T0 + 2_999_000_000, "gap_max_ns": 5_000_000}])
    assert reset_gap(result, T0 + 1_000_000_000).gap_s == pytest.approx(0.007)


def test_phases_split_the_counters_at_the_rate_change() -> None:
    result = run([{"tx": 3000, "tx1": 2000, "rx": 2500, "dup": 0, "rx2": 990, "rate2_fps": 1000.0,
                   "frames2_requested": 1000, "t_drop_s": 2.0, "tx_time_s": 3.0, "last_lost": 2009}], [{}])
    before, after = phases(result.dirs[0])
    assert (before.tx_frames, before.rx_frames, before.duration_s) == (2000, 1510, 2.0)
    assert (after.tx_frames, after.rx_frames) == (1000, 990) and after.duration_s == pytest.approx(1.0)
    # Frame 2009 is the 10th after the change at 1000 frames/s: sent 9 ms after it.
    assert last_loss_after_drop_s(result.dirs[0]) == pytest.approx(0.009)


@pytest.mark.parametrize("last_lost", [-1, 0, 1999])
def test_no_loss_after_the_change_is_a_zero_recovery_time(last_lost: int) -> None:
    result = run([{"tx1": 2000, "rate2_fps": 1000.0, "t_drop_s": 2.0, "last_lost": last_lost}], [{}])
    assert last_loss_after_drop_s(result.dirs[0]) == 0.0


def test_results_without_the_new_fields_still_parse() -> None:
    d = run([{}], [{}]).dirs[0]
    assert (d.tx1_frames, d.last_lost_index, d.rx2_frames, d.rate2_fps) == (3000, -1, 0, 0.0)


def test_a_two_rate_run_command() -> None:
    request = RunRequest(mode="rate", dirs=(0,), rate_fps=2000.0, frames=(2000,), rate2_fps=1000.0, frames2=500)
    assert request.command().endswith("rate2=1000.000000 frames2=500")
    assert "rate2" not in RunRequest(mode="rate", dirs=(0,), rate_fps=1.0, frames=(1,)).command()
    with pytest.raises(ValueError, match="together"):
        RunRequest(mode="rate", dirs=(0,), rate_fps=1.0, frames=(1,), rate2_fps=1.0)
    with pytest.raises(ValueError, match="rate run"):
        RunRequest(mode="burst", dirs=(0,), frames=(1,), rate2_fps=1.0, frames2=1)


def test_a_phase_of_every_direction_is_one_trial() -> None:
    trial = phase_trial(Traffic(), 2000.0, 1.0, [PhaseCounts(1000, 990, 1.0), PhaseCounts(1000, 1000, 1.0)])
    assert (trial.tx_frames, trial.rx_frames, trial.actual_tx_rate_fps) == (2000, 1990, 2000.0)
    assert not trial.under_delivered
