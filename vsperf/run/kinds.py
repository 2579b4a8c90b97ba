"""Every traffic type in one table: how its configuration is built and how it runs.

`TRAFFIC_KINDS` maps each traffic type (the `TrafficType` literal of vsperf.traffic, the schema's
list of valid types) to its `TrafficKind`. `configure_traffic` builds, and so validates, what a
test will use before anything is deployed (vsperf.run.plan calls it for every test and frame size);
`run_traffic` is the one entry point the runner calls, with the same configuration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, get_args

from vsperf.benchmarks import BENCHMARKS, GENERATOR_BENCHMARKS, BenchEnv, check_benchmark, run_benchmark
from vsperf.errors import ConfigError
from vsperf.search.at_throughput import AtThroughputTest
from vsperf.search.back2back import rfc2544_back2back
from vsperf.search.config import (
    back2back_config_from_settings,
    burst_config_from_settings,
    continuous_config_from_settings,
)
from vsperf.search.continuous import burst, rfc2544_continuous
from vsperf.search.frame_loss import frame_loss_config_from_settings, rfc2544_frame_loss
from vsperf.search.goal_config import known_throughput_percent
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
from vsperf.search.validate import check_loss_rates, throughput_search_config
from vsperf.traffic import Traffic, TrafficType

Settings = Mapping[str, Any]


@dataclass(frozen=True)
class Job:
    """What one traffic phase runs with (see `run_traffic`)."""

    measurer: Measurer
    traffic: Traffic
    settings: Settings
    on_trial: OnTrial | None
    throughput_fps: float | None  # throughput measured earlier in the run, if any
    dut: DutControl | None  # restart / forget-addresses control of the DUT, if the deployment has one
    bench: BenchEnv | None  # endpoints of the seeds' benchmarks, if the deployment has them

    def known_throughput(self) -> KnownThroughput:
        """The throughput a dependent test uses: given, configured, or measured first."""
        return throughput_for(self.measurer, self.traffic, self.settings, self.on_trial, self.throughput_fps)


@dataclass(frozen=True)
class TrafficKind:
    """A traffic type: `configure` builds (and validates) its configuration from the settings and
    the traffic, `run` runs it with that configuration. `needs_throughput`: the test uses a
    throughput, measured first with TRAFFICGEN_SEARCH unless it is given."""

    configure: Callable[[Settings, Traffic], Any]
    run: Callable[[Job, Any], SearchOutcome]
    needs_throughput: bool = False


def _benchmark(kind: str) -> TrafficKind:
    def configure(settings: Settings, traffic: Traffic) -> None:
        check_benchmark(kind, settings)

    def run(job: Job, _cfg: None) -> SearchOutcome:
        if job.bench is None:
            raise ConfigError(f"traffic_type {kind} runs its own programs and needs the run's endpoints")
        return run_benchmark(job.bench, job.traffic, job.settings, job.measurer, job.on_trial)

    return TrafficKind(configure, run)


ConfigFromSettings = Callable[[Settings], Any]
Search = Callable[[Measurer, Traffic, Any, OnTrial | None], SearchOutcome]
SearchWithDut = Callable[[Measurer, Traffic, Any, OnTrial | None, DutControl | None], SearchOutcome]


def _search(configure: ConfigFromSettings, search: Search) -> TrafficKind:
    """A search configured from the settings alone that runs with its config and `on_trial`."""
    return TrafficKind(
        lambda s, _t: configure(s), lambda job, cfg: search(job.measurer, job.traffic, cfg, job.on_trial)
    )


def _search_with_dut(configure: ConfigFromSettings, search: SearchWithDut) -> TrafficKind:
    """As `_search`, for a search that also controls the DUT."""
    return TrafficKind(
        lambda s, _t: configure(s), lambda job, cfg: search(job.measurer, job.traffic, cfg, job.on_trial, job.dut)
    )


def _at_throughput(configure: ConfigFromSettings, search: AtThroughputTest[Any, Any]) -> TrafficKind:
    """As `_search_with_dut`, for a test run at the throughput (given, configured, or measured first)."""
    return TrafficKind(
        lambda s, _t: configure(s),
        lambda job, cfg: search(job.measurer, job.traffic, cfg, job.known_throughput, job.on_trial, job.dut),
        needs_throughput=True,
    )


TRAFFIC_KINDS: dict[str, TrafficKind] = {
    "rfc2544_throughput": TrafficKind(
        lambda s, t: throughput_search_config(s),
        lambda job, _cfg: run_throughput(job.measurer, job.traffic, job.settings, job.on_trial),
    ),
    "rfc2544_back2back": TrafficKind(
        lambda s, t: back2back_config_from_settings(s),
        lambda job, cfg: rfc2544_back2back(
            job.measurer, job.traffic, cfg, job.on_trial, throughput_fps=job.throughput_fps
        ),
    ),
    "rfc2544_continuous": TrafficKind(
        continuous_config_from_settings,
        lambda job, cfg: rfc2544_continuous(job.measurer, job.traffic, cfg, job.on_trial),
    ),
    "burst": TrafficKind(
        lambda s, t: burst_config_from_settings(t),
        lambda job, cfg: burst(job.measurer, job.traffic, cfg.frames, job.on_trial),
    ),
    "rfc2544_latency": _at_throughput(latency_config_from_settings, rfc2544_latency),
    "rfc2544_frame_loss": _search(frame_loss_config_from_settings, rfc2544_frame_loss),
    "rfc2544_recovery": _at_throughput(recovery_config_from_settings, rfc2544_recovery),
    "rfc2544_reset": _at_throughput(reset_config_from_settings, rfc2544_reset),
    "rfc9004_back2back": _at_throughput(rfc9004_config_from_settings, rfc9004_back2back),
    "rfc2889_forwarding": _search(forwarding_config_from_settings, rfc2889_forwarding),
    "rfc2889_caching": _search_with_dut(address_config_from_settings, rfc2889_caching),
    "rfc2889_learning": _search_with_dut(address_config_from_settings, rfc2889_learning),
    **{kind: _benchmark(kind) for kind in (*BENCHMARKS, *GENERATOR_BENCHMARKS)},
}

TRAFFIC_TYPES: tuple[str, ...] = get_args(TrafficType)  # every traffic type a test may ask for


def traffic_kind(traffic_type: str) -> TrafficKind:
    """The table entry of `traffic_type`; ConfigError naming the valid types otherwise."""
    try:
        return TRAFFIC_KINDS[traffic_type]
    except KeyError:
        raise ConfigError(f"unknown traffic_type {traffic_type!r}; valid: {', '.join(TRAFFIC_TYPES)}") from None


def configure_traffic(traffic: Traffic, settings: Settings) -> tuple[Any, ...]:
    """Build every configuration a test of `traffic` uses (its own, then the throughput search
    it may run first), raising a one-line ConfigError naming the first bad setting."""
    kind = traffic_kind(traffic.traffic_type)
    check_loss_rates(settings)
    configs = [kind.configure(settings, traffic)]
    if kind.needs_throughput and known_throughput_percent(settings) is None:
        configs.append(throughput_search_config(settings))
    return tuple(configs)


def run_traffic(
    measurer: Measurer,
    traffic: Traffic,
    settings: Settings,
    on_trial: OnTrial | None = None,
    *,
    throughput_fps: float | None = None,
    dut: DutControl | None = None,
    bench: BenchEnv | None = None,
) -> SearchOutcome:
    """Run what `traffic.traffic_type` asks for, configured from `settings`.

    The configuration is built (and validated) from the settings before the first trial.
    `on_trial` is called after every trial. `throughput_fps`, when known (e.g. from an earlier
    throughput test of the run), is the throughput that back-to-back (RFC 9004's corrected buffer
    time), latency, recovery and reset use; without it they take TRAFFICGEN_THROUGHPUT_PERCENT or
    measure it first with the TRAFFICGEN_SEARCH algorithm. `dut` lets rfc2544_reset restart the
    DUT and the RFC 2889 address tests make it forget learned addresses. `bench` is where the
    seeds' benchmarks (udp_msg_loss, iperf3_*: vsperf.benchmarks) run their own programs.
    """
    kind = traffic_kind(traffic.traffic_type)
    cfg = kind.configure(settings, traffic)
    return kind.run(Job(measurer, traffic, settings, on_trial, throughput_fps, dut, bench), cfg)
