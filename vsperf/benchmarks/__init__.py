"""The seeds' other benchmarks as traffic types: measurements that run their own programs
between the deployment's two endpoints instead of driving the traffic generator.

`BENCHMARKS` maps a traffic type to its benchmark; vsperf.run.kinds runs them from the
same table as the RFC 2544 searches, and the runner leaves the traffic generator's ports alone
for them (its receive programs would take the benchmark's packets).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from vsperf.benchmarks.env import BenchEnv, Benchmark, Endpoint
from vsperf.benchmarks.iperf import check_iperf, run_iperf_tcp, run_iperf_udp
from vsperf.benchmarks.sweep import sweep_bw, sweep_config_from_settings, sweep_latency
from vsperf.benchmarks.udploss import run_udp_loss
from vsperf.benchmarks.udploss.rows import rows_from_settings
from vsperf.search.measurer import Measurer
from vsperf.search.outcome import SearchOutcome
from vsperf.search.trials import OnTrial
from vsperf.traffic import Traffic

BENCHMARKS: Mapping[str, Benchmark] = {
    "udp_msg_loss": run_udp_loss,
    "iperf3_tcp": run_iperf_tcp,
    "iperf3_udp": run_iperf_udp,
}

# Benchmarks that drive the run's traffic generator (seeds/003's sweeps), through its trials.
GeneratorBenchmark = Callable[[Measurer, BenchEnv, Traffic, Mapping[str, Any], OnTrial | None], SearchOutcome]
GENERATOR_BENCHMARKS: Mapping[str, GeneratorBenchmark] = {
    "sweep_bw": sweep_bw,
    "sweep_latency": sweep_latency,
}

# The metric the run summary shows per benchmark traffic type.
HEADLINE_KEYS: Mapping[str, str] = {
    "sweep_bw": "rx_tester_mpps_max",
    "sweep_latency": "latency_p99_us",
    "udp_msg_loss": "frame_loss_percent",
    "iperf3_tcp": "receiver_mbps",
    "iperf3_udp": "receiver_mbps",
}

# What the report names as the "traffic generator" of a benchmark: its programs.
TOOLS: Mapping[str, str] = {
    "udp_msg_loss": "udp_msg_sender/udp_msg_receiver (vsperf)",
    "iperf3_tcp": "iperf3",
    "iperf3_udp": "iperf3",
}


def is_benchmark(traffic_type: str) -> bool:
    """True when `traffic_type` is one of the seeds' benchmarks rather than an RFC test."""
    return traffic_type in BENCHMARKS or traffic_type in GENERATOR_BENCHMARKS


def runs_own_programs(traffic_type: str) -> bool:
    """True for the benchmarks that run their own programs: the generator stays off the ports."""
    return traffic_type in BENCHMARKS


def check_benchmark(traffic_type: str, settings: Mapping[str, Any]) -> None:
    """Raise the UserError a benchmark would meet (a missing tool or library, an invalid row)
    before anything is deployed; nothing for other traffic types."""
    if traffic_type == "udp_msg_loss":
        rows_from_settings(settings)
    elif traffic_type in ("iperf3_tcp", "iperf3_udp"):
        check_iperf(settings)
    elif traffic_type in GENERATOR_BENCHMARKS:
        sweep_config_from_settings(settings)


def run_benchmark(env: BenchEnv, traffic: Traffic, settings: Mapping[str, Any], measurer: Measurer,
                  on_trial: OnTrial | None = None) -> SearchOutcome:
    """Run the benchmark of `traffic.traffic_type`; its metrics carry VSPERF's `type` key."""
    kind = traffic.traffic_type
    if kind in GENERATOR_BENCHMARKS:
        outcome = GENERATOR_BENCHMARKS[kind](measurer, env, traffic, settings, on_trial)
    else:
        outcome = BENCHMARKS[kind](env, traffic, settings)
    return replace(outcome, metrics={"type": traffic.traffic_type, **outcome.metrics})


__all__ = [
    "BENCHMARKS", "GENERATOR_BENCHMARKS", "HEADLINE_KEYS", "TOOLS", "BenchEnv", "Endpoint", "check_benchmark",
    "is_benchmark", "run_benchmark", "runs_own_programs",
]
