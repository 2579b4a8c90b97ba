"""seeds/003 sweeps on a fake generator and fake DUT counters: points, units, latency percentiles."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from vsperf.benchmarks.env import BenchEnv
from vsperf.benchmarks.sweep import SweepConfig, sweep_bw, sweep_latency
from vsperf.benchmarks.tables import csv_tables, seed_tables
from vsperf.errors import ConfigError
from vsperf.search.measurer import LatencyStats, TrialResult
from vsperf.traffic import Traffic

SETTINGS = {"SWEEP_FLOWS": [1, 8], "SWEEP_DURATION_S": 2.0, "SWEEP_RATE_PERCENT": 50.0,
            "SWEEP_LATENCY_RATE_PERCENT": 1.0}


class FakeGenerator:
    """Receives `rx_per_flow_fps * flows` (capped) frames/s; records what it was asked."""

    def __init__(self, dut: FakeDutCounters | None = None) -> None:
        self.asked: list[tuple[int, float, float]] = []
        self.dut = dut

    def trial(self, traffic: Traffic, rate_fps: float, duration_s: float) -> TrialResult:
        self.asked.append((traffic.multistream, rate_fps, duration_s))
        rx = int(min(rate_fps, 100_000 * traffic.streams) * duration_s)
        if self.dut:
            self.dut.rx += rx + 10  # the DUT saw a few more than reached the tester
        latency = LatencyStats(1e3, 2e3, 9e3, {"p50": 2e3, "p90": 4e3, "p99": 8e3}, samples=rx)
        return TrialResult("rate", traffic.frame_size_bytes, rate_fps, duration_s, int(rate_fps * duration_s), rx,
                           rate_fps, traffic.line_rate_fps, latency=latency)

    def burst(self, traffic: Traffic, frames: int) -> TrialResult:
        raise AssertionError("no bursts in a sweep")


class FakeDutCounters:
    """An executor answering `ip -s -j link show` for the DUT ports and `ls` of their queues."""

    def __init__(self) -> None:
        self.rx = 0

    def run(self, argv: Sequence[str], *, netns: str | None = None, check: bool = True,
            timeout_s: float | None = 60.0, env: Mapping[str, str] | None = None,
            input_text: str | None = None) -> subprocess.CompletedProcess[str]:
        if argv[0] == "ls":
            return subprocess.CompletedProcess(list(argv), 0, "rx-0\nrx-1\ntx-0\ntx-1\n", "")
        stats = {"rx": {"packets": self.rx // 2, "bytes": 0, "dropped": 0, "errors": 0},
                 "tx": {"packets": 0, "bytes": 0, "dropped": 0, "errors": 0}}
        return subprocess.CompletedProcess(list(argv), 0, json.dumps([{"ifname": argv[-1], "stats64": stats}]), "")

    def spawn(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("nothing to spawn")


def test_one_point_per_flow_count_at_the_configured_rate(tmp_path: Path) -> None:
    gen = FakeGenerator()
    traffic = Traffic(traffic_type="sweep_bw", frame_size_bytes=64, bidir=False)
    out = sweep_bw(gen, BenchEnv(FakeDutCounters(), tmp_path), traffic, SweepConfig.from_settings(SETTINGS))  # type: ignore[arg-type]
    assert [a[0] for a in gen.asked] == [1, 8]
    assert gen.asked[0][1] == pytest.approx(traffic.line_rate_fps * 0.5) and gen.asked[0][2] == 2.0
    one, eight = out.details["points"]
    assert one["rx_tester_mpps"] == pytest.approx(0.1) and eight["rx_tester_mpps"] == pytest.approx(0.8)
    assert one["rx_tester_gbps"] == pytest.approx(0.1e6 * 84 * 8 / 1e9)  # frame + preamble and gap
    assert one["rx_dut_mpps"] is None and one["direction"] == "Tester => DUT"  # no DUT ports given
    assert out.metrics["rx_tester_mpps_max"] == pytest.approx(0.8) and out.metrics["flows_at_max"] == 8
    assert [t.purpose for t in out.trials] == ["sweep: 1 flow(s)", "sweep: 8 flow(s)"]


def test_the_dut_count_comes_from_its_own_ports(tmp_path: Path) -> None:
    dut = FakeDutCounters()
    env = BenchEnv(dut, tmp_path, dut_ports=(("sw", "p0"), ("sw", "p1")))  # type: ignore[arg-type]
    traffic = Traffic(traffic_type="sweep_bw", frame_size_bytes=1500, bidir=True)
    out = sweep_bw(FakeGenerator(dut), env, traffic, SweepConfig.from_settings({**SETTINGS, "SWEEP_FLOWS": [1]}))
    (point,) = out.details["points"]
    assert point["rx_dut_mpps"] == pytest.approx((0.1e6 * 2 + 10) / 2 / 1e6)
    assert point["direction"] == "Tester <=> DUT" and point["queues"] == "2 / n/a"
    (table,) = seed_tables(out.details)
    assert table.header[3] == "Tx queues DUT / Tester" and table.rows[0][:3] == ("Tester <=> DUT", 1500, 1)
    (points_csv,) = csv_tables(out.details)
    assert "rx_dut_mpps" in points_csv.header and "flags" not in points_csv.header


def test_latency_reports_p50_p90_p99_in_microseconds_and_loss(tmp_path: Path) -> None:
    traffic = Traffic(traffic_type="sweep_latency", frame_size_bytes=64, bidir=False)
    settings = {**SETTINGS, "SWEEP_LATENCY_RATE_PERCENT": 0.5}  # below what the fake forwards: no loss
    out = sweep_latency(FakeGenerator(), BenchEnv(FakeDutCounters(), tmp_path), traffic,
                        SweepConfig.from_settings(settings))  # type: ignore[arg-type]
    assert (out.metrics["latency_p50_us"], out.metrics["latency_p90_us"], out.metrics["latency_p99_us"]) == (
        2.0, 4.0, 8.0)
    assert out.metrics["frame_loss_percent"] == pytest.approx(0.0)
    (table,) = seed_tables(out.details)
    assert table.header == ("size", "p50, us", "p90, us", "p99, us", "pkt loss, %")
    assert table.rows[0] == (64, "2.0", "4.0", "8.0", "0.000")


@pytest.mark.parametrize("bad", [{"SWEEP_FLOWS": []}, {"SWEEP_FLOWS": [0]}, {"SWEEP_RATE_PERCENT": 0.0}])
def test_invalid_sweeps_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        SweepConfig.from_settings({**SETTINGS, **bad})
