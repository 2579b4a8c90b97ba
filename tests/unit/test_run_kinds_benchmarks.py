"""The seeds' benchmarks through the one dispatch table, and their settings' validation."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from settings_util import run_from_settings

from vsperf.benchmarks.env import BenchEnv
from vsperf.config import Settings
from vsperf.config.loader import load_settings
from vsperf.errors import ConfigError, PrerequisiteError
from vsperf.executor import LocalExecutor
from vsperf.run.kinds import TRAFFIC_KINDS, configure_traffic
from vsperf.traffic import Traffic


class _NoMeasurer:
    """A benchmark must not touch the traffic generator."""

    def trial(self, *args: object) -> None:
        raise AssertionError("trial called")

    def burst(self, *args: object) -> None:
        raise AssertionError("burst called")


def check_benchmark(traffic_type: str, settings: Settings) -> None:
    configure_traffic(Traffic(traffic_type=traffic_type), settings)  # type: ignore[arg-type]


def test_the_benchmarks_in_the_table_of_traffic_types() -> None:
    own = {name: kind.tool for name, kind in TRAFFIC_KINDS.items() if kind.benchmark}
    assert own == {"sweep_bw": None, "sweep_latency": None, "udp_msg_loss": "udp_msg_sender/udp_msg_receiver (vsperf)",
                   "iperf3_tcp": "iperf3", "iperf3_udp": "iperf3"}


def test_a_benchmark_needs_its_endpoints() -> None:
    with pytest.raises(ConfigError, match="needs the run's endpoints"):
        run_from_settings(_NoMeasurer(), Traffic(traffic_type="udp_msg_loss"), load_settings(env={}))  # type: ignore[arg-type]


@pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 missing: apt-get install iperf3")
def test_iperf3_tcp_on_loopback_through_dispatch(tmp_path: Path) -> None:
    settings = load_settings(env={}, test_params="IPERF_DURATION_S=1;IPERF_PORT=47291")
    env = BenchEnv(LocalExecutor(), tmp_path)
    out = run_from_settings(_NoMeasurer(), Traffic(traffic_type="iperf3_tcp"), settings, bench=env)  # type: ignore[arg-type]
    assert out.metrics["type"] == "iperf3_tcp"
    assert isinstance(out.metrics["receiver_mbps"], float) and out.metrics["receiver_mbps"] > 0
    assert out.details["path"] == "loopback" and [r["stack"] for r in out.details["runs"]] == ["kernel"]
    assert out.details["runs"][0]["per_second"], "per-interval rows"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ("UDPLOSS_RECEIVER_SCHED=RR", "UDPLOSS_RECEIVER_PRIORITY must be 1..99 with UDPLOSS_RECEIVER_SCHED RR"),
        ("UDPLOSS_SENDER_PRIORITY=5", "UDPLOSS_SENDER_PRIORITY must be 0 with UDPLOSS_SENDER_SCHED OTHER"),
        ("UDPLOSS_PAYLOAD_BYTES=1501", "UDPLOSS_PAYLOAD_BYTES"),
        ("UDPLOSS_METHOD=poll", "UDPLOSS_METHOD"),
    ],
)
def test_invalid_settings_are_refused_when_loaded(params: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings(env={}, test_params=params)


def test_rows_and_missing_tools_are_checked_before_a_run() -> None:
    rows = "UDPLOSS_ROWS=[{'sender_sched': 'FIFO', 'sender_priority': 0, 'receiver_sched': 'OTHER', " \
           "'receiver_priority': 0, 'rcvbuf_bytes': 0, 'payload_bytes': 64, 'messages': 10, 'connected': False, " \
           "'method': 'select'}]"
    with pytest.raises(ConfigError, match=r"sender priority must be 1\.\.99 with scheduler FIFO"):
        check_benchmark("udp_msg_loss", load_settings(env={}, test_params=rows))
    with pytest.raises(PrerequisiteError, match="apt-get install iperf3"):
        check_benchmark("iperf3_udp", load_settings(env={}, test_params="IPERF_BINARY=/nonexistent/iperf3"))
    check_benchmark("rfc2544_throughput", load_settings(env={}))  # nothing to check
