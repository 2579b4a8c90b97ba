"""Choose and run the search for a traffic type: the one entry point the runner calls."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_args

from vsperf.benchmarks import BenchEnv, is_benchmark, run_benchmark
from vsperf.errors import ConfigError
from vsperf.search.back2back import rfc2544_back2back
from vsperf.search.config import (
    back2back_config_from_settings,
    burst_config_from_settings,
    continuous_config_from_settings,
)
from vsperf.search.continuous import burst, rfc2544_continuous
from vsperf.search.frame_loss import frame_loss_config_from_settings, rfc2544_frame_loss
from vsperf.search.latency import latency_config_from_settings, rfc2544_latency
from vsperf.search.measurer import DutControl, Measurer
from vsperf.search.outcome import SearchOutcome
from vsperf.search.recovery import recovery_config_from_settings, rfc2544_recovery
from vsperf.search.reset import reset_config_from_settings, rfc2544_reset
from vsperf.search.rfc2889 import (
    address_config_from_settings,
    forwarding_config_from_settings,
    rfc2889_caching,
    rfc2889_forwarding,
    rfc2889_learning,
)
from vsperf.search.rfc9004 import rfc9004_back2back, rfc9004_config_from_settings
from vsperf.search.select import KnownThroughput, run_throughput, throughput_for
from vsperf.search.trials import OnTrial
from vsperf.traffic import Traffic, TrafficType

TRAFFIC_TYPES: tuple[str, ...] = get_args(TrafficType)  # every traffic type a test may ask for


def run_traffic(
    measurer: Measurer,
    traffic: Traffic,
    settings: Mapping[str, Any],
    on_trial: OnTrial | None = None,
    *,
    throughput_fps: float | None = None,
    dut: DutControl | None = None,
    bench: BenchEnv | None = None,
) -> SearchOutcome:
    """Run what `traffic.traffic_type` asks for, configured from `settings`.

    The search configuration is built (and validated) from the settings before the first trial.
    `on_trial` is called after every trial. `throughput_fps`, when known (e.g. from an earlier
    throughput test of the run), is the throughput that back-to-back (RFC 9004's corrected buffer
    time), latency, recovery and reset use; without it they take TRAFFICGEN_THROUGHPUT_PERCENT or
    measure it first with the TRAFFICGEN_SEARCH algorithm. `dut` lets rfc2544_reset restart the
    DUT and the RFC 2889 address tests make it forget learned addresses. `bench` is where the
    seeds' benchmarks (udp_msg_loss, iperf3_*: vsperf.benchmarks) run their own programs; they
    use no measurer.
    """
    kind = traffic.traffic_type
    if is_benchmark(kind):
        if bench is None:
            raise ConfigError(f"traffic_type {kind} runs its own programs and needs the run's endpoints")
        return run_benchmark(bench, traffic, settings, measurer, on_trial)
    if kind == "rfc2544_throughput":
        return run_throughput(measurer, traffic, settings, on_trial)
    if kind == "rfc2544_back2back":
        b2b_cfg = back2back_config_from_settings(settings)
        return rfc2544_back2back(measurer, traffic, b2b_cfg, on_trial, throughput_fps=throughput_fps)
    if kind == "rfc2544_continuous":
        cont_cfg = continuous_config_from_settings(settings, traffic)
        return rfc2544_continuous(measurer, traffic, cont_cfg, on_trial)
    if kind == "burst":
        return burst(measurer, traffic, burst_config_from_settings(traffic).frames, on_trial)

    def known() -> KnownThroughput:
        return throughput_for(measurer, traffic, settings, on_trial, throughput_fps)

    if kind == "rfc2544_latency":
        return rfc2544_latency(measurer, traffic, latency_config_from_settings(settings), known, on_trial)
    if kind == "rfc2544_frame_loss":
        return rfc2544_frame_loss(measurer, traffic, frame_loss_config_from_settings(settings), on_trial)
    if kind == "rfc2544_recovery":
        return rfc2544_recovery(measurer, traffic, recovery_config_from_settings(settings), known, on_trial)
    if kind == "rfc2544_reset":
        return rfc2544_reset(measurer, traffic, reset_config_from_settings(settings), known, on_trial, dut)
    if kind == "rfc9004_back2back":
        return rfc9004_back2back(measurer, traffic, rfc9004_config_from_settings(settings), known, on_trial)
    if kind == "rfc2889_forwarding":
        return rfc2889_forwarding(measurer, traffic, forwarding_config_from_settings(settings), on_trial)
    if kind == "rfc2889_caching":
        return rfc2889_caching(measurer, traffic, address_config_from_settings(settings), on_trial, dut)
    if kind == "rfc2889_learning":
        return rfc2889_learning(measurer, traffic, address_config_from_settings(settings), on_trial, dut)
    raise ConfigError(f"unknown traffic_type {kind!r}; valid: {', '.join(TRAFFIC_TYPES)}")
